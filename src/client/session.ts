// The session engine: walks the host list, performs the handshake (and SASL), primes each new
// connection (auth, then SetWatches, then queued requests), runs requests through the current
// connection, and moves between the public states only on real transitions.
import { ErrorCode, KeeperState, OpCode, Xid } from "../protocol/constants.ts";
import type { HostPort } from "../protocol/connect-string.ts";
import { encodeRequest } from "../protocol/frame.ts";
import { JuteWriter, type JuteReader } from "../protocol/jute.ts";
import { type ReplyHeader, writeAuthPacket, writeSetWatches, writeSetWatches2 } from "../protocol/records.ts";
import { Connection, type InFlight } from "./connection.ts";
import { ZooKeeperError } from "./errors.ts";
import { Fifo } from "./fifo.ts";
import { HostList } from "./hosts.ts";
import type { Dialer } from "./transport.ts";
import type { SessionState, Logger, WatchedEvent } from "./types.ts";
import type { WatchRegistry } from "./watches.ts";
import type { ConnectionOptions as TlsOptions } from "node:tls";

/** A request as the client layer builds it; the session adds the xid. */
export interface Request<T> {
  opcode: number;
  /** Name and client path for error messages. */
  op: string;
  path?: string;
  write?: (w: JuteWriter) => void;
  decode?: (r: JuteReader) => T;
  /** Runs in the receive path with the reply's error code, before the promise settles. */
  onReply?: (err: number) => void;
}

/** A SASL client mechanism: tokens in, tokens out. */
export interface SaslClient {
  initial(): Uint8Array;
  step(challenge: Uint8Array): Uint8Array | null;
  readonly complete: boolean;
}

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
  watches: WatchRegistry;
  onState(state: SessionState): void;
  onWatchEvent(event: { type: number; state: number; path: string }, watchers: Iterable<(e: WatchedEvent) => void>): void;
  /** Session-wide events (expiry, close) for every registered watcher. */
  onSessionEvent(state: number): void;
  fourLetter?: (host: HostPort, cmd: string) => Promise<string>;
}

interface Queued {
  frame: Uint8Array;
  inFlight: InFlight;
  timer: ReturnType<typeof setTimeout> | null;
}

interface AuthEntry {
  scheme: string;
  auth: Uint8Array;
  waiters: { resolve(): void; reject(e: Error): void }[];
}

const TERMINAL: ReadonlySet<SessionState> = new Set(["expired", "authFailed", "closed"]);
const SET_WATCHES_BATCH_CHARS = 128 * 1024;

export class Session {
  state: SessionState = "connecting";
  sessionId = 0n;
  password: Uint8Array = new Uint8Array(16);
  negotiatedTimeout = 0;
  lastZxid = 0n;
  private readonly o: SessionOptions;
  private readonly hosts: HostList;
  private readonly writer = new JuteWriter(1024);
  private readonly queue = new Fifo<Queued>();
  private readonly auths: AuthEntry[] = [];
  private conn: Connection | null = null;
  private xid = 1;
  private seenRwServer = false;
  private sleeping: { timer: ReturnType<typeof setTimeout>; wake(): void } | null = null;
  private expiryTimer: ReturnType<typeof setTimeout> | null = null;
  private roProbe: ReturnType<typeof setTimeout> | null = null;
  private lastHeard = performance.now();
  private firstConnect: { resolve(): void; reject(e: Error): void } | null = null;
  private loop: Promise<void> | null = null;

  constructor(o: SessionOptions) {
    this.o = o;
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

  /** Runs the connect loop; resolves once the first session is established. */
  start(): Promise<void> {
    const first = new Promise<void>((resolve, reject) => (this.firstConnect = { resolve, reject }));
    const timer = setTimeout(() => {
      if (this.firstConnect) this.finish("closed", ErrorCode.CONNECTIONLOSS, `no session established within ${this.o.connectTimeout} ms`);
    }, this.o.connectTimeout);
    first.then(() => clearTimeout(timer), () => clearTimeout(timer));
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
        this.log.debug(`zookeeper: connect to ${host.host}:${host.port} failed: ${(e as Error).message}`);
        continue;
      }
      attempt = 1;
      await new Promise<void>((resolve) => this.whenClosed(conn, resolve));
      this.conn = null;
      this.lastHeard = conn.lastReceived;
      this.stopReadOnlyProbe();
      if (!this.terminal) {
        this.setState("disconnected");
        this.armClientExpiry();
      }
    }
  }

  private closedWaiters = new Map<Connection, () => void>();

  private whenClosed(conn: Connection, fn: () => void): void {
    if (conn.closed) fn();
    else this.closedWaiters.set(conn, fn);
  }

  private async establish(host: HostPort): Promise<Connection> {
    const perHost = Math.max(1000, (this.negotiatedTimeout || this.o.sessionTimeout) / this.hosts.size);
    let conn: Connection | null = null;
    const link = await this.o.dialer(
      host,
      {
        onData: (chunk) => conn?.handleData(chunk),
        onDrain: () => conn?.handleDrain(),
        onClose: (err) => conn?.handleClose(err),
      },
      { tls: this.o.tls, timeoutMs: perHost },
    );
    if (this.terminal) {
      link.close();
      throw new Error("session ended while connecting");
    }
    conn = new Connection(link, { maxBufferSize: this.o.maxBufferSize, logger: this.o.logger });
    this.conn = conn;
    const events = {
      onNotification: (ev: { type: number; state: number; path: string }) => this.notify(ev),
      onZxid: (zxid: bigint) => {
        if (zxid > this.lastZxid) this.lastZxid = zxid;
      },
      onClosed: () => {
        const waiter = this.closedWaiters.get(conn!);
        this.closedWaiters.delete(conn!);
        waiter?.();
      },
    };
    const resuming = this.sessionId !== 0n && this.seenRwServer;
    const res = await conn.connect(
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
    if (res.timeOut <= 0) {
      conn.close("session expired");
      this.finish("expired", ErrorCode.SESSIONEXPIRED, `session 0x${this.sessionId.toString(16)} has expired`);
      throw new Error("session expired");
    }
    this.negotiatedTimeout = res.timeOut;
    this.sessionId = res.sessionId;
    this.password = res.passwd;
    if (!res.readOnly) this.seenRwServer = true;
    this.lastHeard = performance.now();
    this.disarmClientExpiry();
    conn.startTimers(res.timeOut);
    if (this.o.sasl) await this.authenticateSasl(conn, this.o.sasl());
    if (conn.closed || this.terminal) throw new Error("connection lost while priming");
    this.prime(conn);
    this.hosts.connected();
    this.setState(res.readOnly ? "connectedReadOnly" : "connected");
    if (res.readOnly) this.startReadOnlyProbe(host);
    this.firstConnect?.resolve();
    this.firstConnect = null;
    return conn;
  }

  /** Auth packets, then SetWatches batches, then everything queued while disconnected. */
  private prime(conn: Connection): void {
    for (const a of this.auths) this.sendAuth(conn, a);
    this.sendSetWatches(conn);
    while (this.queue.length > 0) {
      const q = this.queue.shift()!;
      if (q.timer) clearTimeout(q.timer);
      this.transmit(conn, q.frame, q.inFlight);
    }
  }

  private sendAuth(conn: Connection, a: AuthEntry): void {
    const frame = encodeRequest(Xid.AUTH, OpCode.auth, writeAuthPacket, { type: 0, scheme: a.scheme, auth: a.auth }, this.writer);
    conn.send(frame, {
      xid: Xid.AUTH,
      opcode: OpCode.auth,
      onReply: (h) => {
        const waiters = a.waiters.splice(0);
        if (h.err === 0) {
          for (const w of waiters) w.resolve();
          return;
        }
        const err = new ZooKeeperError(ErrorCode.AUTHFAILED, `server refused ${a.scheme} credentials`, { op: "addAuthInfo" });
        for (const w of waiters) w.reject(err);
        this.finish("authFailed", ErrorCode.AUTHFAILED, `authentication with scheme ${a.scheme} failed`);
      },
      onFail: () => {
        // Kept waiting: the next connection re-sends every stored credential.
      },
    });
  }

  private sendSetWatches(conn: Connection): void {
    const w = this.o.watches;
    const lists = [w.paths("data"), w.paths("exist"), w.paths("child"), w.paths("persistent"), w.paths("persistentRecursive")];
    if (lists.every((l) => l.length === 0)) return;
    let batch: string[][] = [[], [], [], [], []];
    let chars = 0;
    const flush = (): void => {
      const persistent = batch[3]!.length + batch[4]!.length > 0;
      const body = {
        relativeZxid: this.lastZxid,
        dataWatches: batch[0]!,
        existWatches: batch[1]!,
        childWatches: batch[2]!,
        persistentWatches: batch[3]!,
        persistentRecursiveWatches: batch[4]!,
      };
      // Plain SetWatches when it suffices, so servers older than 3.6 accept it.
      const frame = persistent
        ? encodeRequest(this.nextXid(), OpCode.setWatches2, writeSetWatches2, body, this.writer)
        : encodeRequest(this.nextXid(), OpCode.setWatches, writeSetWatches, body, this.writer);
      const xid = new DataView(frame.buffer, frame.byteOffset).getInt32(4);
      conn.send(frame, {
        xid,
        opcode: persistent ? OpCode.setWatches2 : OpCode.setWatches,
        onReply: (h) => {
          if (h.err !== 0) this.log.warn(`zookeeper: re-registering watches failed with error ${h.err}`);
        },
        onFail: () => {},
      });
      batch = [[], [], [], [], []];
      chars = 0;
    };
    lists.forEach((list, kind) => {
      for (const path of list) {
        if (chars >= SET_WATCHES_BATCH_CHARS) flush();
        batch[kind]!.push(path);
        chars += path.length;
      }
    });
    if (chars > 0) flush();
  }

  private async authenticateSasl(conn: Connection, mech: SaslClient): Promise<void> {
    const fail = (why: string): never => {
      conn.close("SASL authentication failed");
      this.finish("authFailed", ErrorCode.AUTHFAILED, `SASL authentication failed: ${why}`);
      throw new ZooKeeperError(ErrorCode.AUTHFAILED, `SASL authentication failed: ${why}`);
    };
    let token = mech.initial();
    for (;;) {
      const reply = await this.rawRequest(conn, OpCode.sasl, (w) => w.buffer(token), (r) => r.buffer());
      if (reply.header.err !== 0) fail(`server answered ${reply.header.err}`);
      let next: Uint8Array | null;
      try {
        next = mech.step(reply.value ?? new Uint8Array(0));
      } catch (e) {
        return fail((e as Error).message);
      }
      if (next === null) break;
      token = next;
    }
    if (!mech.complete) fail("the exchange ended early");
  }

  private rawRequest<T>(conn: Connection, opcode: number, write: (w: JuteWriter) => void, decode: (r: JuteReader) => T): Promise<{ header: ReplyHeader; value: T | null }> {
    return new Promise((resolve, reject) => {
      const xid = this.nextXid();
      const frame = encodeRequest(xid, opcode, (w) => write(w), undefined, this.writer);
      conn.send(frame, {
        xid,
        opcode,
        onReply: (header, body) => resolve({ header, value: body ? decode(body) : null }),
        onFail: (code, reason) => reject(new ZooKeeperError(code, reason, { op: "sasl" })),
      });
    });
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
      if (this.terminal) {
        reject(this.terminalError(req));
        return;
      }
      let frame: Uint8Array;
      try {
        frame = encodeRequest(0, req.opcode, req.write ? (w) => req.write!(w) : undefined, undefined, this.writer);
      } catch (e) {
        reject(new ZooKeeperError(ErrorCode.BADARGUMENTS, `cannot encode request: ${(e as Error).message}`, { op: req.op, path: req.path }));
        return;
      }
      if (frame.length - 4 > this.o.maxBufferSize) {
        reject(
          new ZooKeeperError(ErrorCode.BADARGUMENTS, `request of ${frame.length - 4} bytes exceeds maxBufferSize ${this.o.maxBufferSize}`, {
            op: req.op,
            path: req.path,
          }),
        );
        return;
      }
      const inFlight: InFlight = {
        xid: 0,
        opcode: req.opcode,
        onReply: (header, body) => {
          req.onReply?.(header.err);
          if (header.err !== 0) {
            reject(new ZooKeeperError(header.err, undefined, { op: req.op, path: req.path }));
            return;
          }
          let value: T;
          try {
            value = (req.decode && body ? req.decode(body) : undefined) as T;
          } catch (e) {
            reject(new ZooKeeperError(ErrorCode.MARSHALLINGERROR, `malformed reply: ${(e as Error).message}`, { op: req.op, path: req.path }));
            throw e; // the connection drops: the stream cannot be trusted any more
          }
          resolve(value);
        },
        onFail: (code, reason) => reject(new ZooKeeperError(code, reason, { op: req.op, path: req.path })),
      };
      const conn = this.conn;
      if (conn && this.connected && !conn.closed) {
        this.transmit(conn, frame, inFlight);
        return;
      }
      // Not connected: wait for the next connection, but never longer than a session could survive.
      const q: Queued = { frame, inFlight, timer: null };
      const wait = this.negotiatedTimeout || this.o.connectTimeout;
      q.timer = setTimeout(() => {
        q.timer = null;
        if (this.dequeue(q)) inFlight.onFail(ErrorCode.CONNECTIONLOSS, `not connected for ${wait} ms`);
      }, wait);
      this.queue.push(q);
    });
  }

  private dequeue(q: Queued): boolean {
    const rest = this.queue.drain();
    let found = false;
    for (const item of rest) {
      if (item === q) found = true;
      else this.queue.push(item);
    }
    return found;
  }

  private transmit(conn: Connection, frame: Uint8Array, inFlight: InFlight): void {
    const xid = this.nextXid();
    new DataView(frame.buffer, frame.byteOffset).setInt32(4, xid);
    inFlight.xid = xid;
    conn.send(frame, inFlight);
  }

  /** Stores credentials (replayed on every reconnect) and sends them now when connected. */
  addAuth(scheme: string, auth: Uint8Array): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.terminal) {
        reject(this.terminalError({ op: "addAuthInfo" }));
        return;
      }
      const entry: AuthEntry = { scheme, auth, waiters: [{ resolve, reject }] };
      this.auths.push(entry);
      if (this.conn && this.connected && !this.conn.closed) this.sendAuth(this.conn, entry);
    });
  }

  // --- notifications ---

  private notify(ev: { type: number; state: number; path: string }): void {
    const watchers = this.o.watches.trigger(ev.type, ev.path);
    this.o.onWatchEvent(ev, watchers);
  }

  // --- read-only probing ---

  private startReadOnlyProbe(current: HostPort): void {
    const probe = this.o.fourLetter;
    if (!probe || this.hosts.size < 2) return;
    let backoff = 100;
    const tick = async (): Promise<void> => {
      this.roProbe = null;
      for (const h of this.hosts.all) {
        if (h === current || this.state !== "connectedReadOnly") continue;
        const answer = await probe(h, "isro").catch(() => "");
        if (answer === "rw" && this.state === "connectedReadOnly") {
          this.log.info(`zookeeper: read-write server ${h.host}:${h.port} found; moving to it`);
          this.hosts.preferNext(h);
          this.conn?.close("moving to a read-write server");
          return;
        }
      }
      if (this.state !== "connectedReadOnly") return;
      backoff = Math.min(backoff * 2, 60_000);
      this.roProbe = setTimeout(() => void tick(), backoff);
    };
    this.roProbe = setTimeout(() => void tick(), backoff);
  }

  private stopReadOnlyProbe(): void {
    if (this.roProbe) clearTimeout(this.roProbe);
    this.roProbe = null;
  }

  // --- expiry, states, teardown ---

  private armClientExpiry(): void {
    if (!this.o.clientSideExpiry || this.negotiatedTimeout <= 0 || this.expiryTimer) return;
    const limit = (this.negotiatedTimeout * 4) / 3;
    const left = Math.max(0, limit - (performance.now() - this.lastHeard));
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      if (!this.connected && !this.terminal) {
        this.finish("expired", ErrorCode.SESSIONEXPIRED, `no server reachable for ${Math.round(limit)} ms; the session has expired`);
      }
    }, left);
  }

  private disarmClientExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
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
        return new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "the client is closed", details);
    }
  }

  /** Enters a terminal state: fails everything, tells every watcher, stops the loop. */
  private finish(state: "expired" | "authFailed" | "closed", code: number, reason: string): void {
    if (this.terminal) return;
    this.state = state;
    this.disarmClientExpiry();
    this.stopReadOnlyProbe();
    if (this.sleeping) this.sleeping.wake();
    this.conn?.close(reason, code);
    const err = new ZooKeeperError(code, reason);
    for (const q of this.queue.drain()) {
      if (q.timer) clearTimeout(q.timer);
      q.inFlight.onFail(code, reason);
    }
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
    if (this.terminal) return;
    const conn = this.conn;
    if (conn && this.connected && !conn.closed) {
      const timeout = Math.min(this.negotiatedTimeout || 5000, 5000);
      const done = new Promise<void>((resolve) => {
        this.transmit(conn, encodeRequest(0, OpCode.closeSession, undefined, undefined, this.writer), {
          xid: 0,
          opcode: OpCode.closeSession,
          onReply: () => resolve(),
          onFail: () => resolve(),
        });
        const t = setTimeout(resolve, timeout);
        (t as { unref?: () => void }).unref?.();
      });
      await done;
    }
    this.finish("closed", ErrorCode.CONNECTIONLOSS, "the client is closed");
    await this.loop?.catch(() => {});
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.sleeping = null;
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleeping = { timer, wake };
    });
  }
}

