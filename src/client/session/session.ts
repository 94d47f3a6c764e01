// The session engine: walks the host list, performs the handshake through dial.ts, authenticates (SASL) and
// primes each new connection (auth, probes, SetWatches; the queued requests once connected), and moves between
// the states of session-states.ts by one checked transition(). Every frame goes out through `send`: the caller's
// calls and the client's own frames alike, as Pendings whose xids the connection writes as it queues them; the
// connections report to the session (ConnectionOwner) directly. connect()'s deadline and each attempt's: deadline.ts.
import { ErrorCode, KeeperState } from "../../protocol/constants.ts";
import type { HostPort } from "../../protocol/connect-string.ts";
import { Ops } from "../../protocol/ops.ts";
import type { ConnectResponse, WatcherEvent } from "../../protocol/records.ts";
import type { Connection } from "../wire/connection.ts";
import { type AttemptOwner, type DialContext, type Outcome, establish, leftTheList } from "./dial.ts";
import { ZooKeeperError } from "../errors.ts";
import { type ServerFeatures, type Verdict, featuresOf, learnFeatures, unsupported } from "./features.ts";
import { HostList } from "./hosts.ts";
import { clientExpiryAfter, leaseLeft } from "../wire/liveness.ts";
import { type AuthEntry, sendAuth, sendSetWatches, watchBatches } from "./priming.ts";
import { ReadOnlyProbe } from "./readonly-probe.ts";
import { type Call, type CallContext, type CallSpec, Pending, type Send, answer, encodeCall } from "../wire/call-record.ts";
import { type SaslClient, SaslRefused, saslExchange, saslRejected } from "../sasl/exchange.ts";
import type { Logger, SessionState } from "../types.ts";
import { type Clock, lateAware, sleepOn, systemClock } from "../clock.ts";
import { CLOSED_REASON, EXPIRED_ADVICE, type EndState, type Phase, checkTransition, endedError, publicState } from "./session-states.ts";
import type { SessionOptions } from "./session-options.ts";
import { isCertificateError } from "../transport/tls-errors.ts";
import { fourLetterWord } from "../transport/four-letter.ts";
import { ConnectDeadline } from "./deadline.ts";
import { type ConnectTrace, traceConnect, tracingConnects } from "../diagnostics.ts";
import { WaitQueue } from "./wait-queue.ts";
import { LostWrites } from "../outcome.ts";

export type { SaslClient, SessionOptions };

const KEEPER_STATE = { expired: KeeperState.Expired, authFailed: KeeperState.AuthFailed, closed: KeeperState.Closed } as const;

export class Session implements AttemptOwner, Verdict {
  negotiatedTimeout = 0;
  lastZxid = 0n;
  /** What the server of the current (or last) connection supports; re-learnt on every connection. */
  features: ServerFeatures = featuresOf("3.5-3.8");
  readonly clock: Clock;
  private readonly timers: Clock;
  private resumedAt = Number.NEGATIVE_INFINITY;
  /** A late timer, or a link callback after a stall: "resumed" once for all of them within 100 ms. */
  private readonly resumed = (): void => {
    const now = this.clock.now();
    if (now - this.resumedAt < 100) return;
    this.resumedAt = now;
    this.#o.events.onResume();
  };
  private phase: Phase = { kind: "connecting", attempt: null };
  private shown: SessionState = "connecting";
  /** The session to resume; `global` once a read-write server has known it (read-only sessions are per server). */
  #identity: { id: bigint; password: Uint8Array; global: boolean } | null = null;
  /** Private (#): it holds the TLS key material and SASL factory, which util.inspect must not show. */
  readonly #o: SessionOptions;
  /** What every request of this session shares (call-record.ts). */
  private readonly context: CallContext;
  /** Writes sent whose replies were lost, for judging a later attempt of the same write (outcome.ts). */
  readonly lost: LostWrites = new LostWrites(this);
  private readonly hosts: HostList;
  private readonly queue: WaitQueue;
  readonly #auths: AuthEntry[] = [];
  /**
   * connect()'s promise, made by start(): settled by the first "connected" or by the end, whichever comes first
   * (`firstDone` then; nothing to settle before start(), which connect() calls in the turn it makes the session).
   */
  private firstResolve: ((value: unknown) => void) | null = null;
  private firstReject: ((e: Error) => void) | null = null;
  /** What connect()'s promise resolves with (start()'s `value`). */
  private firstValue: unknown = undefined;
  private firstDone = false;
  /** Made by the loop's first sleep (most sessions never sleep); aborted when closing or ended, to wake it. */
  private halt: AbortController | null = null;
  private xid = 1;
  private lastHeard: number;
  private lastAcked = Number.NEGATIVE_INFINITY;
  private lastDialError: Error | null = null;
  private certFailures = 0;
  /** The last attempt's host name did not resolve (ENOTFOUND): the next host is dialled without the random pause. */
  private skipPause = false;
  /** Whether the connect loop runs (it stops once a connection is served), its attempts so far, and who waits for it to stop. */
  private looping = false;
  private attempts = 0;
  private loopStopped: (() => void) | null = null;
  /** The connection the loop established and served, until it ends (onClosed): its end starts the loop again. */
  private served: Connection | null = null;
  /** close()'s promise, for every call of it. */
  private closing: Promise<void> | null = null;
  /** connect()'s deadline (start() + connectTimeout) and each attempt's, on one timer (deadline.ts). */
  private readonly deadline: ConnectDeadline;

  constructor(o: SessionOptions) {
    this.#o = o;
    this.context = { chroot: o.chroot, maxBufferSize: o.maxBufferSize, watches: o.watches, credentials: o.credentials, lost: this.lost };
    this.clock = o.clock ?? systemClock;
    // The client's own timers run on the same clock, watched for lateness: a timer that fires late means
    // the process was stalled, and "resumed" goes out before that timer (or any link callback) acts.
    this.timers = lateAware(this.clock, this.resumed);
    this.queue = new WaitQueue(this.timers);
    this.deadline = new ConnectDeadline(this.timers, this);
    this.lastHeard = Number.NEGATIVE_INFINITY; // start() reads the clock
    this.hosts = new HostList(o.hosts);
    // A user-supplied id is a global session.
    if (o.sessionId !== undefined && o.sessionId !== 0n) this.#identity = { id: o.sessionId, password: o.sessionPassword ?? new Uint8Array(16), global: true };
    // The password lives in #identity only (private fields stay out of util.inspect and JSON): not in the options kept.
    o.sessionPassword = undefined;
  }

  get log(): Logger {
    return this.#o.logger;
  }

  get state(): SessionState {
    return this.shown;
  }

  get sessionId(): bigint {
    return this.#identity?.id ?? 0n;
  }

  get password(): Uint8Array {
    return this.#identity?.password ?? new Uint8Array(16);
  }

  /** Dialling for a first session or reconnecting: the loop runs. */
  private get dialling(): boolean {
    return this.phase.kind === "connecting" || this.phase.kind === "disconnected";
  }

  /** The connected state's connection (kept while close() sends closeSession on it), even once it has ended. */
  private sessionConn(): Connection | null {
    const p = this.phase;
    return p.kind === "connected" ? p.conn : p.kind === "closing" && (p.was === "connected" || p.was === "connectedReadOnly") ? p.conn : null;
  }

  /** The connection requests go on now: none once it has ended. */
  private liveConn(): Connection | null {
    const c = this.sessionConn();
    return c && !c.isClosed ? c : null;
  }

  /** Clock time of the last bytes received from a server of this session. */
  get lastHeardAt(): number {
    // A connection still dialling or handshaking has heard nothing yet: it must not look fresh.
    return this.sessionConn()?.lastReceived ?? this.lastHeard;
  }

  /** Clock time the last request the server acknowledged was sent (liveness.ts: the lease). */
  get ackedSendAt(): number {
    if (this.phase.kind === "ended") return Number.NEGATIVE_INFINITY;
    return this.sessionConn()?.ackedSendAt ?? this.lastAcked;
  }

  /** ms until an acknowledged send is older than `within` (0 when it already is, or the session ended). */
  leaseRemaining(within: number): number {
    return leaseLeft(this.clock.now(), this.ackedSendAt, within);
  }

  /** The remote address of the live connection ("host:port"), if any. */
  get remote(): string | null {
    return this.liveConn()?.remote ?? null;
  }

  /** Runs the connect loop; resolves with `value` once the first session is established. */
  start<T>(value: T): Promise<T> {
    const now = this.clock.now();
    this.lastHeard = now;
    this.deadline.start(this.#o.connectTimeout, now);
    this.firstValue = value;
    const promise = new Promise<T>((resolve, reject) => {
      this.firstResolve = resolve as (value: unknown) => void;
      this.firstReject = reject;
    });
    this.startLoop(false);
    return promise;
  }

  /** connect()'s deadline passed (ConnectDeadline calls it). */
  connectTimedOut(): void {
    if (this.phase.kind !== "connecting") return;
    // Every host refused (or its name did not resolve) on its last dial: say that, not just the last error.
    const unreachable = this.hosts.unreachable();
    const last = unreachable !== null ? `: ${unreachable}` : this.lastDialError ? `; last error: ${this.lastDialError.message}` : "";
    this.end("closed", ErrorCode.CONNECTIONLOSS, `no session established within ${this.#o.connectTimeout} ms${last}`);
  }

  // --- states ---

  /** The one way the phase changes: checked against TRANSITIONS, the old state's data released, then emitted. */
  private transition(next: Phase): void {
    const prev = this.phase;
    checkTransition(prev.kind, next.kind);
    this.phase = next;
    if (prev.kind === "connected") prev.probe?.stop();
    if (prev.kind === "disconnected" && prev.expiry !== null) this.timers.clearTimeout(prev.expiry);
    if (next.kind === "closing" || next.kind === "ended") {
      this.halt?.abort("the session is closing");
      this.#o.sasl?.close?.(); // GSSAPI: the TGT renewal timer
    }
    if (next.kind === "connected" && !this.firstDone) this.firstSettled(null);
    if (next.kind === "ended") this.failEverything(prev, next);
    const shown = publicState(next);
    if (shown !== this.shown) {
      this.shown = shown;
      this.#o.events.onState(shown);
    }
    if (next.kind === "ended" && !this.#o.watches.isEmpty) {
      // Nobody to tell when no watch is left (most sessions end so): no event is built.
      this.#o.events.onSessionEvent(KEEPER_STATE[next.state]);
      this.#o.watches.clear();
    }
  }

  private failEverything(prev: Phase, end: { code: ErrorCode; reason: string }): void {
    const conn = prev.kind === "connected" || prev.kind === "closing" ? prev.conn : prev.kind === "ended" ? null : prev.attempt;
    conn?.close(end.reason, end.code);
    this.queue.failAll(end.code, end.reason);
    // Made only when someone waits (an Error's stack trace is a good part of the cost of a short session).
    let err: ZooKeeperError | null = null;
    const error = (): ZooKeeperError => (err ??= new ZooKeeperError(end.code, end.reason));
    for (const a of this.#auths) for (const w of a.waiters.splice(0)) w.reject(error());
    if (!this.firstDone) this.firstSettled(error());
  }

  /** connect()'s promise settles (with `error`, or resolves): the connect timeout has done its part. */
  private firstSettled(error: Error | null): void {
    this.firstDone = true;
    this.deadline.settled();
    const resolve = this.firstResolve;
    const reject = this.firstReject;
    const value = this.firstValue;
    this.firstResolve = this.firstReject = null;
    this.firstValue = undefined;
    if (error === null) resolve?.(value);
    else reject?.(error);
  }

  /** Enters the final state (once): fails everything, tells every watcher, stops the loop. */
  private end(state: EndState, code: ErrorCode, reason: string): void {
    if (this.phase.kind !== "ended") this.transition({ kind: "ended", state, code, reason });
  }

  // --- the connect loop ---

  /**
   * The connect loop: dials host after host until a connection is established and served, or the session ends. It is
   * callbacks, not an async function: a session that connects at once makes no promise for it. While the session is
   * served it does not run: the served connection's end (onClosed) starts it again, `reconnect` (the random pause first).
   */
  private startLoop(reconnect: boolean): void {
    this.looping = true;
    this.attempts = reconnect ? 1 : 0;
    this.nextAttempt();
  }

  /** The loop has stopped: a connection is served, or the session ended (close() may be waiting for that). */
  private stopLoop(): void {
    this.looping = false;
    const stopped = this.loopStopped;
    this.loopStopped = null;
    stopped?.();
  }

  /** The next host, after the pause between attempts. */
  private nextAttempt(): void {
    if (!this.dialling) return this.stopLoop();
    const { host, delayMs } = this.hosts.next();
    // After the first attempt, wait a random 0-1 s (and 1 s more after a full pass) like the Java client;
    // a host whose name did not resolve is skipped: no random pause after it (the full pass's stays).
    const delay = this.attempts++ === 0 ? 0 : delayMs + (this.skipPause ? 0 : Math.random() * 1000);
    this.skipPause = false;
    if (delay > 0) sleepOn(this.timers, delay, (this.halt ??= new AbortController()).signal).then(() => this.attempt(host)); // cut short by close() or the end
    else this.attempt(host);
  }

  private attempt(host: HostPort): void {
    if (!this.dialling) return this.stopLoop();
    const traced = tracingConnects() ? traceConnect(host.host, host.port) : null; // zookeeper-ts:connect
    establish(this.dialContext(), host, (out) => this.attempted(host, out, traced));
  }

  /** The attempt's outcome: the SASL exchange, then the priming, on an established connection. */
  private attempted(host: HostPort, out: Outcome, traced: ConnectTrace | null): void {
    if (out.kind === "established" && !this.hosts.has(host.host, host.port)) out = leftTheList(out.conn, host); // updateServerList() meanwhile
    if (out.kind === "established" && out.mech) {
      const established = out;
      this.authenticate(out.conn, out.mech).then((o) => this.primeThen(host, o ?? established, traced));
    } else this.primeThen(host, out, traced);
  }

  private primeThen(host: HostPort, out: Outcome, traced: ConnectTrace | null): void {
    if (out.kind === "established") {
      const established = out;
      const primed = this.prime(out.conn); // a promise only when the server's features are awaited
      if (primed instanceof Promise) {
        primed.then((o) => this.settleAttempt(host, o ?? established, traced));
        return;
      }
      out = primed ?? out;
    }
    this.settleAttempt(host, out, traced);
  }

  /** The attempt is over: served, or the next one, or the loop stops. */
  private settleAttempt(host: HostPort, out: Outcome, traced: ConnectTrace | null): void {
    if (out.kind === "established" && (out.conn.isClosed || !this.dialling)) out = { kind: "failed", error: new Error("connection lost while priming") };
    traced?.settled(out.kind === "established" ? this.sessionId : null, out.kind === "failed" ? out.error : out.kind === "fatal" ? new Error(out.reason) : undefined);
    if (out.kind === "stopped" || !this.dialling) return this.stopLoop();
    if (out.kind === "fatal") {
      this.end(out.state, out.code, out.reason);
      return this.stopLoop();
    }
    if (out.kind === "failed") {
      this.attemptFailed(host, out.error);
      return this.nextAttempt();
    }
    this.certFailures = 0;
    this.lastDialError = null;
    this.stopLoop(); // before serve(): its "connected" listeners may already end the connection (onClosed)
    this.serve(out.conn, out.res, host);
  }

  private attemptFailed(host: HostPort, e: Error): void {
    const p = this.phase;
    if (p.kind === "connecting" || p.kind === "disconnected") p.attempt = null;
    this.lastDialError = e;
    this.hosts.failed(host, e);
    this.log.debug(`zookeeper: connect to ${host.host}:${host.port} failed: ${e.message}`);
    this.certFailures = isCertificateError(e) ? this.certFailures + 1 : 0;
    this.skipPause = (e as { code?: unknown }).code === "ENOTFOUND";
    if (p.kind === "connecting" && this.certFailures >= this.hosts.size) this.end("closed", ErrorCode.CONNECTIONLOSS, e.message);
    else this.armClientExpiry();
  }

  /** Connected on `conn` until it ends (onClosing: "disconnected", unless close() or the end came first; onClosed: the loop again). */
  private serve(conn: Connection, res: ConnectResponse, host: HostPort): void {
    this.served = conn;
    this.hosts.connected(host);
    const readOnly = res.readOnly;
    const state: Phase = { kind: "connected", conn, host, readOnly, probe: null };
    // Everything queued while not connected goes first, before anything the "connected" event's listeners send.
    if (this.queue.length > 0) this.queue.release((p) => this.transmit(conn, p)); // most connections find nothing waiting: no closure
    this.transition(state);
    if (readOnly) state.probe = this.startReadOnlyProbe(host);
  }

  // --- what the connections report (ConnectionOwner) ---

  /**
   * A connection is ending: when it is the session's, "disconnected" now (the state event emitted, `state`
   * reading it), before the connection fails its requests with CONNECTIONLOSS (go-zookeeper's order).
   */
  onClosing(conn: Connection): void {
    const p = this.phase;
    if (p.kind !== "connected" || p.conn !== conn) return;
    this.lastHeard = conn.lastReceived;
    this.lastAcked = conn.ackedSendAt;
    this.transition({ kind: "disconnected", since: this.clock.now(), expiry: null, attempt: null });
    this.armClientExpiry();
  }

  /**
   * A connection has ended, its requests failed. When it was the one served, the loop dials again, in a microtask
   * queued after those failures' (their callers see them first, and may close() the session before it dials).
   */
  onClosed(conn: Connection): void {
    if (conn !== this.served) return;
    this.served = null;
    this.lastHeard = conn.lastReceived;
    this.lastAcked = conn.ackedSendAt;
    if (this.dialling) {
      queueMicrotask(() => {
        if (this.dialling && !this.looping) this.startLoop(true);
      });
    }
  }

  /** A reply to one of the caller's requests carried `zxid`. */
  onZxid(zxid: bigint): void {
    if (zxid > this.lastZxid) this.lastZxid = zxid;
  }

  /** A link callback came while this process was stalled. */
  onResume(): void {
    this.resumed();
  }

  onNotification(ev: WatcherEvent, zxid: bigint): void {
    // Only 3.9+ servers put the change's zxid on a notification (-1 before, and for catch-up events).
    if (zxid !== -1n && !this.features.eventZxid) this.features = featuresOf("3.9+");
    const watchers = this.#o.watches.trigger(ev.type, ev.path);
    this.#o.events.onWatchEvent(ev, zxid, watchers);
  }

  /** The next xid (1 to 2^31-1, then 1 again), taken by a connection as it queues a frame. */
  nextXid(): number {
    const xid = this.xid;
    this.xid = xid >= 0x7fffffff ? 1 : xid + 1;
    return xid;
  }

  private dialContext(): DialContext {
    const o = this.#o;
    const id = this.#identity;
    return {
      dialer: o.dialer, tls: o.tls, resolver: o.resolver, sasl: o.sasl, clock: this.timers, logger: o.logger, maxBufferSize: o.maxBufferSize,
      sessionTimeout: o.sessionTimeout, connectTimeout: o.connectTimeout, readOnly: o.readOnly, hostCount: this.hosts.size,
      negotiatedTimeout: this.negotiatedTimeout, lastZxid: this.lastZxid, first: this.phase.kind === "connecting",
      deadline: this.deadline,
      // A session made by a read-only server is only valid there: start over until a r/w server was seen.
      resume: id?.global ? id : null,
      session: this,
    };
  }

  // --- what an attempt reports (AttemptOwner: methods, not closures made per attempt) ---

  /** The session ended (or is closing): the attempt gives up. */
  attemptStopped(): boolean {
    return !this.dialling;
  }

  /** The attempt's connection exists (so ending the session can close it). */
  attempting(c: Connection): void {
    const p = this.phase;
    if (p.kind === "connecting" || p.kind === "disconnected") p.attempt = c;
  }

  /** The handshake is accepted: the session's id, password and timeout. */
  accepted(res: ConnectResponse, heardAt: number): void {
    this.negotiatedTimeout = res.timeOut;
    // The identity the attempt was made with (accepted() is the only change to it while an attempt runs).
    const id = this.#identity;
    this.#identity = { id: res.sessionId, password: res.passwd, global: (id?.global ?? false) || !res.readOnly };
    this.lastHeard = heardAt;
    const p = this.phase;
    if (p.kind === "disconnected" && p.expiry !== null) {
      this.timers.clearTimeout(p.expiry);
      p.expiry = null;
    }
  }

  /** The SASL exchange on a fresh connection, before anything else is sent on it. */
  private async authenticate(conn: Connection, mech: SaslClient): Promise<Outcome | undefined> {
    const send = (token: Uint8Array): Promise<Uint8Array | null> =>
      answer(this.send, Ops.sasl, { token }, { op: "sasl", lane: "own", via: conn }).then((r) => {
        if (r.err !== 0) throw saslRejected(r.err);
        return r.value?.token ?? null;
      });
    try {
      await saslExchange(send, mech);
    } catch (e) {
      if (!(e instanceof SaslRefused)) return { kind: "failed", error: e as Error };
      conn.close(e.message);
      return { kind: "fatal", state: "authFailed", code: ErrorCode.AUTHFAILED, reason: e.message };
    }
    if (conn.isClosed || !this.dialling) return { kind: "failed", error: new Error("connection lost while priming") };
    return undefined;
  }

  /**
   * Auth packets, the feature probes, SetWatches batches, then everything queued while disconnected. Not a
   * promise when the server was seen before at 3.5+ (connected at once on what it had): no turn of the
   * microtask queue for it.
   */
  private prime(conn: Connection): Outcome | undefined | Promise<Outcome | undefined> {
    for (const a of this.#auths) sendAuth(this.send, conn, a, (x) => this.authRefused(x));
    // A server seen before at 3.5+: connected now on what it had; the probes' replies (ahead of every
    // later request's on this link) set the truth, or end the link or the session as awaiting them would.
    const learnt = learnFeatures(conn, this.#o.servers, this.send, this);
    if (learnt instanceof Promise) return this.primeProbed(conn, learnt);
    this.features = learnt;
    return this.primed(conn);
  }

  /** The later probes of `conn` (Verdict): what its server supports now. */
  featuresLearnt(conn: Connection, f: ServerFeatures): void {
    if (this.sessionConn() === conn) this.features = f;
  }

  /** The later probes of `conn` (Verdict) failed: SASL required ends the session, a 3.4 server the link. */
  featuresFailed(conn: Connection, e: Error): void {
    if (this.phase.kind === "closing" || this.phase.kind === "ended") return; // dropped by close(), or moot
    if (e instanceof ZooKeeperError && this.sessionConn() === conn) this.end("authFailed", e.code, e.message);
    else conn.close(e.message); // downgraded to 3.4: reconnect and probe one at a time
  }

  /** prime() once the probes of a server not seen before (or seen at 3.4) are answered. */
  private async primeProbed(conn: Connection, learnt: Promise<ServerFeatures>): Promise<Outcome | undefined> {
    try {
      this.features = await learnt;
    } catch (e) {
      if (e instanceof ZooKeeperError) return { kind: "fatal", state: "authFailed", code: e.code, reason: e.message };
      return { kind: "failed", error: new Error("connection lost while priming") };
    }
    return this.primed(conn);
  }

  /** The end of prime(): the link must still be up, then the SetWatches batches. */
  private primed(conn: Connection): Outcome | undefined {
    if (conn.isClosed || !this.dialling) return { kind: "failed", error: new Error("connection lost while priming") };
    // Relative to the last zxid of a reply to the caller's requests (Pending.tracksZxid): the probes' and
    // SetWatches' replies never move it, or a link cut after them and before the catch-up notifications would lose them.
    // The queued requests follow them, when the session is connected (serve()).
    sendSetWatches(this.send, conn, watchBatches(this.#o.watches, this.lastZxid), this.features, this.log);
    return undefined;
  }

  private authRefused(a: AuthEntry): void {
    this.end("authFailed", ErrorCode.AUTHFAILED, `authentication with scheme ${a.scheme} failed`);
  }

  // --- requests ---

  /**
   * The one way a frame goes out. The caller's calls ("call" lane) go on the live connection, or wait for the next
   * one (never longer than a session could survive); the client's own frames ("own" lane) go on their link `via`,
   * or fail CONNECTIONLOSS. Resolves with the decoded (and `result`-mapped) reply; rejects with a ZooKeeperError.
   */
  readonly send: Send = <Req, Res, Out = Res>(spec: CallSpec<Req, Res>, body: Req, call: Call<Res, Out>): Promise<Out> => {
    const own = call.lane === "own";
    if (!own && (this.phase.kind === "closing" || this.phase.kind === "ended")) return Promise.reject(endedError(this.shown, call));
    // Encoded here, outside the promise's executor: each of the two then has an inlining budget of its own.
    let frame: Uint8Array;
    try {
      frame = encodeCall(spec, body, call, this.context);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<Out>((resolve, reject) => {
      const p = new Pending(spec, frame, call, this.context, resolve, reject);
      if (own) {
        if (call.via) call.via.send(p);
        else p.onFail(ErrorCode.CONNECTIONLOSS, "no connection to send on", false);
        return;
      }
      if (p.abandoned) return; // its signal had aborted already: never sent
      // The live connection (liveConn(), for a session neither closing nor ended: those were refused above).
      const ph = this.phase;
      if (ph.kind === "connected" && !ph.conn.isClosed) this.transmit(ph.conn, p);
      // Not connected: wait for the next connection, but never longer than a session could survive.
      else this.queue.push(p, this.negotiatedTimeout || this.#o.connectTimeout);
    });
  };

  private transmit(conn: Connection, p: Pending): void {
    // An op this server does not know would get UNIMPLEMENTED and the link closed: refuse it here.
    const needs = p.needs;
    const why = needs === undefined ? null : unsupported(this.features, needs);
    if (why !== null) p.onFail(ErrorCode.UNIMPLEMENTED, why);
    else conn.send(p);
  }

  /**
   * updateServerList: new hosts, taken with the Java client's rebalancing rule (hosts.ts `rebalance`). When it
   * says move, the connection is dropped and the session reconnects (to the host the rule draws), keeping the
   * session. Returns whether the client moves.
   */
  updateHosts(hosts: readonly HostPort[]): boolean {
    if (hosts.length === 0) return false;
    const p = this.phase;
    const connected = p.kind === "connected" && !p.conn.isClosed;
    const move = this.hosts.rebalance(hosts, connected ? p.host : null);
    if (connected && move) p.conn.close(this.hosts.has(p.host.host, p.host.port) ? "rebalancing over the new server list" : "the server is no longer in the server list");
    return move;
  }

  /** Stores credentials (replayed on every reconnect) and sends them now when connected. */
  addAuth(scheme: string, auth: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.phase.kind === "closing" || this.phase.kind === "ended") {
        reject(endedError(this.shown, { op: "addAuthInfo" }));
        return;
      }
      const entry: AuthEntry = { scheme, auth, waiters: [{ resolve, reject }] };
      this.#auths.push(entry);
      const conn = this.liveConn();
      if (conn) sendAuth(this.send, conn, entry, (x) => this.authRefused(x));
    });
  }

  // --- read-only probing ---

  private startReadOnlyProbe(current: HostPort): ReadOnlyProbe | null {
    if (this.hosts.size < 2) return null;
    const o = this.#o;
    // Its four-letter words go through the same Transport and clock as the session.
    const fourLetter = (host: HostPort, cmd: string): Promise<string> => fourLetterWord(o.dialer, this.clock, host, cmd, 2000, o.tls, o.resolver);
    return new ReadOnlyProbe({
      hosts: this.hosts.all,
      current,
      fourLetter,
      clock: this.clock,
      active: () => this.shown === "connectedReadOnly",
      onFound: (h) => {
        this.log.info(`zookeeper: read-write server ${h.host}:${h.port} found; moving to it`);
        this.hosts.preferNext(h);
        if (this.phase.kind === "connected") this.phase.conn.close("moving to a read-write server");
      },
    });
  }

  // --- expiry, teardown ---

  /** Client-side expiry, armed while disconnected: 4/3 of the session timeout after the server was last heard. */
  private armClientExpiry(): void {
    const p = this.phase;
    if (p.kind !== "disconnected" || p.expiry !== null || !this.#o.clientSideExpiry || this.negotiatedTimeout <= 0) return;
    const limit = clientExpiryAfter(this.negotiatedTimeout);
    const left = Math.max(0, limit - (this.clock.now() - this.lastHeard));
    p.expiry = this.timers.setTimeout(() => {
      p.expiry = null;
      if (this.phase === p) this.end("expired", ErrorCode.SESSIONEXPIRED, `no server reachable for ${Math.round(limit)} ms; the session has expired; ${EXPIRED_ADVICE}`);
    }, left);
  }

  /** Ends the session on the server (closeSession) and stops; every call has the first one's promise. */
  close(): Promise<void> {
    return (this.closing ??= new Promise<void>((resolve) => this.closeThen(resolve)));
  }

  /** close()'s work: `done` once the session has ended (and a loop still dialling with it). */
  private closeThen(done: () => void): void {
    const p = this.phase;
    if (p.kind !== "closing" && p.kind !== "ended") {
      // From here on the server's close of the socket is expected: no "disconnected", no reconnect.
      this.transition({ kind: "closing", was: this.shown, conn: p.kind === "connected" ? p.conn : p.attempt });
      const conn = this.liveConn();
      if (conn) {
        conn.dropBeforeNextWrite(); // the unsent feature probes: their answers are moot now
        // The answer (or the link's end) is awaited at most 5 s, or the session timeout if shorter: the
        // connection's tick watches that (no timer of its own; up to one tick, at most 1 s, later).
        conn.endWithin(Math.min(this.negotiatedTimeout || 5000, 5000));
        // Its answer or the link's end: either way the session ends then. Sent as send()'s own lane sends, with
        // callbacks in place of a promise (close()'s is the only one).
        const ended = (): void => this.closed(done);
        const call: Call<void, void> = { op: "close", lane: "own", via: conn };
        conn.send(new Pending(Ops.closeSession, encodeCall(Ops.closeSession, undefined, call, this.context), call, this.context, ended, ended));
        return;
      }
    }
    this.closed(done);
  }

  /** The end of close(): the session ends (if it had not), then `done`, after a loop still dialling has stopped. */
  private closed(done: () => void): void {
    this.end("closed", ErrorCode.SESSIONEXPIRED, CLOSED_REASON);
    if (this.looping) this.loopStopped = done;
    else done();
  }
}
