// multiRead (3.6+), getConfig and reconfig (3.5+), and reading the dynamic configuration text
// ("server.N=host:quorum:election:role;clientHost:clientPort" lines and "version=<hex>").
import { ErrorCode, OpCode } from "../protocol/constants.ts";
import type { MultiOp } from "../protocol/multi.ts";
import { Ops } from "../protocol/ops.ts";
import { addChroot } from "../protocol/path.ts";
import type { Stat } from "../protocol/records.ts";
import type { Caller } from "./call.ts";
import { badArguments } from "./errors.ts";
import type { Watcher } from "./types.ts";
import { checkPath } from "./validate.ts";

/** A read inside multiRead: built by ReadOp.getData / ReadOp.getChildren. */
export type ReadOp =
  | {
      /** Read the node's data and Stat. */
      readonly type: "getData";
      /** The node's path (inside the chroot). */
      readonly path: string;
    }
  | {
      /** Read the node's child names. */
      readonly type: "getChildren";
      /** The node's path (inside the chroot). */
      readonly path: string;
    };

/** Builders of the reads a `multiRead` takes. */
export const ReadOp = Object.freeze({
  /** A getData of `path`. */
  getData: (path: string): ReadOp => ({ type: "getData", path }),
  /** A getChildren of `path`. */
  getChildren: (path: string): ReadOp => ({ type: "getChildren", path }),
});

/** One multiRead result: reads fail one by one (no transaction), so a failed read is an error entry. */
export type ReadResult =
  | {
      /** A getData that succeeded. */
      type: "getData";
      /** The node's data (null when it has none). */
      data: Uint8Array | null;
      /** The node's Stat. */
      stat: Stat;
    }
  | {
      /** A getChildren that succeeded. */
      type: "getChildren";
      /** The child names, unsorted. */
      children: string[];
    }
  | {
      /** A read that failed on its own (the others still ran). */
      type: "error";
      /** The server's code for it, e.g. NONODE or NOAUTH. */
      code: number;
    };

/** One `server.N=` line of the ensemble's dynamic configuration. */
export interface ConfigServer {
  /** The server's id (N, its myid). */
  id: number;
  /** The host its quorum and election ports listen on. */
  host: string;
  /** The port followers use to reach the leader. */
  quorumPort: number;
  /** The port of leader election. */
  electionPort: number;
  /** "participant" or "observer". */
  role: string;
  /** Where clients connect ("host:port"), when the line names a client address. */
  client?: string;
}

/** The ensemble's dynamic configuration as `getConfig` and `reconfig` return it (servers 3.5+). */
export interface ZooKeeperConfig {
  /** The configuration text as the server stores it. */
  text: string;
  /** The config's version (a zxid), from its "version=" line. */
  version: bigint | undefined;
  /** Every server line, in the config's order. */
  servers: ConfigServer[];
  /** The client addresses as a connect string (e.g. for updateServerList); "" when none is named. */
  connectString: string;
  /** The Stat of the /zookeeper/config node. */
  stat: Stat;
}

/** What `reconfig` changes: `joining`/`leaving` (incremental) or `newMembers` (the whole membership). */
export interface ReconfigOptions {
  /** Incremental: servers to add, as "server.N=host:quorum:election[:role];[clientHost:]clientPort". */
  joining?: string | readonly string[];
  /** Incremental: ids of servers to remove. */
  leaving?: string | number | readonly (string | number)[];
  /** Non-incremental: the whole new membership (same syntax as joining). */
  newMembers?: string | readonly string[];
  /** Only apply when the current config has this version (-1n: any). */
  fromConfig?: bigint;
}

export const CONFIG_NODE = "/zookeeper/config";

export async function multiRead(c: Caller, ops: readonly ReadOp[], signal: AbortSignal | undefined): Promise<ReadResult[]> {
  if (!Array.isArray(ops)) throw badArguments("multiRead takes an array of ReadOp.getData/getChildren", "multiRead");
  const encoded = ops.map((op): MultiOp => {
    if (op === null || typeof op !== "object" || (op.type !== "getData" && op.type !== "getChildren")) {
      throw badArguments("multiRead ops must come from ReadOp.getData/getChildren", "multiRead");
    }
    const path = addChroot(c.chroot, checkPath("multiRead", op.path));
    return { type: op.type === "getData" ? OpCode.getData : OpCode.getChildren, request: { path, watch: false } };
  });
  if (encoded.length === 0) return [];
  const res = await c.call(Ops.multiRead, { ops: encoded }, { op: "multiRead", needs: { features: ["multiRead"], what: "multiRead" }, signal });
  return res.results.map((r): ReadResult => {
    switch (r.type) {
      case OpCode.getData:
        return { type: "getData", data: r.data, stat: r.stat };
      case OpCode.getChildren:
        return { type: "getChildren", children: r.children };
      case OpCode.error:
        return { type: "error", code: r.err };
      default:
        return { type: "error", code: ErrorCode.MARSHALLINGERROR };
    }
  });
}

/** Reads /zookeeper/config (outside any chroot); `watcher` sees the next change of the config. */
export async function getConfig(c: Caller, watcher: Watcher | undefined, signal: AbortSignal | undefined): Promise<ZooKeeperConfig> {
  if (watcher !== undefined && typeof watcher !== "function") throw badArguments("watcher must be a function", "getConfig", CONFIG_NODE);
  // The config node lies outside any chroot: its path goes to the server as it is.
  const res = await c.call(Ops.getData, { path: CONFIG_NODE, watch: watcher !== undefined }, {
    op: "getConfig",
    path: CONFIG_NODE,
    absolute: true,
    watcher,
    watchAs: "data",
    needs: { features: ["reconfig"], what: "getConfig" },
    signal,
  });
  return parseConfig(res.data, res.stat);
}

export async function reconfig(c: Caller, o: ReconfigOptions, signal: AbortSignal | undefined): Promise<ZooKeeperConfig> {
  if (o === null || typeof o !== "object") throw badArguments("reconfig takes { joining, leaving, newMembers, fromConfig }", "reconfig");
  const list = (name: string, v: unknown): string | null => {
    if (v === undefined || v === null) return null;
    const items = Array.isArray(v) ? v : [v];
    if (!items.every((x) => typeof x === "string" || (typeof x === "number" && Number.isInteger(x)))) throw badArguments(`${name} must be a string or a list of strings`, "reconfig");
    return items.length === 0 ? null : items.join(",");
  };
  const joining = list("joining", o.joining);
  const leaving = list("leaving", o.leaving);
  const newMembers = list("newMembers", o.newMembers);
  if (newMembers !== null && (joining !== null || leaving !== null)) throw badArguments("newMembers cannot be combined with joining/leaving", "reconfig");
  if (o.fromConfig !== undefined && typeof o.fromConfig !== "bigint") throw badArguments("fromConfig must be a bigint", "reconfig");
  const body = { joiningServers: joining, leavingServers: leaving, newMembers, curConfigId: o.fromConfig ?? -1n };
  const res = await c.call(Ops.reconfig, body, { op: "reconfig", needs: { features: ["reconfig"], what: "reconfig" }, signal });
  return parseConfig(res.data, res.stat);
}

/** Parses the dynamic configuration text. */
export function parseConfig(data: Uint8Array | null, stat: Stat): ZooKeeperConfig {
  const text = data ? new TextDecoder().decode(data) : "";
  const servers: ConfigServer[] = [];
  let version: bigint | undefined;
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq < 0) continue;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (key === "version" && /^[0-9a-fA-F]+$/.test(value)) version = BigInt(`0x${value}`);
    const id = /^server\.(\d+)$/.exec(key);
    if (!id) continue;
    const [quorum, clientPart] = value.split(";");
    const [host, qp, ep, role] = (quorum ?? "").split(":");
    const s: ConfigServer = { id: Number(id[1]), host: host ?? "", quorumPort: Number(qp), electionPort: Number(ep), role: role || "participant" };
    if (clientPart) {
      const c = clientPart.trim();
      const i = c.lastIndexOf(":");
      const clientHost = i < 0 ? "" : c.slice(0, i);
      const port = i < 0 ? c : c.slice(i + 1);
      // A wildcard client address means "the server's own host".
      s.client = `${!clientHost || clientHost === "0.0.0.0" ? s.host : clientHost}:${port}`;
    }
    servers.push(s);
  }
  const connectString = servers.flatMap((s) => (s.client ? [s.client] : [])).join(",");
  return { text, version, servers, connectString, stat };
}

