// Argument checks for the public API. Plain JavaScript callers can pass anything, so every value
// is checked at runtime and bad input fails with BADARGUMENTS (or INVALIDACL) before anything is sent.
import { CreateMode, ErrorCode } from "../protocol/constants.ts";
import { pathProblem } from "../protocol/path.ts";
import type { ACL } from "../protocol/records.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import type { Watcher } from "./types.ts";

const utf8 = new TextEncoder();
const MAX_TTL = 0xffffffffff;

export function checkPath(op: string, path: unknown, sequential = false): string {
  const problem = pathProblem(path, sequential);
  if (problem) throw badArguments(`invalid path ${JSON.stringify(path)}: ${problem}`, op, typeof path === "string" ? path : undefined);
  return path as string;
}

export function toBytes(op: string, path: string, data: unknown): Uint8Array | null {
  if (data === null || data === undefined) return null;
  if (typeof data === "string") return utf8.encode(data);
  if (data instanceof Uint8Array) return data;
  throw badArguments(`data must be a Uint8Array, a string or null, got ${typeof data}`, op, path);
}

export function checkVersion(op: string, path: string, version: unknown): number {
  if (version === undefined) return -1;
  if (typeof version !== "number" || !Number.isInteger(version) || version < -1 || version > 0x7fffffff) {
    throw badArguments(`version must be an integer from -1 to 2^31-1, got ${String(version)}`, op, path);
  }
  return version;
}

export function checkWatcher(op: string, path: string, watcher: unknown, required = false): Watcher | undefined {
  if (watcher === undefined && !required) return undefined;
  if (typeof watcher !== "function") throw badArguments(`watcher must be a function`, op, path);
  return watcher as Watcher;
}

export function checkAcl(op: string, path: string, acl: unknown): ACL[] {
  if (!Array.isArray(acl) || acl.length === 0) {
    throw new ZooKeeperError(ErrorCode.INVALIDACL, "the ACL list must be a non-empty array", { op, path });
  }
  for (const entry of acl as unknown[]) {
    const e = entry as ACL;
    const ok =
      e !== null &&
      typeof e === "object" &&
      Number.isInteger(e.perms) &&
      e.perms >= 0 &&
      e.perms <= 31 &&
      e.id !== null &&
      typeof e.id === "object" &&
      typeof e.id.scheme === "string" &&
      typeof e.id.id === "string";
    if (!ok) throw new ZooKeeperError(ErrorCode.INVALIDACL, `malformed ACL entry ${JSON.stringify(entry)}`, { op, path });
  }
  return acl as ACL[];
}

interface CheckedCreate {
  mode: number;
  ttl: number | undefined;
  sequential: boolean;
}

export function checkCreateMode(op: string, path: string, mode: unknown, ttl: unknown): CheckedCreate {
  const m = mode === undefined ? CreateMode.PERSISTENT : mode;
  if (typeof m !== "number" || !Number.isInteger(m) || m < 0 || m > 6) {
    throw badArguments(`mode must be a CreateMode (0..6), got ${String(mode)}`, op, path);
  }
  const ttlMode = m === CreateMode.PERSISTENT_WITH_TTL || m === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
  if (ttlMode) {
    if (typeof ttl !== "number" || !Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL) {
      throw badArguments(`a TTL mode needs ttl as an integer from 1 to ${MAX_TTL} ms, got ${String(ttl)}`, op, path);
    }
  } else if (ttl !== undefined) {
    throw badArguments("ttl is only allowed with PERSISTENT_WITH_TTL or PERSISTENT_SEQUENTIAL_WITH_TTL", op, path);
  }
  const sequential = m === CreateMode.PERSISTENT_SEQUENTIAL || m === CreateMode.EPHEMERAL_SEQUENTIAL || m === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;
  return { mode: m, ttl: ttlMode ? (ttl as number) : undefined, sequential };
}
