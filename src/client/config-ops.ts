// multiRead (3.6+), getConfig and reconfig (3.5+), and reading the dynamic configuration text
// ("server.N=host:quorum:election:role;clientHost:clientPort" lines and "version=<hex>").
import { type HostPort, parseConnectString } from "../protocol/connect-string.ts";
import { ErrorCode, EventType, OpCode } from "../protocol/constants.ts";
import type { MultiOp } from "../protocol/multi.ts";
import { Ops } from "../protocol/ops.ts";
import { addChroot } from "../protocol/path.ts";
import type { Stat } from "../protocol/records.ts";
import type { Caller } from "./caller.ts";
import { badArguments } from "./errors.ts";
import { isEndState } from "./session/session-states.ts";
import type { ServerFeatures, SessionState, WatchedEvent, Watcher } from "./types.ts";
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

/** One quorum address of a server: 3.6+ may give several, separated by "|" (multi-address). */
export interface QuorumAddress {
  /** Host name or address (IPv6 without brackets). */
  host: string;
  /** The port followers use to reach the leader. */
  quorumPort: number;
  /** The port of leader election. */
  electionPort: number;
}

/** One `server.N=` line of the ensemble's dynamic configuration. */
export interface ConfigServer {
  /** The server's id (N, its myid). */
  id: number;
  /** The host of its first quorum address (IPv6 without brackets). */
  host: string;
  /** The first quorum address's port followers use to reach the leader. */
  quorumPort: number;
  /** The first quorum address's port of leader election. */
  electionPort: number;
  /** Every quorum address, in the line's order (one unless the line uses 3.6+ multi-address "a|b"). */
  addresses: QuorumAddress[];
  /** "participant" (also when the line names no role) or "observer"; another word is kept as written. */
  role: string;
  /**
   * Where clients connect ("host:port", IPv6 in brackets), when the line names a client address: the plain
   * address, or the secure one for a TLS-only server (`tlsOnly`). A wildcard or absent client host means
   * the server's own (first quorum) host.
   */
  client?: string;
  /** The TLS client address ("host:port"), when the line names one (a third ";" field, or "secure:"). */
  secureClient?: string;
  /** The line names a secure client address and no plain one: `client` is the TLS address. */
  tlsOnly?: boolean;
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
  /** Lines this client does not read (other keys, or a server line it cannot parse), kept as "key=value". */
  other: string[];
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

const CONFIG_NODE = "/zookeeper/config";

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
  const res = await c.call(Ops.multiRead, { ops: encoded }, { op: "multiRead", needs: { features: ["multiRead"], what: "multiRead" }, signal, untraced: true });
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
    untraced: true, // getConfig's own trace is the public method's (without the path); the tracker's reads are none
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
  const res = await c.call(Ops.reconfig, body, { op: "reconfig", needs: { features: ["reconfig"], what: "reconfig" }, signal, untraced: true });
  return parseConfig(res.data, res.stat);
}

/** "[v6]:a:b" or "host:a:b" -> ["v6", "a", "b"]: a bracketed host keeps its colons. */
function splitHost(text: string): string[] | null {
  if (!text.startsWith("[")) return text.split(":");
  const close = text.indexOf("]");
  if (close < 0) return null;
  const rest = text.slice(close + 1);
  if (rest !== "" && !rest.startsWith(":")) return null;
  return [text.slice(1, close), ...(rest === "" ? [] : rest.slice(1).split(":"))];
}

const PORT = /^\d{1,5}$/;
const port = (t: string | undefined): number | null => (t !== undefined && PORT.test(t.trim()) && Number(t) <= 65535 ? Number(t) : null);
const WILDCARD: ReadonlySet<string> = new Set(["", "0.0.0.0", "::", "0:0:0:0:0:0:0:0"]);
const hostPort = (host: string, p: number): string => (host.includes(":") ? `[${host}]:${p}` : `${host}:${p}`);

/** A client address field ("port", "host:port", "[v6]:port"), the wildcard as `own`; null when unreadable. */
function clientAddress(field: string, own: string): string | null {
  const parts = splitHost(field.trim());
  if (parts === null || parts.length > 2) return null;
  const p = port(parts[parts.length - 1]);
  if (p === null) return null;
  const host = parts.length === 2 ? parts[0]!.trim() : "";
  return hostPort(WILDCARD.has(host) ? own : host, p);
}

/**
 * One server line's value: "host:q:e[:role][|host:q:e[:role]...][;[clientHost:]clientPort][;[secureHost:]securePort]",
 * hosts as "[v6]" where IPv6 (QuorumPeer.QuorumServer's grammar, 3.5-3.10). Null when it does not read.
 */
export function parseServer(id: number, value: string): ConfigServer | null {
  const [quorum = "", plain, secure, ...more] = value.split(";");
  if (more.length > 0) return null;
  const addresses: QuorumAddress[] = [];
  let role: string | undefined;
  for (const a of quorum.split("|")) {
    const parts = splitHost(a.trim());
    if (parts === null || parts.length < 3) return null;
    const qp = port(parts[1]);
    const ep = port(parts[2]);
    if (qp === null || ep === null || parts[0] === "") return null;
    addresses.push({ host: parts[0]!, quorumPort: qp, electionPort: ep });
    // After the ports: the role, then words a later server may add (e.g. a certificate's "cert:..."): kept out of the way.
    const word = parts.slice(3).map((w) => w.trim().toLowerCase()).find((w) => w === "participant" || w === "observer") ?? parts[3]?.trim();
    if (word) role ??= word;
  }
  const first = addresses[0]!;
  const s: ConfigServer = { id, host: first.host, quorumPort: first.quorumPort, electionPort: first.electionPort, addresses, role: role ?? "participant" };
  // A field may carry a "plain:" or "secure:" prefix; unprefixed, the first is plain and the second secure.
  let plainAddr: string | undefined;
  let secureAddr: string | undefined;
  for (const [field, kind] of [[plain, "plain"], [secure, "secure"]] as const) {
    if (field === undefined || field.trim() === "") continue;
    const prefix = /^\s*(plain|secure):(.*)$/i.exec(field);
    const which = prefix ? (prefix[1]!.toLowerCase() as "plain" | "secure") : kind;
    const addr = clientAddress(prefix ? prefix[2]! : field, first.host);
    if (addr === null) return null;
    if (which === "plain") plainAddr = addr;
    else secureAddr = addr;
  }
  if (plainAddr !== undefined) s.client = plainAddr;
  if (secureAddr !== undefined) {
    s.secureClient = secureAddr;
    if (plainAddr === undefined) {
      s.client = secureAddr;
      s.tlsOnly = true;
    }
  }
  return s;
}

/** What the ensemble tracker (`ConnectOptions.trackEnsemble`) did, as the `"ensemble"` event of a ZooKeeper client. */
export type EnsembleEvent =
  | {
      /** The connect string's hosts are the config's client addresses: the tracker follows the config from now on. */
      type: "tracking";
      /** The config's client addresses as a connect string. */
      connectString: string;
      /** The config's version. */
      version: bigint | undefined;
    }
  | {
      /** A new config: the client's host list was replaced (`updateServerList`'s rebalancing rule). */
      type: "updated";
      /** The new config's client addresses as a connect string. */
      connectString: string;
      /** The new config's version. */
      version: bigint | undefined;
      /** The rule moved this client: it dropped its connection and reconnects, keeping its session. */
      moved: boolean;
    }
  | {
      /** A new config the tracker could not follow (a server without a client address): the host list is unchanged. */
      type: "skipped";
      /** Why. */
      reason: string;
      /** That config's version. */
      version: bigint | undefined;
    }
  | {
      /** The tracker stopped for good (or never started), saying why once. */
      type: "off";
      /** Why, e.g. a 3.4 server, NOAUTH on /zookeeper/config, or a connect string that is not the config's addresses. */
      reason: string;
    };

/** What the ensemble tracker needs of its client. */
interface TrackerClient {
  readonly calls: Caller;
  /** The hosts the client was given ("host:port", IPv6 in brackets). */
  readonly given: readonly string[];
  /** The client connects with TLS: it follows the servers' secure client addresses. */
  readonly tls: boolean;
  features(): ServerFeatures;
  /** updateServerList's rule; true when the client moves. */
  apply(hosts: readonly HostPort[]): boolean;
  report(event: EnsembleEvent): void;
}

/** The client addresses of `c` this client can use, or why not. */
function usableAddresses(c: ZooKeeperConfig, tls: boolean): string[] | string {
  if (c.servers.length === 0) return "the ensemble's config names no servers (a standalone server)";
  const out: string[] = [];
  for (const s of c.servers) {
    const addr = tls ? s.secureClient : s.tlsOnly ? undefined : s.client;
    if (addr === undefined) {
      if (s.client === undefined) return `server.${s.id} names no client address (clientPort in the static zoo.cfg)`;
      return tls ? `server.${s.id} names no TLS client address` : `server.${s.id} is TLS-only and this client is not`;
    }
    out.push(addr);
  }
  return out;
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join(",") === [...b].sort().join(",");

/**
 * Follows /zookeeper/config (Curator's EnsembleTracker, issue 42): at the start, tracks only when the connect
 * string's hosts are the config's client addresses (otherwise something, e.g. a proxy, stands between; it says
 * so and stays off); then every change of the config replaces the host list with updateServerList's rule.
 */
export class EnsembleTracker {
  private readonly client: TrackerClient;
  private stopped = false;
  private reading = false;
  private again = false;
  /** A read failed for want of a connection: the next "connected" retries it. */
  private retry: (() => void) | null = null;
  /** The client addresses last applied, sorted and joined. */
  private applied = "";
  private lastSkipped = "";

  constructor(client: TrackerClient) {
    this.client = client;
  }

  /** Starts with one read of the config (no watch: a client that does not track leaves none behind). */
  start(): void {
    void this.first();
  }

  /** The session's state: a retry on "connected"; the end stops the tracker. */
  stateChanged(state: SessionState): void {
    if (isEndState(state)) this.stopped = true;
    else if (state === "connected" && this.retry !== null) {
      const again = this.retry;
      this.retry = null;
      again();
    }
  }

  off(reason: string): void {
    if (this.stopped) return;
    this.stopped = true;
    this.client.report({ type: "off", reason });
  }

  private async first(): Promise<void> {
    if (this.stopped) return;
    if (!this.client.features().reconfig) return this.off("the server is ZooKeeper 3.4, which has no /zookeeper/config");
    let c: ZooKeeperConfig;
    try {
      c = await getConfig(this.client.calls, undefined, undefined);
    } catch (e) {
      return this.failed(e, () => void this.first());
    }
    if (this.stopped) return;
    const mine = usableAddresses(c, this.client.tls);
    if (typeof mine === "string") return this.off(mine);
    if (!sameSet(mine, this.client.given)) {
      return this.off(`the connect string's hosts (${this.client.given.join(",")}) are not the config's client addresses (${mine.join(",")}): a proxy or other names stand between, which tracking would bypass`);
    }
    this.applied = [...mine].sort().join(",");
    this.client.report({ type: "tracking", connectString: mine.join(","), version: c.version });
    await this.read();
  }

  private readonly watcher = (e: WatchedEvent): void => {
    if (e.type === EventType.NodeDataChanged) void this.read();
  };

  /** Reads the config with a watch and follows it; reads again when a change came during the read. */
  private async read(): Promise<void> {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        const c = await getConfig(this.client.calls, this.watcher, undefined);
        if (!this.stopped) this.follow(c);
      } while (this.again && !this.stopped);
    } catch (e) {
      this.failed(e, () => void this.read());
    } finally {
      this.reading = false;
    }
  }

  private follow(c: ZooKeeperConfig): void {
    const mine = usableAddresses(c, this.client.tls);
    if (typeof mine === "string") {
      if (mine !== this.lastSkipped) this.client.report({ type: "skipped", reason: mine, version: c.version });
      this.lastSkipped = mine;
      return;
    }
    const key = [...mine].sort().join(",");
    if (key === this.applied) return;
    this.applied = key;
    const connectString = mine.join(",");
    const moved = this.client.apply(parseConnectString(connectString).hosts);
    this.client.report({ type: "updated", connectString, version: c.version, moved });
  }

  private failed(e: unknown, retry: () => void): void {
    const code = (e as { code?: unknown }).code;
    if (this.stopped || code === ErrorCode.SESSIONEXPIRED || code === ErrorCode.AUTHFAILED) {
      this.stopped = true;
      return;
    }
    if (code === ErrorCode.NOAUTH) return this.off("reading /zookeeper/config was refused (NOAUTH)");
    if (code === ErrorCode.NONODE) return this.off("the server has no /zookeeper/config");
    if (code === ErrorCode.CONNECTIONLOSS || code === ErrorCode.OPERATIONTIMEOUT) {
      this.retry = retry; // after the reconnect
      return;
    }
    this.off(`reading /zookeeper/config failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Parses the dynamic configuration text: server lines, "version=", and any other line kept in `other`. */
export function parseConfig(data: Uint8Array | null, stat: Stat): ZooKeeperConfig {
  const text = data ? new TextDecoder().decode(data) : "";
  const servers: ConfigServer[] = [];
  const other: string[] = [];
  let version: bigint | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    const key = eq < 0 ? line : line.slice(0, eq).trim();
    const value = eq < 0 ? "" : line.slice(eq + 1).trim();
    if (key === "version" && /^[0-9a-fA-F]{1,16}$/.test(value)) {
      version = BigInt(`0x${value}`);
      continue;
    }
    const id = /^server\.(\d+)$/.exec(key);
    const server = id ? parseServer(Number(id[1]), value) : null;
    if (server) servers.push(server);
    else other.push(line);
  }
  const connectString = servers.flatMap((s) => (s.client ? [s.client] : [])).join(",");
  return { text, version, servers, connectString, other, stat };
}
