// What the server on the current connection can take, learnt in-band while the connection is primed
// (before any queued request goes out), so the client never sends an op that would make a server
// answer UNIMPLEMENTED and drop the link (every line does that for an opcode it does not know).
//
// Probes, in order, each keeping the link on every line (REAL-SERVERS.md):
//  1. exists("/zookeeper/config"): a plain read, no transaction. 3.5+ servers always hold that node
//     (the dynamic-config znode); 3.4 answers NONODE.
//  2. only on 3.5+: removeWatches("/", PersistentRecursive) on a connection that holds no watch yet
//     (SetWatches goes after the probes): 3.9 answers NOWATCHER, earlier lines MARSHALLINGERROR
//     (they do not know WatcherType 5).
// A notification carrying a zxid (not -1) also proves 3.9+ (see Session.onNotification).
// 3.5 to 3.8 look the same on the wire to these probes; the client then assumes 3.6+ ops are there
// (3.5 reached end of life in 2022). An op a 3.5–3.7 server lacks is still answered UNIMPLEMENTED by it.
import { ErrorCode, WatcherType } from "../../protocol/constants.ts";
import { Ops, type PathWatchRequest } from "../../protocol/ops.ts";
import type { Connection } from "../wire/connection.ts";
import { ZooKeeperError } from "../errors.ts";
import { type CallSpec, type Feature, type Needs, type Send, answer } from "../wire/call-record.ts";
import type { ServerFeatures, ServerGeneration } from "../types.ts";

export type { Feature, Needs, ServerFeatures, ServerGeneration };

/** The oldest release that has each feature, for error messages. */
const SINCE: Record<Feature, string> = {
  containers: "3.5.1",
  ttl: "3.5.3",
  createWithStat: "3.5",
  removeWatches: "3.5",
  reconfig: "3.5",
  persistentWatches: "3.6",
  multiRead: "3.6",
  getEphemerals: "3.6",
  whoAmI: "3.7",
  persistentRemovalTypes: "3.9",
  eventZxid: "3.9",
};

/** What a server of `generation` supports (one frozen object per generation, shared: it never changes). */
export function featuresOf(generation: ServerGeneration): ServerFeatures {
  return FEATURES[generation];
}

function describe(generation: ServerGeneration): ServerFeatures {
  const v35 = generation !== "3.4";
  const v39 = generation === "3.9+";
  return Object.freeze({
    generation,
    containers: v35,
    ttl: v35,
    createWithStat: v35,
    removeWatches: v35,
    reconfig: v35,
    persistentWatches: v35,
    multiRead: v35,
    getEphemerals: v35,
    whoAmI: v35,
    persistentRemovalTypes: v39,
    eventZxid: v39,
  });
}

const FEATURES: Readonly<Record<ServerGeneration, ServerFeatures>> = { "3.4": describe("3.4"), "3.5-3.8": describe("3.5-3.8"), "3.9+": describe("3.9+") };

/** The reason `needs` cannot go to a server with `f`, or null when it can. */
export function unsupported(f: ServerFeatures, needs: Needs | undefined): string | null {
  if (!needs) return null;
  const missing = needs.features.filter((k) => !f[k]);
  if (missing.length === 0) return null;
  const since = missing.map((k) => SINCE[k]).sort().at(-1)!;
  const ttl = missing.includes("ttl") ? `, started with ${TTL_FLAG}` : "";
  return `${needs.what} needs ZooKeeper ${since} or later${ttl} (the server is ${f.generation})`;
}

/** The server setting TTL nodes need (off by default: a 3.5.3+ server without it answers createTTL UNIMPLEMENTED). */
export const TTL_FLAG = "-Dzookeeper.extendedTypesEnabled=true";

/**
 * A TTL create the server answered UNIMPLEMENTED: a 3.5.3+ server does so when TTLs are off (the default), and keeps
 * the link. Says what it needs; any other error is returned as is (also the local refusal, which says it already).
 */
export function ttlRefused(e: unknown): unknown {
  if (!(e instanceof ZooKeeperError) || e.code !== ErrorCode.UNIMPLEMENTED || e.message.includes(TTL_FLAG)) return e;
  return new ZooKeeperError(ErrorCode.UNIMPLEMENTED, `TTL nodes are off on this server: it needs ${TTL_FLAG} (ZooKeeper ${SINCE.ttl} or later)`, { op: e.op, path: e.path, cause: e });
}

/** exists, its reply's Stat not read: a probe wants the code only. */
const CONFIG_PROBE: CallSpec<PathWatchRequest, void> = { code: Ops.exists.code, writeRequest: Ops.exists.writeRequest, readResponse: () => undefined };

/** The probes of one connection: each resolves with the reply's error code (0: OK), and rejects (an Error) when the link goes. */
class Probes {
  private readonly send: Send;
  private readonly conn: Connection;

  constructor(send: Send, conn: Connection) {
    this.send = send;
    this.conn = conn;
  }

  /** exists("/zookeeper/config"). */
  config(): Promise<number> {
    return this.ask(CONFIG_PROBE, { path: "/zookeeper/config", watch: false }, "exists");
  }

  /** removeWatches("/", PersistentRecursive). */
  removal(): Promise<number> {
    return this.ask(Ops.removeWatches, { path: "/", type: WatcherType.PersistentRecursive }, "removeWatches");
  }

  private ask<Req, Res>(spec: CallSpec<Req, Res>, body: Req, op: string): Promise<number> {
    return answer(this.send, spec, body, { op, lane: "own", via: this.conn }).then(
      (r) => r.err,
      (e: unknown) => {
        throw new Error((e as Error).message);
      },
    );
  }
}

/**
 * What each server (by host:port) answered last time. A server seen at 3.5+ gets both probes in one
 * write on the next connection, and the session does not wait for them: it is connected on the features
 * seen last time as soon as the ConnectResponse is in (connect + close: 2 round trips, not 3, and 2 writes:
 * the probes wait for the link's next write, a request's or at the latest a ping's), and the replies, which
 * come before any request's sent after them, correct the features if the server changed.
 * A 3.4 server, or one never seen, gets them one after the other, awaited: a 3.4 server drops the link
 * on removeWatches.
 */
export type ServerMemory = Map<string, ServerGeneration>;
const LAST_SEEN_MAX = 1024;
const memories = new WeakMap<object, ServerMemory>();

/**
 * The memory of the servers reached through `way` (a Transport, or the dialer seam): one per way, because the
 * same host:port through another transport (a proxy, the simulation's network of one seed) can be another
 * server. Sessions on the default transport share one.
 */
export function serverMemory(way: object): ServerMemory {
  let m = memories.get(way);
  if (m === undefined) memories.set(way, (m = new Map()));
  return m;
}

function remember(lastSeen: ServerMemory, remote: string, g: ServerGeneration): ServerGeneration {
  if (lastSeen.size >= LAST_SEEN_MAX && !lastSeen.has(remote)) lastSeen.clear();
  lastSeen.set(remote, g);
  return g;
}

function refuseWithoutSasl(config: number): void {
  // A server with sessionRequireClientSASLAuth refuses every request of a session without SASL (and then
  // closes the link): no probe, and no later request, can succeed on it.
  if (config === ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH) {
    throw new ZooKeeperError(config, "the server requires SASL authentication (sessionRequireClientSASLAuth) and this client has no sasl option");
  }
}

/** What the background probes of a server seen before tell the session once they are answered. */
export interface Verdict {
  /** What the server of `conn` supports now. */
  featuresLearnt(conn: Connection, f: ServerFeatures): void;
  /** The link went, or cannot go on: a ZooKeeperError ends the session (SASL required), an Error the link. */
  featuresFailed(conn: Connection, e: Error): void;
}

/**
 * What the server on a fresh connection supports. Seen before at 3.5+: what it had, at once (not a promise: the
 * session goes on in the same turn), and the probes settle in the background (`later`); otherwise a promise of
 * it once they are answered (rejecting with a ZooKeeperError when the server refuses the session, with an Error
 * when the link is lost).
 */
export function learnFeatures(conn: Connection, lastSeen: ServerMemory, send: Send, later: Verdict): ServerFeatures | Promise<ServerFeatures> {
  const seen = lastSeen.get(conn.remote);
  if (seen === undefined || seen === "3.4") return probeFeatures(conn, lastSeen, new Probes(send, conn));
  // Nobody waits for these (the session is connected on what the server had): they are built and sent
  // just before the link's next frame, in its write, so they cost no write of their own, and nothing at
  // all (not even their Probes) when the link ends first (connect + close: closeSession goes alone).
  conn.beforeNextWrite(() =>
    probeAgain(conn, lastSeen, new Probes(send, conn)).then(
      (f) => later.featuresLearnt(conn, f),
      (e: Error) => later.featuresFailed(conn, e),
    ),
  );
  return featuresOf(seen);
}

/** The probes of a server seen before at 3.5+, both sent now (in the write being gathered), then their replies read. */
async function probeAgain(conn: Connection, lastSeen: ServerMemory, probes: Probes): Promise<ServerFeatures> {
  const remote = conn.remote;
  const config = probes.config();
  const removal = probes.removal();
  removal.catch(() => {}); // awaited below, unless the first probe already decided
  const c = await config;
  if (c === ErrorCode.NONODE) {
    // Now a 3.4 server (downgraded): it drops this link on the removeWatches already sent. Reconnect,
    // and probe one at a time from now on.
    remember(lastSeen, remote, "3.4");
    throw new Error(`server ${remote} is now ZooKeeper 3.4`);
  }
  refuseWithoutSasl(c);
  return featuresOf(remember(lastSeen, remote, (await removal) === ErrorCode.NOWATCHER ? "3.9+" : "3.5-3.8"));
}

/** Runs the probes one after the other on a fresh connection to a server never seen or seen at 3.4 (nothing else in flight but auth and none of our watches). */
async function probeFeatures(conn: Connection, lastSeen: ServerMemory, probes: Probes): Promise<ServerFeatures> {
  const remote = conn.remote;
  const config = await probes.config();
  if (config === ErrorCode.NONODE) return featuresOf(remember(lastSeen, remote, "3.4"));
  refuseWithoutSasl(config);
  const removal = await probes.removal();
  return featuresOf(remember(lastSeen, remote, removal === ErrorCode.NOWATCHER ? "3.9+" : "3.5-3.8"));
}
