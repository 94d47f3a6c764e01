// The public client (docs/client.md; reference: `npm run docs`): each operation checks its arguments,
// then takes the one path of caller.ts (op table codecs, chroot mapping, watches registered with their replies,
// and the one `zookeeper-ts:request` trace per call: an operation of several calls is traced once there).
import { AddWatchMode, ErrorCode, EventType, WatcherType } from "../protocol/constants.ts";
import { hostText, parseConnectString } from "../protocol/connect-string.ts";
import { ProtocolError } from "../protocol/errors.ts";
import { Ops } from "../protocol/ops.ts";
import { stripChroot } from "../protocol/path.ts";
import type { ACL, Stat } from "../protocol/records.ts";
import { raceSignal, signalOf } from "./abort.ts";
import { Caller, clientPaths, createNode, ephemeralsPrefix, identities, need, persistentKind } from "./caller.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import { publishState, publishWatch, tracingWatches } from "./diagnostics.ts";
import { watchedEvent } from "./events.ts";
import { credentialName } from "./session/priming.ts";
import { deleteTree } from "./helpers.ts";
import { Op, decodeResults, encodeOp, multiNeeds } from "./multi-ops.ts";
import { type EnsembleEvent, EnsembleTracker, type ReadOp, type ReadResult, type ReconfigOptions, type ZooKeeperConfig, getConfig, multiRead, reconfig } from "./config-ops.ts";
import type { ServerFeatures } from "./session/features.ts";
import { TypedEventEmitter } from "./emitter.ts";
import { type ListenerError, deliverIsolated, emitIsolated, reportListenerError } from "./listeners.ts";
import { Session } from "./session/session.ts";
import { isEndState } from "./session/session-states.ts";
import { parsedConnectString } from "./session/hosts.ts";
import { type DnsSrvRefresh, startDnsSrv } from "./session/dns-srv.ts";
import { Transaction } from "./transaction.ts";
import { type Clock, type TimerHandle, cancelTurn, nextTurn } from "./clock.ts";
import { readTimeoutFor } from "./wire/liveness.ts";
import { type InternalOptions, type SessionEvents, sessionOptions } from "./session/session-options.ts";
import type { CallOptions, ClientSummary, ConnectOptions, CreateOptions, Data, Logger, OpResult, ReadOptions, SessionState, WatchedEvent, Watcher, WriteOptions } from "./types.ts";
import { checkAcl, checkPath, checkVersion, checkWatcher, toBytes } from "./validate.ts";
import { watchIterator } from "./watches/watch-iterator.ts";
import { type RemovalContext, removeWatchers } from "./watch-removal.ts";
import { WatchRegistry } from "./watches/watches.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** What connect() checks of its options before anything is made (BADARGUMENTS). */
function checkConnectOptions(options: ConnectOptions): void {
  if (options === null || typeof options !== "object") throw badArguments("options must be an object", "connect");
  if (options.sessionId !== undefined && typeof options.sessionId !== "bigint") throw badArguments("sessionId must be a bigint", "connect");
  if (options.sessionPassword !== undefined && !(options.sessionPassword instanceof Uint8Array)) {
    throw badArguments("sessionPassword must be a Uint8Array", "connect");
  }
  if (options.sessionId !== undefined && options.sessionId !== 0n && options.sessionPassword === undefined) {
    throw badArguments("resuming a session needs its sessionPassword", "connect");
  }
  if (options.readOnly !== undefined && typeof options.readOnly !== "boolean") throw badArguments("readOnly must be a boolean", "connect");
  if (options.clientSideExpiry !== undefined && typeof options.clientSideExpiry !== "boolean") throw badArguments("clientSideExpiry must be a boolean", "connect");
  if (options.trackEnsemble !== undefined && typeof options.trackEnsemble !== "boolean") throw badArguments("trackEnsemble must be a boolean", "connect");
  if (options.auth !== undefined && !Array.isArray(options.auth)) throw badArguments("auth must be an array", "connect");
  for (const a of options.auth ?? []) {
    if (!a || typeof a.scheme !== "string") throw badArguments("auth entries need a scheme and auth", "connect");
  }
}

/** Events of a ZooKeeper client: `"state"` with each new `SessionState`; `"listenerError"` (docs/client.md "Listener errors"). */
export interface ZooKeeperEvents {
  /** The session moved to a new state. */
  state: [state: SessionState];
  /** A listener or watcher (of this client or of a recipe built on it) threw; the others still ran. */
  listenerError: [info: ListenerError];
  /**
   * This process ran late (SIGSTOP, a long GC, a blocked event loop) and is about to read replies and
   * notifications that arrived meanwhile: emitted before any of them is delivered, and before overdue
   * timers may run. `heardWithin()` is already current; the recipes end a lapsed lease here.
   */
  resumed: [];
  /**
   * `close()` was called: emitted at once, before the session's end (closeSession) is sent, while `state` still
   * reads what it did. Once the server has that closeSession it deletes this session's ephemeral znodes and
   * another client may lead or take a lock, so the recipes step down here ("closed"). Not emitted when the
   * session had already ended.
   */
  closing: [];
  /**
   * The ensemble tracker (`ConnectOptions.trackEnsemble`): it tracks, replaced the host list after a config change
   * (and whether that moved this client), skipped a config it cannot follow, or is off and why (said once).
   */
  ensemble: [event: EnsembleEvent];
}

export type { InternalOptions };

/**
 * A ZooKeeper client (servers 3.4 to 3.9): one session, moved between the connect string's hosts. Every
 * operation rejects with a `ZooKeeperError`: BADARGUMENTS for bad input (nothing sent), CONNECTIONLOSS if the
 * link drops while it is in flight, SESSIONEXPIRED after expiry or close(); below, the server's own codes per method.
 * A server older than a method needs answers UNIMPLEMENTED.
 */
export class ZooKeeper extends TypedEventEmitter<ZooKeeperEvents> {
  private readonly session: Session;
  /** Every operation goes through `calls.call` or `calls.request` (caller.ts). */
  private readonly calls: Caller;
  private readonly watches = new WatchRegistry();
  private readonly chroot: string;
  private readonly log: Logger;
  private readonly maxBufferSize: number;
  /** Who the session authenticated as (credentialName: schemes and user names, never secrets), for NOAUTH's message. */
  private readonly credentials: string[] = [];
  /** The state last emitted, the `from` of `zookeeper-ts:session`. */
  private shownState: SessionState = "connecting";
  /** close() was called: the lease is over ("closing" was emitted), whatever the session still reads. */
  private closeCalled = false;
  /** Follows /zookeeper/config (trackEnsemble); made when it starts (null until then, and when off). */
  private tracker: EnsembleTracker | null = null;
  /** A dns-srv:// connect string's periodic SRV lookup (null for a plain connect string). */
  private srvRefresh: DnsSrvRefresh | null = null;
  /** The tracker's start, due on the next turn of the event loop after connect() (null once started, or when off). */
  private trackerStart: TimerHandle | null = null;
  /** What the first established session does about tracking (planTracking): start the tracker, say it is off, or nothing. */
  private trackPlan: "start" | "sayOff" | null = null;
  /** The connect string the tracker compares with the config (until it starts), and whether the links are TLS. */
  private trackFrom = "";
  private trackTls = false;

  private constructor(connectString: string, options: InternalOptions) {
    super();
    let parsed;
    try {
      parsed = parsedConnectString(connectString);
    } catch (e) {
      throw badArguments(e instanceof ProtocolError ? e.message : String(e), "connect");
    }
    this.chroot = parsed.chroot;
    this.log = options.logger ?? silent;
    const o = sessionOptions(parsed.hosts, options, this.log, {
      chroot: this.chroot,
      credentials: this.credentials,
      watches: this.watches,
      events: new ZooKeeper.Events(this),
    });
    this.maxBufferSize = o.maxBufferSize;
    // SASL by its user (DIGEST-MD5) or principal, never its password.
    const sasl = options.sasl as { username?: unknown; principal?: unknown } | undefined;
    const saslUser = typeof sasl?.username === "string" ? sasl.username : typeof sasl?.principal === "string" ? sasl.principal : null;
    if (sasl) this.credentials.push(saslUser === null ? "sasl" : `sasl user ${JSON.stringify(saslUser)}`);
    const tls = options.tls;
    if (typeof tls === "object" && tls !== null && (tls.cert !== undefined || tls.certFile !== undefined || tls.pfx !== undefined)) this.credentials.push("x509 (the TLS client certificate)");
    this.session = new Session(o);
    this.calls = new Caller(this.chroot, this.watches, this.session.send, this.session.lost, this);
  }

  /**
   * Connects (`"host:port,host:port/chroot"`, or `"dns-srv://NAME/chroot"`: the servers of NAME's SRV records; the
   * chroot must exist) and resolves once a session is established.
   * Rejects with BADARGUMENTS, AUTHFAILED (SASL refused), or CONNECTIONLOSS after `connectTimeout` (default 15 s;
   * at once for a certificate error or, on Deno, a missing net permission), whose message says when every host
   * refused or did not resolve (`ECONNREFUSED on every host of "..."`), else the last error.
   */
  static connect(connectString: string, options: ConnectOptions = {}): Promise<ZooKeeper> {
    // Not an async function: a plain connect string's promise is the session's own (no second promise and await).
    try {
      checkConnectOptions(options);
      // dns-srv://NAME[/chroot]: its SRV records' hosts first.
      if (typeof connectString === "string" && connectString.startsWith("dns-srv://")) return ZooKeeper.connectSrv(connectString, options);
      const zk = ZooKeeper.made(connectString, options);
      zk.planTracking(connectString, options);
      return zk.session.start(zk);
    } catch (e) {
      return Promise.reject(e); // as an async function would: a rejection, never a throw
    }
  }

  /** connect() to the servers of a dns-srv:// name's SRV records, which then manage the server list (no tracker). */
  private static async connectSrv(connectString: string, options: ConnectOptions): Promise<ZooKeeper> {
    const srv = await startDnsSrv(connectString, options);
    if (srv === null) throw badArguments("not a dns-srv:// connect string", "connect"); // connect() checked its prefix
    const zk = ZooKeeper.made(srv.connectString, options);
    await zk.session.start(zk);
    zk.log.info("zookeeper: ensemble tracking off: the dns-srv:// records manage the server list");
    zk.srvRefresh = srv.refresh((hosts) => {
      if (zk.closeCalled || isEndState(zk.state)) zk.srvRefresh?.stop();
      else zk.session.updateHosts(hosts);
    }, zk.log);
    return zk;
  }

  /** The client, with `options.auth`'s credentials stored: they go out on the first connection's priming, their outcome the session's. */
  private static made(connectString: string, options: ConnectOptions): ZooKeeper {
    const zk = new ZooKeeper(connectString, options);
    if (options.auth) for (const a of options.auth) zk.addAuth(a.scheme, toBytes("connect", "/", a.auth) ?? new Uint8Array(0)).catch(nothing);
    return zk;
  }

  /**
   * trackEnsemble: on by default, off by default with a custom transport (its addresses are its own). Decided now,
   * acted on when the first session is established (trackConnected).
   */
  private planTracking(connectString: string, options: ConnectOptions): void {
    if (options.trackEnsemble ?? options.transport === undefined) {
      this.trackPlan = "start";
      this.trackFrom = connectString;
      this.trackTls = options.tls !== undefined && options.tls !== false;
    } else if (options.trackEnsemble === undefined) this.trackPlan = "sayOff";
  }

  /**
   * The first session is established: the tracker's start is due on a later turn of the event loop than connect()'s
   * return, so listeners attached then hear its first event.
   */
  private trackConnected(): void {
    const plan = this.trackPlan;
    this.trackPlan = null;
    if (plan === "sayOff") this.log.info("zookeeper: ensemble tracking off: a custom transport (trackEnsemble: true turns it on)");
    if (plan !== "start") return;
    // After the caller's continuation of connect(), so its listeners hear the first event: on the next turn of the event
    // loop (clock.ts nextTurn; a custom clock's 0 ms timer). A close() before then cancels it: a closing session has no
    // config to read. The tracker is made then (most short sessions close before: nothing is built for them).
    this.trackerStart = nextTurn(this.clock, () => {
      this.trackerStart = null;
      if (!isEndState(this.state)) this.startedTracker().start();
    });
  }

  /** The tracker, made now (its start was due: cancelled if still to come). */
  private startedTracker(): EnsembleTracker {
    if (this.trackerStart !== null) {
      cancelTurn(this.clock, this.trackerStart);
      this.trackerStart = null;
    }
    return (this.tracker = new EnsembleTracker({
      calls: this.calls,
      given: parsedConnectString(this.trackFrom).hosts.map(hostText),
      tls: this.trackTls,
      features: () => this.session.features,
      apply: (hosts) => this.session.updateHosts(hosts),
      report: (event) => {
        if (event.type === "off" || event.type === "skipped") this.log.info(`zookeeper: ensemble tracking ${event.type}: ${event.reason}`);
        else this.log.info(`zookeeper: ensemble ${event.type} ${event.connectString}${event.type === "updated" && event.moved ? " (moving)" : ""}`);
        emitIsolated(this, this, "ZooKeeper", "ensemble", event);
      },
    }));
  }

  /** The session's current state. */
  get state(): SessionState {
    return this.session.state;
  }
  /** The session id (0n before the first session). */
  get sessionId(): bigint {
    return this.session.sessionId;
  }
  /**
   * What `JSON.stringify` shows of a client: its state, session id (hex) and server. Never its session password,
   * credentials or keys (util.inspect does not show them either).
   */
  toJSON(): ClientSummary {
    return { state: this.state, sessionId: `0x${this.sessionId.toString(16)}`, remoteAddress: this.remoteAddress };
  }

  /** `ZooKeeper(0x<session id>, <state>, <server>)`: for messages and logs; no secret. */
  override toString(): string {
    return `ZooKeeper(0x${this.sessionId.toString(16)}, ${this.state}${this.remoteAddress ? `, ${this.remoteAddress}` : ""})`;
  }

  /** The session's password, to resume it with `ConnectOptions.sessionId`/`sessionPassword`. */
  get sessionPassword(): Uint8Array {
    return this.session.password;
  }
  /** The session timeout the server granted, ms. */
  get negotiatedTimeout(): number {
    return this.session.negotiatedTimeout;
  }
  /** `clock.now()` time of the last bytes received from the server (the read timeout counts from it). */
  get lastHeardAt(): number {
    return this.session.lastHeardAt;
  }
  /** Read timeout of the link: 2/3 of the negotiated session timeout (ms); silence past it drops the link. */
  get readTimeout(): number {
    return readTimeoutFor(this.session.negotiatedTimeout);
  }
  /** The client's Clock (`ConnectOptions.clock`, default `systemClock`): the time `lastHeardAt` and the lease are on. */
  get clock(): Clock {
    return this.session.clock;
  }
  /**
   * True when a request the server has answered (a ping counts) was sent within the last `ms`, i.e. the server
   * heard this session no longer than `ms` ago. Counted from the send: replies that piled up while this process
   * was paused acknowledge old sends and do not make it true. False once the session has ended or `close()` was called.
   */
  heardWithin(ms: number): boolean {
    return this.leaseRemaining(ms) > 0;
  }
  /** ms until `heardWithin(ms)` turns false (default `ms`: `readTimeout`); 0 once it is. The lease recipes lead on. */
  leaseRemaining(ms: number = this.readTimeout): number {
    return this.closeCalled ? 0 : this.session.leaseRemaining(ms);
  }
  /** "host:port" of the server this client is connected to, or null while not connected. */
  get remoteAddress(): string | null {
    return this.session.remote;
  }
  /** What the connected server supports, learnt on every new connection (see features.ts). */
  get serverFeatures(): ServerFeatures {
    return this.session.features;
  }
  /** The highest zxid seen in a reply. */
  get lastZxid(): bigint {
    return this.session.lastZxid;
  }

  /**
   * Ends the session (its ephemeral nodes go) and the connection; pending and later calls reject with SESSIONEXPIRED,
   * "the client is closed (close() was called)" (as the Java client; never retried by `withRetry`). Never rejects.
   */
  close(): Promise<void> {
    // Not an async function: the session's own promise is handed out (one promise and one await fewer per close).
    try {
      this.srvRefresh?.stop();
      if (this.trackerStart !== null) {
        cancelTurn(this.clock, this.trackerStart);
        this.trackerStart = null;
      }
      if (!this.closeCalled) {
        this.closeCalled = true;
        if (!isEndState(this.state) && this.listenerCount("closing") > 0) emitIsolated(this, this, "ZooKeeper", "closing");
      }
    } catch (e) {
      return Promise.reject(e); // as an async function would: a rejection, never a throw
    }
    return this.session.close();
  }

  /** `await using` support: the same as `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- plumbing ---

  /** What the session tells a client: one object per client, its methods shared (a closure each was four per client). */
  private static Events: new (zk: ZooKeeper) => SessionEvents;
  static {
    ZooKeeper.Events = class implements SessionEvents {
      private readonly zk: ZooKeeper;

      constructor(zk: ZooKeeper) {
        this.zk = zk;
      }

      onState(state: SessionState): void {
        const zk = this.zk;
        const from = zk.shownState;
        zk.shownState = state;
        publishState(zk.sessionId, from, state);
        if (zk.trackPlan !== null && (state === "connected" || state === "connectedReadOnly")) zk.trackConnected();
        zk.tracker?.stateChanged(state);
        zk.emitSafely(state);
      }

      onWatchEvent(ev: { type: number; state: number; path: string }, zxid: bigint, watchers: Watcher[]): void {
        if (watchers.length === 0) return;
        const zk = this.zk;
        const event = watchedEvent(ev.type, ev.state, stripChroot(zk.chroot, ev.path), zxid === -1n ? undefined : zxid);
        if (tracingWatches()) publishWatch(zk.sessionId, event.typeName, event.path);
        zk.deliver(watchers, event);
      }

      onSessionEvent(state: number): void {
        this.zk.deliver(this.zk.watches.all(), watchedEvent(EventType.None, state, null, undefined));
      }

      onResume(): void {
        emitIsolated(this.zk, this.zk, "ZooKeeper", "resumed");
      }
    };
  }

  // A throwing "state" listener or watcher is reported (reportListenerError); the others still run.
  // Most clients have no "state" listener: nothing is built for them (emitIsolated copies the list and its arguments).
  // Methods, not arrow properties: no closure per client (a watch removal makes its own, removal() below).
  private emitSafely(state: SessionState): void {
    if (this.listenerCount("state") > 0) emitIsolated(this, this, "ZooKeeper", "state", state);
  }
  private deliver(watchers: readonly Watcher[], event: WatchedEvent): void {
    deliverIsolated(this, watchers, event);
  }

  /**
   * Reports what a listener threw by the one policy of the client and the recipes (docs/client.md "Listener errors"): logged
   * at error level through `logger` and emitted as `"listenerError"`; with neither, console.error. Never throws.
   */
  reportListenerError(info: ListenerError): void {
    reportListenerError(this, this.log === silent ? null : this.log, info);
  }

  /** Stores credentials with the session, and their name for NOAUTH's message. */
  private addAuth(scheme: string, auth: Uint8Array): Promise<void> {
    this.credentials.push(credentialName(scheme, auth));
    return this.session.addAuth(scheme, auth);
  }

  // --- operations ---

  /**
   * Creates a node; resolves with its path (sequential modes add the suffix). Server codes: NODEEXISTS,
   * NONODE (no parent), NOCHILDRENFOREPHEMERALS, NOAUTH, INVALIDACL. CONTAINER and TTL modes need 3.5.3+.
   */
  create(path: string, data?: Data, options: CreateOptions = {}): Promise<string> {
    return createNode(this.calls, this, "create", path, data, options, false);
  }

  /** Like `create`, and also resolves with the new node's Stat (server 3.5+). */
  createWithStat(path: string, data?: Data, options: CreateOptions = {}): Promise<{ path: string; stat: Stat }> {
    return createNode(this.calls, this, "createWithStat", path, data, options, true);
  }

  /** Deletes a node (with `version`: only at that version). Server codes: NONODE, BADVERSION, NOTEMPTY, NOAUTH. */
  delete(path: string, version?: number, options?: CallOptions): Promise<void> {
    try {
      checkPath("delete", path);
      const v = checkVersion("delete", path, version);
      return this.calls.request(Ops.delete, { op: "delete", path, version: v, signal: signalOf("delete", path, options) });
    } catch (e) {
      return this.calls.refused("delete", path, e);
    }
  }

  /**
   * Deletes `path` and its whole subtree, bottom-up in `multi` batches that stay within `maxBufferSize`; nodes
   * that appear or vanish meanwhile are handled. NONODE only when `path` never existed; `/` is BADARGUMENTS.
   */
  deleteRecursive(path: string, options?: CallOptions): Promise<void> {
    return this.calls.trace("deleteRecursive", path, async () => {
      checkPath("deleteRecursive", path);
      await deleteTree(this, path, this.maxBufferSize, signalOf("deleteRecursive", path, options));
    });
  }

  /**
   * The node's Stat, or null when missing; `watcher` fires once on NodeCreated, NodeDeleted or NodeDataChanged.
   * `{ linearizable: true }`: current at an instant between the call and its answer (ReadOptions).
   */
  exists(path: string, watcher?: Watcher, options?: ReadOptions): Promise<Stat | null> {
    try {
      checkPath("exists", path);
      const w = checkWatcher("exists", path, watcher);
      const signal = signalOf("exists", path, options);
      // A missing node still leaves a server-side watch: it fires NodeCreated.
      if (options?.linearizable !== true) return this.calls.request(Ops.exists, { op: "exists", path, watch: w !== undefined, watcher: w, watchAs: "data", watchAsIfNoNode: "exist", signal, noNodeIsNull: true });
      const read = (): Promise<Stat | null> =>
        this.calls.request(Ops.exists, { op: "exists", path, watch: w !== undefined, watcher: w, watchAs: "data", watchAsIfNoNode: "exist", signal, noNodeIsNull: true, untraced: true });
      return this.calls.trace("exists", path, () => this.linearized(path, read, (s) => s, signal));
    } catch (e) {
      return this.calls.refused("exists", path, e);
    }
  }

  /**
   * A node's data and Stat; `watcher` fires once on NodeDataChanged or NodeDeleted. Server codes: NONODE, NOAUTH.
   * `{ linearizable: true }`: current at an instant between the call and its answer (ReadOptions).
   */
  getData(path: string, watcher?: Watcher, options?: ReadOptions): Promise<{ data: Uint8Array | null; stat: Stat }> {
    try {
      checkPath("getData", path);
      const w = checkWatcher("getData", path, watcher);
      const signal = signalOf("getData", path, options);
      if (options?.linearizable !== true) return this.calls.request(Ops.getData, { op: "getData", path, watch: w !== undefined, watcher: w, watchAs: "data", signal });
      const read = (): Promise<{ data: Uint8Array | null; stat: Stat }> => this.calls.request(Ops.getData, { op: "getData", path, watch: w !== undefined, watcher: w, watchAs: "data", signal, untraced: true });
      return this.calls.trace("getData", path, () => this.linearized(path, read, (r) => r.stat, signal));
    } catch (e) {
      return this.calls.refused("getData", path, e);
    }
  }

  /**
   * `read`, then a check the leader orders: the version read still there (or, for a missing node, still missing)
   * when the check runs means the answer was current then. Sent again while the node changed in between.
   */
  private async linearized<T>(path: string, read: () => Promise<T>, statOf: (r: T) => Stat | null, signal: AbortSignal | undefined): Promise<T> {
    for (;;) {
      const r = await read();
      const stat = statOf(r);
      try {
        await this.multi([Op.check(path, stat === null ? -1 : stat.version)], { signal });
        if (stat !== null) return r;
      } catch (e) {
        if (!(e instanceof ZooKeeperError) || (e.code !== ErrorCode.BADVERSION && e.code !== ErrorCode.NONODE)) throw e;
        if (stat === null && e.code === ErrorCode.NONODE) return r;
      }
    }
  }

  /**
   * Replaces a node's data (with `version`: only at that version); resolves with the new Stat.
   * Server codes: NONODE, BADVERSION, NOAUTH; data over `maxBufferSize` rejects with BADARGUMENTS.
   */
  setData(path: string, data: Data, version?: number, options?: WriteOptions): Promise<Stat> {
    try {
      checkPath("setData", path);
      const bytes = toBytes("setData", path, data);
      const v = checkVersion("setData", path, version);
      return this.calls.request(Ops.setData, { op: "setData", path, data: bytes, version: v, signal: signalOf("setData", path, options), unique: options?.uniqueData === true });
    } catch (e) {
      return this.calls.refused("setData", path, e);
    }
  }

  /**
   * A node's child names (unsorted); `watcher` fires once on NodeChildrenChanged or NodeDeleted. Codes: NONODE, NOAUTH.
   */
  getChildren(path: string, watcher?: Watcher, options?: CallOptions): Promise<string[]> {
    try {
      checkPath("getChildren", path);
      const w = checkWatcher("getChildren", path, watcher);
      return this.calls.request(Ops.getChildren, { op: "getChildren", path, watch: w !== undefined, watcher: w, watchAs: "child", signal: signalOf("getChildren", path, options) });
    } catch (e) {
      return this.calls.refused("getChildren", path, e);
    }
  }

  /** Like `getChildren`, and also the node's Stat. */
  getChildrenWithStat(path: string, watcher?: Watcher, options?: CallOptions): Promise<{ children: string[]; stat: Stat }> {
    const op = "getChildrenWithStat";
    try {
      checkPath(op, path);
      const w = checkWatcher(op, path, watcher);
      return this.calls.request(Ops.getChildren2, { op, path, watch: w !== undefined, watcher: w, watchAs: "child", signal: signalOf(op, path, options) });
    } catch (e) {
      return this.calls.refused(op, path, e);
    }
  }

  /** A node's ACL and Stat. Server code: NONODE. */
  getACL(path: string, options?: CallOptions): Promise<{ acl: ACL[]; stat: Stat }> {
    try {
      checkPath("getACL", path);
      return this.calls.call(Ops.getACL, { path }, { op: "getACL", path, signal: signalOf("getACL", path, options) });
    } catch (e) {
      return this.calls.refused("getACL", path, e);
    }
  }

  /**
   * Replaces a node's ACL (with `version`: only at that `aversion`); resolves with the Stat.
   * INVALIDACL for a bad list; server codes NONODE, BADVERSION, NOAUTH.
   */
  setACL(path: string, acl: ACL[], version?: number, options?: CallOptions): Promise<Stat> {
    try {
      checkPath("setACL", path);
      const list = checkAcl("setACL", path, acl);
      const v = checkVersion("setACL", path, version);
      return this.calls.call(Ops.setACL, { path, acl: list, version: v }, { op: "setACL", path, signal: signalOf("setACL", path, options) });
    } catch (e) {
      return this.calls.refused("setACL", path, e);
    }
  }

  /** Resolves once this client's server has caught up with the leader, so the next read sees earlier writes. */
  sync(path: string, options?: CallOptions): Promise<void> {
    try {
      checkPath("sync", path);
      return this.calls.call(Ops.sync, { path }, { op: "sync", path, signal: signalOf("sync", path, options), result: nothing });
    } catch (e) {
      return this.calls.refused("sync", path, e);
    }
  }

  /**
   * Runs `ops` atomically (all or none); one OpResult per op. Rejects with the failing op's code (`results` on the error).
   */
  multi(ops: readonly Op[], options?: CallOptions): Promise<OpResult[]> {
    try {
      if (!Array.isArray(ops)) throw badArguments("multi takes an array of ops", "multi");
      const encoded = ops.map((op) => encodeOp(op, this.chroot));
      const signal = signalOf("multi", undefined, options);
      if (encoded.length === 0) return this.calls.trace("multi", undefined, noResults);
      return this.calls.call(Ops.multi, { ops: encoded }, { op: "multi", needs: multiNeeds(encoded), signal, result: (r, chroot) => decodeResults(r.results, chroot, ops) });
    } catch (e) {
      return this.calls.refused("multi", undefined, e);
    }
  }

  /** A builder over `multi`: chain ops, then `commit()`. */
  transaction(): Transaction {
    return new Transaction((ops) => this.multi(ops));
  }

  /**
   * Sets a persistent watch (server 3.6+) on the node or, PERSISTENT_RECURSIVE, its subtree; kept across reconnects.
   */
  addWatch(path: string, mode: AddWatchMode, watcher: Watcher, options?: CallOptions): Promise<void> {
    try {
      checkPath("addWatch", path);
      const w = checkWatcher("addWatch", path, watcher, true)!;
      if (mode !== AddWatchMode.PERSISTENT && mode !== AddWatchMode.PERSISTENT_RECURSIVE) throw badArguments(`mode must be an AddWatchMode, got ${String(mode)}`, "addWatch", path);
      const signal = signalOf("addWatch", path, options);
      // Abandoned (aborted) but set on the server: nobody listens to that watch, so it goes again.
      const abandoned = (err: number): void => void (err === ErrorCode.OK && this.calls.dropUnwatched(path));
      return this.calls.call(Ops.addWatch, { path, mode }, { op: "addWatch", path, needs: need(["persistentWatches"], "addWatch"), watcher: w, watchAs: persistentKind(mode), signal, abandoned, result: nothing });
    } catch (e) {
      return this.calls.refused("addWatch", path, e);
    }
  }

  /**
   * Removes one watcher (server 3.5+); the server's watch goes when no other local watcher needs it. NOWATCHER if unknown.
   */
  removeWatches(path: string, watcher: Watcher, type: WatcherType, options?: CallOptions): Promise<void> {
    return this.calls.trace("removeWatches", path, async () => {
      checkPath("removeWatches", path);
      checkWatcher("removeWatches", path, watcher, true);
      await removeWatchers(this.removal(signalOf("removeWatches", path, options)), "removeWatches", path, type, watcher);
    });
  }

  /** Removes every watcher of `type` on a path (server 3.5+), locally and on the server. NOWATCHER if none. */
  removeAllWatches(path: string, type: WatcherType, options?: CallOptions): Promise<void> {
    return this.calls.trace("removeAllWatches", path, async () => {
      checkPath("removeAllWatches", path);
      await removeWatchers(this.removal(signalOf("removeAllWatches", path, options)), "removeAllWatches", path, type, undefined);
    });
  }

  private removal(signal: AbortSignal | undefined): RemovalContext {
    return { calls: this.calls, deliver: (watchers, event) => this.deliver(watchers, event), features: this.serverFeatures, signal };
  }

  /**
   * A persistent watch as an async iterator (server 3.6+), removed when the loop ends or `signal` aborts;
   * it throws SESSIONEXPIRED on expiry and ends when the client closes.
   */
  watch(path: string, options: { recursive?: boolean; signal?: AbortSignal } = {}): AsyncIterable<WatchedEvent> {
    checkPath("watch", path);
    const mode = options.recursive ? AddWatchMode.PERSISTENT_RECURSIVE : AddWatchMode.PERSISTENT;
    const remove = (w: Watcher): Promise<void> => this.removeWatches(path, w, WatcherType.Any).catch(() => {});
    return watchIterator({ signal: options.signal, add: (w) => this.addWatch(path, mode, w), remove });
  }

  /** This session's ephemeral nodes whose path starts with `prefixPath` (inside the chroot; server 3.6+). */
  getEphemerals(prefixPath = "/", options?: CallOptions): Promise<string[]> {
    try {
      if (typeof prefixPath !== "string" || !prefixPath.startsWith("/")) throw badArguments("prefixPath must be a string starting with /", "getEphemerals", String(prefixPath));
      const body = { prefixPath: ephemeralsPrefix(this.chroot, prefixPath) };
      return this.calls.call(Ops.getEphemerals, body, { op: "getEphemerals", path: prefixPath, needs: need(["getEphemerals"], "getEphemerals"), signal: signalOf("getEphemerals", prefixPath, options), result: clientPaths });
    } catch (e) {
      return this.calls.refused("getEphemerals", prefixPath, e);
    }
  }

  /** The number of descendants of a node (server 3.6+). Server code: NONODE. */
  getAllChildrenNumber(path: string, options?: CallOptions): Promise<number> {
    const op = "getAllChildrenNumber";
    try {
      checkPath(op, path);
      return this.calls.call(Ops.getAllChildrenNumber, { path }, { op, path, needs: need(["getEphemerals"], op), signal: signalOf(op, path, options) });
    } catch (e) {
      return this.calls.refused(op, path, e);
    }
  }

  /** The identities the server gives this connection: ip, digest, sasl, x509 (server 3.7+). */
  whoAmI(options?: CallOptions): Promise<{ scheme: string; id: string }[]> {
    try {
      return this.calls.call(Ops.whoAmI, undefined, { op: "whoAmI", needs: need(["whoAmI"], "whoAmI"), signal: signalOf("whoAmI", undefined, options), result: identities });
    } catch (e) {
      return this.calls.refused("whoAmI", undefined, e);
    }
  }

  /** Reads several nodes in one round trip (3.6+); each read succeeds or fails on its own. */
  multiRead(ops: readonly ReadOp[], options?: CallOptions): Promise<ReadResult[]> {
    return this.calls.trace("multiRead", undefined, async () => multiRead(this.calls, ops, signalOf("multiRead", undefined, options)));
  }

  /** The ensemble's dynamic configuration (3.5+); `watcher` sees its next change. */
  getConfig(watcher?: Watcher, options?: CallOptions): Promise<ZooKeeperConfig> {
    return this.calls.trace("getConfig", undefined, async () => getConfig(this.calls, watcher, signalOf("getConfig", "/zookeeper/config", options)));
  }

  /** Changes the ensemble's membership (3.5+; the servers need reconfigEnabled=true and the caller the right to). */
  reconfig(options: ReconfigOptions, callOptions?: CallOptions): Promise<ZooKeeperConfig> {
    return this.calls.trace("reconfig", undefined, async () => reconfig(this.calls, options, signalOf("reconfig", undefined, callOptions)));
  }

  /**
   * Replaces the hosts this client connects to (a chroot in `connectString` is ignored), with the Java client's
   * rebalancing rule: a client whose server left moves; when the list grew, a client whose server stays moves
   * with probability 1 - old/new to one of the new servers; when it shrank, a client whose server stays stays.
   * A move drops the connection and reconnects, keeping the session (docs/client.md "Ensemble changes").
   */
  updateServerList(connectString: string): void {
    let hosts;
    try {
      hosts = parseConnectString(connectString).hosts;
    } catch (e) {
      throw badArguments(e instanceof ProtocolError ? e.message : String(e), "updateServerList");
    }
    // The caller manages the list from now on: a tracker would undo it at the next config change.
    (this.trackerStart !== null ? this.startedTracker() : this.tracker)?.off("updateServerList() was called: the caller manages the host list");
    this.session.updateHosts(hosts);
  }

  /**
   * Adds credentials, resent after every reconnect. AUTHFAILED when refused (the session is then finished).
   * With `signal`: an abort stops the wait only; the credentials stay stored for later reconnects.
   */
  addAuthInfo(scheme: string, auth: Uint8Array | string, options?: CallOptions): Promise<void> {
    return this.calls.trace("addAuthInfo", undefined, async () => {
      if (typeof scheme !== "string" || scheme === "") throw badArguments("scheme must be a non-empty string", "addAuthInfo");
      const bytes = toBytes("addAuthInfo", "/", auth);
      if (bytes === null) throw badArguments("auth must be a Uint8Array or a string", "addAuthInfo");
      const signal = signalOf("addAuthInfo", undefined, options);
      signal?.throwIfAborted();
      await raceSignal(this.addAuth(scheme, bytes), signal);
    });
  }
}

/** sync and addWatch resolve with nothing (a shared function: a call allocates none). */
const nothing = (): undefined => undefined;

/** multi of no ops: nothing is sent. */
const noResults = (): Promise<OpResult[]> => Promise.resolve([]);

export { Op };
