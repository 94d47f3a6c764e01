// The session engine: walks the host list, performs the handshake (and SASL), primes each new
// connection (auth, then SetWatches, then queued requests), runs requests through the current
// connection, and moves between the public states only on real transitions.
import { ErrorCode, KeeperState, OpCode } from "../protocol/constants.ts";
import type { HostPort } from "../protocol/connect-string.ts";
import { encodeRequest } from "../protocol/frame.ts";
import { JuteWriter } from "../protocol/jute.ts";
import { Connection, type InFlight } from "./connection.ts";
import { ZooKeeperError } from "./errors.ts";
import { type ServerFeatures, featuresOf, probeFeatures, unsupported } from "./features.ts";
import { HostList } from "./hosts.ts";
import { type AuthEntry, sendAuth, sendSetWatches, watchBatches } from "./priming.ts";
import { ReadOnlyProbe } from "./readonly-probe.ts";
import { type Request, encodeUserRequest, inFlightFor, patchXid } from "./request.ts";
import { type SaslClient, SaslRefused, saslExchange } from "./sasl-exchange.ts";
import { type Clock, type TimerHandle, systemClock } from "./clock.ts";
import { isCertificateError } from "./tls-errors.ts";
import type { Dialer } from "./transport.ts";
import { WaitQueue } from "./wait-queue.ts";
import type { SessionState, Logger, WatchedEvent } from "./types.ts";
import type { WatchRegistry } from "./watches.ts";
import type { ConnectionOptions as TlsOptions } from "node:tls";

export type { Request, SaslClient };

export interface SessionOptions {
  hosts: readonly HostPort[];
  sessionTimeout: number;
  connectTimeout: number;
  readOnly: boolean;
  tls?: boolean | TlsOptions;
  sasl?: () => SaslClient;
  sessionId?: bigint;
  sessionPassword?: Uint8Array;
  maxBufferSize: number;
  clientSideExpiry: boolean;
  logger: Logger;
  dialer: Dialer;
  /** Timers and "now" for everything the session runs (default: the runtime's). */
  clock?: Clock;
  watches: WatchRegistry;
  onState(state: SessionState): void;
  onWatchEvent(event: { type: number; state: number; path: string; zxid: bigint }, watchers: Iterable<(e: WatchedEvent) => void>): void;
  /** Session-wide events (expiry, close) for every registered watcher. */
  onSessionEvent(state: number): void;
  fourLetter?: (host: HostPort, cmd: string) => Promise<string>;
}

const TERMINAL: ReadonlySet<SessionState> = new Set(["expired", "authFailed", "closed"]);

export class Session {
  state: SessionState = "connecting";
  sessionId = 0n;
  password: Uint8Array = new Uint8Array(16);
  negotiatedTimeout = 0;
  lastZxid = 0n;
  /** What the server of the current (or last) connection supports; re-learnt on every connection. */
  features: ServerFeatures = featuresOf("3.5-3.8");
  private readonly o: SessionOptions;
  private readonly hosts: HostList;
  private readonly writer = new JuteWriter(1024);
  private readonly clock: Clock;
  private readonly queue: WaitQueue;
  private readonly auths: AuthEntry[] = [];
  private conn: Connection | null = null;
  private connHost: HostPort | null = null;
  private xid = 1;
  private seenRwServer = false;
  private closing = false;
  private sleeping: { wake(): void } | null = null;
  private expiryTimer: TimerHandle | null = null;
  private roProbe: ReadOnlyProbe | null = null;
  private lastHeard: number;
  private lastDialError: Error | null = null;
  private certFailures = 0;
  private firstConnect: { resolve(): void; reject(e: Error): void } | null = null;
  private loop: Promise<void> | null = null;
  private readonly closedWaiters = new Map<Connection, () => void>();

  constructor(o: SessionOptions) {
    this.o = o;
    this.clock = o.clock ?? systemClock;
    this.queue = new WaitQueue(this.clock);
    this.lastHeard = this.clock.now();
    this.hosts = new HostList(o.hosts);
    if (o.sessionId !== undefined && o.sessionId !== 0n) {
      this.sessionId = o.sessionId;
      this.password = o.sessionPassword ?? new Uint8Array(16);
      this.seenRwServer = true; // a user-supplied id is a global session
    }
  }

  get log(): Logger {
    return this.o.logger;
  }

  get connected(): boolean {
    return this.state === "connected" || this.state === "connectedReadOnly";
  }

  get terminal(): boolean {
    return TERMINAL.has(this.state);
  }

  /** Clock time of the last bytes received from a server of this session. */
  get lastHeardAt(): number {
    // A connection still dialling or handshaking has heard nothing yet: it must not look fresh.
    const c = this.conn;
    return c && !c.closed && this.connected ? c.lastReceived : this.lastHeard;
  }

  /** The remote address of the live connection ("host:port"), if any. */
  get remote(): string | null {
    const c = this.conn;
    return c && !c.closed && this.connected ? c.link.remote : null;
  }

  /** Runs the connect loop; resolves once the first session is established. */
  start(): Promise<void> {
    const first = new Promise<void>((resolve, reject) => (this.firstConnect = { resolve, reject }));
    const timer = this.clock.setTimeout(() => {
      if (!this.firstConnect) return;
      const last = this.lastDialError ? `; last error: ${this.lastDialError.message}` : "";
      this.finish("closed", ErrorCode.CONNECTIONLOSS, `no session established within ${this.o.connectTimeout} ms${last}`);
    }, this.o.connectTimeout);
    first.then(() => this.clock.clearTimeout(timer), () => this.clock.clearTimeout(timer));
    this.loop = this.run();
    return first;
  }

  // --- the connect loop ---

  private async run(): Promise<void> {
    let attempt = 0;
    while (!this.terminal) {
      const { host, delayMs } = this.hosts.next();
      // After the first attempt, wait a random 0-1 s (and 1 s more after a full pass) like the Java client.
      const delay = attempt++ === 0 ? 0 : delayMs + Math.random() * 1000;
      if (delay > 0) await this.sleep(delay);
      if (this.terminal) break;
      let conn: Connection;
      try {
        conn = await this.establish(host);
      } catch (e) {
        if (this.terminal) break;
        this.lastDialError = e as Error;
        this.log.debug(`zookeeper: connect to ${host.host}:${host.port} failed: ${(e as Error).message}`);
        this.certFailures = isCertificateError(e) ? this.certFailures + 1 : 0;
        if (this.firstConnect && this.certFailures >= this.hosts.size) {
          this.finish("closed", ErrorCode.CONNECTIONLOSS, (e as Error).message);
          break;
        }
        if (!this.firstConnect) this.armClientExpiry();
        continue;
      }
      attempt = 1;
      this.certFailures = 0;
      this.lastDialError = null;
      await new Promise<void>((resolve) => this.whenClosed(conn, resolve));
      this.lastHeard = conn.lastReceived;
      this.conn = null;
      this.roProbe?.stop();
      this.roProbe = null;
      if (!this.terminal && !this.closing) {
        this.setState("disconnected");
        this.armClientExpiry();
      }
      if (this.closing) break;
    }
  }

  private whenClosed(conn: Connection, fn: () => void): void {
    if (conn.closed) fn();
    else this.closedWaiters.set(conn, fn);
  }

  private async establish(host: HostPort): Promise<Connection> {
    let perHost = Math.max(1000, (this.negotiatedTimeout || this.o.sessionTimeout) / this.hosts.size);
    // Before the first session, one stuck attempt (a peer that never answers nor closes) must not use
    // up the whole connectTimeout: leave room for at least one more try.
    if (this.firstConnect) perHost = Math.min(perHost, Math.max(500, this.o.connectTimeout / 2));
    // Link events that come before the Connection exists are kept and replayed, never dropped: a
    // runtime may emit the TLS 1.3 refusal (an error, then close) in the same turn as the handshake,
    // before this await resumes; dropping it left the attempt waiting out perHost for a ConnectResponse.
    let conn: Connection | null = null;
    const early: ((c: Connection) => void)[] = [];
    const on = (f: (c: Connection) => void): void => {
      if (conn) f(conn);
      else early.push(f);
    };
    const link = await this.o.dialer(
      host,
      {
        onData: (chunk) => on((c) => c.handleData(chunk)),
        onDrain: () => on((c) => c.handleDrain()),
        onClose: (err) => on((c) => c.handleClose(err)),
      },
      { tls: this.o.tls, timeoutMs: perHost },
    );
    if (this.terminal || this.closing) {
      link.close();
      throw new Error("session ended while connecting");
    }
    const c = new Connection(link, { maxBufferSize: this.o.maxBufferSize, logger: this.o.logger, clock: this.clock });
    this.conn = c;
    this.connHost = host;
    const events = {
      onNotification: (ev: { type: number; state: number; path: string }, zxid: bigint) => this.notify({ ...ev, zxid }),
      onZxid: (zxid: bigint) => {
        if (zxid > this.lastZxid) this.lastZxid = zxid;
      },
      onClosed: () => {
        const waiter = this.closedWaiters.get(c);
        this.closedWaiters.delete(c);
        waiter?.();
      },
    };
    const resuming = this.sessionId !== 0n && this.seenRwServer;
    const handshake = c.connect(
      {
        protocolVersion: 0,
        lastZxidSeen: this.lastZxid,
        timeOut: this.o.sessionTimeout,
        // A session made by a read-only server is only valid there: start over until a r/w server was seen.
        sessionId: resuming ? this.sessionId : 0n,
        passwd: resuming ? this.password : new Uint8Array(16),
        readOnly: this.o.readOnly,
      },
      perHost,
      events,
    );
    conn = c;
    for (const f of early.splice(0)) f(c);
    const res = await handshake;
    if (res.timeOut <= 0) {
      c.close("session expired");
      this.finish("expired", ErrorCode.SESSIONEXPIRED, `session 0x${this.sessionId.toString(16)} has expired`);
      throw new Error("session expired");
    }
    if (resuming && res.sessionId !== this.sessionId) {
      // Cannot happen with a correct server; treat it like an expiry rather than mix two sessions.
      c.close("server answered with another session");
      this.finish("expired", ErrorCode.SESSIONEXPIRED, `server 0x${res.sessionId.toString(16)} answered for session 0x${this.sessionId.toString(16)}`);
      throw new Error("session mismatch");
    }
    this.negotiatedTimeout = res.timeOut;
    this.sessionId = res.sessionId;
    this.password = res.passwd;
    if (!res.readOnly) this.seenRwServer = true;
    this.lastHeard = this.clock.now();
    this.disarmClientExpiry();
    c.startTimers(res.timeOut);
    if (this.o.sasl) {
      try {
        await saslExchange(c, this.o.sasl(), () => this.nextXid(), this.writer);
      } catch (e) {
        if (e instanceof SaslRefused) {
          c.close(e.message);
          this.finish("authFailed", ErrorCode.AUTHFAILED, e.message);
        }
        throw e;
      }
    }
    if (c.closed || this.terminal) throw new Error("connection lost while priming");
    await this.prime(c);
    this.hosts.connected();
    this.setState(res.readOnly ? "connectedReadOnly" : "connected");
    if (res.readOnly) this.startReadOnlyProbe(host);
    this.firstConnect?.resolve();
    this.firstConnect = null;
    return c;
  }

  /** Auth packets, the feature probes, SetWatches batches, then everything queued while disconnected. */
  private async prime(conn: Connection): Promise<void> {
    for (const a of this.auths) sendAuth(conn, a, this.writer, (x) => this.authRefused(x));
    const relativeZxid = this.lastZxid; // the probes' replies move lastZxid; catch-up is relative to before
    try {
      this.features = await probeFeatures(conn, () => this.nextXid(), this.writer);
    } catch (e) {
      if (e instanceof ZooKeeperError) this.finish("authFailed", e.code, e.message);
      throw new Error("connection lost while priming");
    }
    if (conn.closed || this.terminal) throw new Error("connection lost while priming");
    let batches = watchBatches(this.o.watches, relativeZxid);
    if (!this.features.persistentWatches && batches.some((b) => b.persistentWatches.length + b.persistentRecursiveWatches.length > 0)) {
      // A server older than the one that took them (a downgrade mid-session): SetWatches2 would drop the link.
      this.log.warn(`zookeeper: server ${conn.link.remote} is ZooKeeper ${this.features.generation}: persistent watches are not re-registered`);
      batches = batches.map((b) => ({ ...b, persistentWatches: [], persistentRecursiveWatches: [] }));
    }
    sendSetWatches(conn, batches, () => this.nextXid(), this.writer, this.log);
    this.queue.release((frame, inFlight) => this.transmit(conn, frame, inFlight));
  }

  private authRefused(a: AuthEntry): void {
    this.finish("authFailed", ErrorCode.AUTHFAILED, `authentication with scheme ${a.scheme} failed`);
  }

  // --- requests ---

  private nextXid(): number {
    const xid = this.xid;
    this.xid = xid >= 0x7fffffff ? 1 : xid + 1;
    return xid;
  }

  /** Sends a request now when connected, otherwise queues it until the next connection. */
  submit<T>(req: Request<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.terminal || this.closing) {
        reject(this.terminalError(req));
        return;
      }
      let frame: Uint8Array;
      try {
        frame = encodeUserRequest(req, this.writer, this.o.maxBufferSize);
      } catch (e) {
        reject(e);
        return;
      }
      const inFlight = inFlightFor(req, resolve, reject);
      const conn = this.conn;
      if (conn && this.connected && !conn.closed) {
        this.transmit(conn, frame, inFlight);
        return;
      }
      // Not connected: wait for the next connection, but never longer than a session could survive.
      this.queue.push(frame, inFlight, this.negotiatedTimeout || this.o.connectTimeout, req.signal);
    });
  }

  private transmit(conn: Connection, frame: Uint8Array, inFlight: InFlight): void {
    // An op this server does not know would get UNIMPLEMENTED and the link closed: refuse it here.
    const why = unsupported(this.features, inFlight.needs);
    if (why !== null) {
      inFlight.onFail(ErrorCode.UNIMPLEMENTED, why);
      return;
    }
    const xid = this.nextXid();
    patchXid(frame, xid);
    inFlight.xid = xid;
    conn.send(frame, inFlight);
  }

  /** updateServerList: new hosts for the next connections; leaves a server that is not among them. */
  updateHosts(hosts: readonly HostPort[]): void {
    if (hosts.length === 0) return;
    this.hosts.replace(hosts);
    const c = this.conn;
    const h = this.connHost;
    if (c && h && !c.closed && !this.hosts.has(h.host, h.port)) c.close("the server is no longer in the server list");
  }

  /** Stores credentials (replayed on every reconnect) and sends them now when connected. */
  addAuth(scheme: string, auth: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.terminal || this.closing) {
        reject(this.terminalError({ op: "addAuthInfo" }));
        return;
      }
      const entry: AuthEntry = { scheme, auth, waiters: [{ resolve, reject }] };
      this.auths.push(entry);
      const conn = this.conn;
      if (conn && this.connected && !conn.closed) sendAuth(conn, entry, this.writer, (x) => this.authRefused(x));
    });
  }

  // --- notifications ---

  private notify(ev: { type: number; state: number; path: string; zxid: bigint }): void {
    // Only 3.9+ servers put the change's zxid on a notification (-1 before, and for catch-up events).
    if (ev.zxid !== -1n && !this.features.eventZxid) this.features = featuresOf("3.9+");
    const watchers = this.o.watches.trigger(ev.type, ev.path);
    this.o.onWatchEvent(ev, watchers);
  }

  // --- read-only probing ---

  private startReadOnlyProbe(current: HostPort): void {
    const fourLetter = this.o.fourLetter;
    if (!fourLetter || this.hosts.size < 2) return;
    this.roProbe = new ReadOnlyProbe({
      hosts: this.hosts.all,
      current,
      fourLetter,
      clock: this.clock,
      active: () => this.state === "connectedReadOnly",
      onFound: (h) => {
        this.log.info(`zookeeper: read-write server ${h.host}:${h.port} found; moving to it`);
        this.hosts.preferNext(h);
        this.conn?.close("moving to a read-write server");
      },
    });
  }

  // --- expiry, states, teardown ---

  private armClientExpiry(): void {
    if (!this.o.clientSideExpiry || this.negotiatedTimeout <= 0 || this.expiryTimer || this.terminal) return;
    const limit = (this.negotiatedTimeout * 4) / 3;
    const left = Math.max(0, limit - (this.clock.now() - this.lastHeard));
    this.expiryTimer = this.clock.setTimeout(() => {
      this.expiryTimer = null;
      if (!this.connected && !this.terminal) {
        this.finish("expired", ErrorCode.SESSIONEXPIRED, `no server reachable for ${Math.round(limit)} ms; the session has expired`);
      }
    }, left);
  }

  private disarmClientExpiry(): void {
    if (this.expiryTimer) this.clock.clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
  }

  private setState(state: SessionState): void {
    if (this.state === state) return;
    this.state = state;
    this.o.onState(state);
  }

  private terminalError(req: { op: string; path?: string }): ZooKeeperError {
    const details = { op: req.op, path: req.path };
    switch (this.state) {
      case "expired":
        return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the session has expired", details);
      case "authFailed":
        return new ZooKeeperError(ErrorCode.AUTHFAILED, "authentication failed; the client is finished", details);
      default:
        return new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "the client is closed (close() was called)", details);
    }
  }

  /** Enters a terminal state: fails everything, tells every watcher, stops the loop. */
  private finish(state: "expired" | "authFailed" | "closed", code: ErrorCode, reason: string): void {
    if (this.terminal) return;
    this.state = state;
    this.disarmClientExpiry();
    this.roProbe?.stop();
    this.roProbe = null;
    this.sleeping?.wake();
    this.conn?.close(reason, code);
    const err = new ZooKeeperError(code, reason);
    this.queue.failAll(code, reason);
    for (const a of this.auths) for (const w of a.waiters.splice(0)) w.reject(err);
    if (this.firstConnect) {
      this.firstConnect.reject(new ZooKeeperError(code, reason));
      this.firstConnect = null;
    }
    this.o.onState(state);
    const keeperState = state === "expired" ? KeeperState.Expired : state === "authFailed" ? KeeperState.AuthFailed : KeeperState.Closed;
    this.o.onSessionEvent(keeperState);
    this.o.watches.clear();
  }

  /** Ends the session on the server (closeSession) and stops. */
  async close(): Promise<void> {
    if (this.terminal || this.closing) return this.loop?.catch(() => {});
    // From here on the server's close of the socket is expected: no "disconnected", no reconnect.
    this.closing = true;
    const conn = this.conn;
    if (conn && this.connected && !conn.closed) {
      const timeout = Math.min(this.negotiatedTimeout || 5000, 5000);
      await new Promise<void>((resolve) => {
        const t = this.clock.setTimeout(resolve, timeout);
        const done = (): void => {
          this.clock.clearTimeout(t);
          resolve();
        };
        this.transmit(conn, encodeRequest(0, OpCode.closeSession, undefined, undefined, this.writer), { xid: 0, opcode: OpCode.closeSession, onReply: done, onFail: done });
      });
    }
    this.finish("closed", ErrorCode.CONNECTIONLOSS, "the client is closed (close() was called)");
    await this.loop?.catch(() => {});
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        this.clock.clearTimeout(timer);
        this.sleeping = null;
        resolve();
      };
      const timer = this.clock.setTimeout(wake, ms);
      this.sleeping = { wake };
    });
  }
}
