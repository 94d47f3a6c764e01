// The recipes' argument checks: paths and the election's options (BADARGUMENTS, naming the first bad one).
import { ZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { type ElectionProtocol, type Naming, electionNaming } from "./naming.ts";

/** Throws BADARGUMENTS unless `path` is an absolute znode path (not "/", no trailing "/"). */
export function checkRecipePath(path: unknown, what: string, op: string): asserts path is string {
  if (typeof path !== "string" || !path.startsWith("/") || path.length < 2 || path.endsWith("/")) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `the ${what} path must be an absolute znode path`, { op, path: String(path) });
  }
}

/** A LeaderElection's options, checked (BADARGUMENTS, naming the first bad one) and completed with their defaults. */
export function electionOptions(
  path: string,
  options: { id?: unknown; revokeOn?: unknown; protocol?: unknown } | undefined,
): { id: string; revokeOn: "disconnected" | "expired"; protocol: ElectionProtocol; naming: Naming } {
  const bad = (message: string): ZooKeeperError => new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op: "LeaderElection", path });
  if (!options || typeof options.id !== "string") throw bad("options.id must be a string");
  const revokeOn = options.revokeOn === undefined ? "disconnected" : options.revokeOn;
  if (revokeOn !== "disconnected" && revokeOn !== "expired") throw bad(`revokeOn must be "disconnected" or "expired"`);
  const protocol = (options.protocol ?? "curator-latch") as ElectionProtocol;
  const naming = electionNaming(protocol);
  if (!naming) throw bad(`protocol must be "curator-latch", "curator-selector" or "kazoo"`);
  return { id: options.id, revokeOn, protocol, naming };
}
