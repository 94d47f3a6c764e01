// One TCP/TLS connection to one server: the handshake, the xid-ordered reply pipeline, batched
// writes with backpressure, pings and the read timeout. It knows nothing of hosts or reconnects;
// the session owns those and makes a new Connection for every attempt.
import { ErrorCode, Xid } from "../../protocol/constants.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { FrameDecoder, PING_FRAME, encodeFrame } from "../../protocol/frame.ts";
import { JuteReader, frameBytes } from "../../protocol/jute.ts";
import {
  type ConnectRequest,
  type ConnectResponse,
  type WatcherEvent,
  readConnectResponse,
  readWatcherEvent,
  writeConnectRequest,
} from "../../protocol/records.ts";
import { ZooKeeperError } from "../errors.ts";
import { Fifo } from "./fifo.ts";
import { type Clock, type TimerHandle, systemClock } from "../clock.ts";
import { microtask } from "./microtask.ts";
import { isStalled, pingIntervalFor, readTimeoutFor, tickFor } from "./liveness.ts";
import { Ops } from "../../protocol/ops.ts";
import { type Call, type CallContext, Pending } from "./call-record.ts";
import type { Expiring, Link, LinkHandlers } from "../transport/transport.ts";
import type { Logger } from "../types.ts";

/**
 * What a connection reports to, and takes its xids from: the session (one interface, no relay in between).
 * Notifications, zxids and stalls come from whichever of the session's connections heard them.
 */
export interface ConnectionOwner {
  onNotification(event: WatcherEvent, zxid: bigint): void;
  /** The zxid of a reply to one of the caller's requests (`Pending.tracksZxid`), for reconnects. */
  onZxid(zxid: bigint): void;
  /** A link callback (data, drain, close) came while this process's timers were overdue (it was paused): before the callback acts. */
  onResume(): void;
  /** `conn` is ending: called once, before any request in flight fails (so their callers see the session's new state). */
  onClosing(conn: Connection): void;
  /** `conn` has ended: called once, after its requests in flight have failed. */
  onClosed(conn: Connection): void;
  /** The next xid, taken as a frame is queued for the wire (so xids follow the order on the wire). */
  nextXid(): number;
}

/** How a handshake ends: the ConnectResponse, or the error that ended the connection first. */
export type Handshaken = (res: ConnectResponse | null, error: Error | null) => void;

const MAX_WRITE = 256 * 1024;

/** Every ping's call: the client's own, answered by a bare header (its Pending settles nobody). */
const PING: Call<unknown, unknown> = { op: "ping", lane: "own" };
const PING_CONTEXT: CallContext = { chroot: "", maxBufferSize: Number.POSITIVE_INFINITY };
const ignore = (): void => {};
/** The reader's bytes until the first frame (it only ever reads them). */
const NOTHING = new Uint8Array(0);

/**
 * Made before its link: it is the link's handlers (the Transport reports to it directly), and `attach` gives it
 * the link once the Transport has opened it. Events that come before that (a TLS refusal in the same turn as the
 * dial) are handled as they come.
 */
export class Connection implements LinkHandlers, Expiring {
  private link: Link | null = null;
  private readonly target: string;
  private readonly owner: ConnectionOwner;
  private readonly decoder: FrameDecoder;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly inFlight = new Fifo<Pending>();
  /** AuthPackets and pings awaiting their replies: made by the first (most connections send neither). */
  private authInFlight: Fifo<Pending> | null = null;
  /** connect()'s callback while the ConnectResponse is awaited (its deadline is the attempt's: dial.ts). */
  private handshake: Handshaken | null = null;
  /**
   * The frames of the write being gathered: the first `outboxCount` slots (the array is kept from write to write, its
   * written slots cleared: a new array per write was a new backing store per request at one outstanding).
   */
  private outbox: (Uint8Array | undefined)[] = [];
  private outboxCount = 0;
  /** Frames queued (send) and frames handed to the link (flush), counted alike: a Pending's `seq` above `written` was never written. */
  private queued = 0;
  private written = 0;
  private flushScheduled = false;
  /**
   * Clock time the first frame of the write now being gathered was queued: the send time of every frame in
   * it (all are queued in the same turn of the event loop, before the write; reading the clock once per write
   * instead of once per request, and never later than the truth, so a lease counted from it is not longer).
   */
  private batchAt = 0;
  /** Runs just before the link's next frame is queued (see beforeNextWrite). */
  private beforeWrite: (() => void) | null = null;
  private blocked = false;
  private lastSend = 0;
  private lastRecv = 0;
  private pings: Fifo<Pending> | null = null;
  private handshakeSentAt = Number.NEGATIVE_INFINITY;
  private acked = Number.NEGATIVE_INFINITY;
  private tickMs = 0;
  private lastTick = 0;
  private timer: TimerHandle | null = null;
  private readTimeout = 0;
  private pingInterval = 0;
  /** Set by endWithin (close()): the clock time by which the server must have ended the link, and that wait. */
  private endBy = Number.POSITIVE_INFINITY;
  private endWait = 0;
  private closedReason: string | null = null;

  /**
   * `target`: "host:port" it is for, until the link (and its own `remote`) exists. `clock`: timers and "now" (default:
   * the runtime's timers and performance.now()).
   */
  constructor(owner: ConnectionOwner, target: string, maxBufferSize: number, logger: Logger, clock: Clock = systemClock) {
    this.owner = owner;
    this.target = target;
    this.decoder = new FrameDecoder(maxBufferSize);
    this.reader = new JuteReader(NOTHING, 0, 0, this.decoder.maxFrameSize * 2);
    this.log = logger;
    this.clock = clock;
    // lastRecv and lastSend start with the ConnectRequest (connect()): nothing reads them before.
  }

  private now(): number {
    return this.clock.now();
  }

  /** The link, once the Transport has opened it: closed at once when the connection ended first. */
  attach(link: Link): void {
    if (this.closedReason !== null) {
      link.close();
      return;
    }
    this.link = link;
  }

  /** "host:port" of the server (the link's, once there is one). */
  get remote(): string {
    return this.link?.remote ?? this.target;
  }

  get isClosed(): boolean {
    return this.closedReason !== null;
  }

  /** When the last request the server has answered was sent (the ConnectRequest's, then every reply's). */
  get ackedSendAt(): number {
    return this.acked;
  }

  /** When the last bytes arrived (on the clock). */
  get lastReceived(): number {
    return this.lastRecv;
  }

  get pendingCount(): number {
    return this.inFlight.length + (this.authInFlight?.length ?? 0);
  }

  // --- link callbacks (LinkHandlers: the Transport calls them) ---

  // Bound (arrow properties): a Transport may call them detached from this object.
  readonly onData = (chunk: Uint8Array): void => {
    if (this.closedReason !== null) return;
    this.heardInChunk = false;
    try {
      this.decoder.each(chunk, this.onFrame);
    } catch (e) {
      this.fault(`bad frame from ${this.remote}: ${(e as Error).message}`);
    }
  };

  /** Whether a whole frame of the chunk being read has been seen yet (see onFrame). */
  private heardInChunk = false;
  /** Reads every frame (no reader per frame). Nothing a frame's handling does synchronously feeds the link more data. */
  private readonly reader: JuteReader;

  /** One whole frame of the chunk: bytes[start, end). false stops the chunk (the link was closed). */
  private readonly onFrame = (bytes: Uint8Array, start: number, end: number): boolean => {
    if (this.closedReason !== null) return false;
    // Only whole frames count as hearing from the server (as in the Java client): a frame that
    // never completes must not keep a dead or desynchronised link alive past the read timeout.
    // Nor do frames read while our own timers are overdue: the process was stalled (SIGSTOP, a long
    // GC, a blocked loop), so these bytes may have sat in the socket buffer since long before now.
    if (!this.heardInChunk) {
      this.heardInChunk = true;
      const now = this.now();
      if (!this.wakeAt(now)) this.lastRecv = now;
      if (this.closedReason !== null) return false;
    }
    try {
      this.handleFrame(this.reader.reset(bytes, start, end));
    } catch (e) {
      // A reply that does not decode means the stream can no longer be trusted.
      const why = e instanceof ProtocolError || e instanceof Error ? e.message : String(e);
      this.fault(`malformed frame from ${this.remote}: ${why}`);
      return false;
    }
    return this.closedReason === null;
  };

  /** A server that breaks the protocol: say why at warn level, then drop the link. */
  private fault(reason: string): void {
    this.log.warn(`zookeeper: dropping connection: ${reason}`);
    this.close(reason);
  }

  readonly onDrain = (): void => {
    this.wake();
    this.blocked = false;
    this.flush();
  };

  readonly onClose = (error?: Error): void => {
    this.wake();
    this.close(error ? `connection to ${this.remote} lost: ${error.message}` : `server ${this.remote} closed the connection`, ErrorCode.CONNECTIONLOSS, error);
  }

  // --- handshake ---

  /**
   * Sends the ConnectRequest; `done` is called once, with the server's ConnectResponse or with the CONNECTIONLOSS
   * that ended the connection first (as it happens, in the link's callback or in close()). Its deadline is the
   * caller's (`deadlinePassed`): the attempt keeps one timer for its dial and its handshake.
   */
  connect(req: ConnectRequest, done: Handshaken): void {
    if (this.closedReason !== null) {
      done(null, new ZooKeeperError(ErrorCode.CONNECTIONLOSS, this.closedReason));
      return;
    }
    this.handshake = done;
    // Written alone: the Java client does not pipeline behind it because a server that answers
    // "expired" closes at once and a concurrent write could provoke an RST that eats the answer.
    // One reading of the clock for both: the request is sent as it is written.
    const at = this.now();
    this.handshakeSentAt = this.lastRecv = at;
    this.writeNow(encodeFrame(writeConnectRequest, req), at);
  }

  /** Starts pings and the read timeout for the negotiated session timeout. */
  startTimers(negotiatedTimeout: number): void {
    this.readTimeout = readTimeoutFor(negotiatedTimeout);
    this.pingInterval = pingIntervalFor(this.readTimeout);
    this.schedule(this.now());
  }

  /**
   * At a link callback: true when this process was stalled (its tick is overdue), and then `onResume`
   * before the callback does anything (so lapsed leases end before stale reads).
   */
  private wake(): boolean {
    return this.wakeAt(this.now());
  }

  /** wake() at clock time `now`. */
  private wakeAt(now: number): boolean {
    // True when the periodic tick is well overdue, i.e. this process has not been running on time.
    if (!isStalled(now, this.lastTick, this.tickMs)) return false;
    this.owner.onResume();
    return true;
  }

  private schedule(now: number): void {
    if (this.closedReason !== null) return;
    const tick = tickFor(this.pingInterval);
    this.tickMs = tick;
    this.lastTick = now;
    this.timer = this.clock.setTimeout(() => this.onTick(), tick);
    // The socket keeps the process alive while connected; the timer must not on its own.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private onTick(): void {
    this.timer = null;
    if (this.closedReason !== null) return;
    const now = this.now();
    if (now >= this.endBy) {
      this.close(`no answer to closeSession from ${this.remote} within ${Math.round(this.endWait)} ms`);
      return;
    }
    if (now - this.lastRecv > this.readTimeout) {
      this.close(`no reply from ${this.remote} for ${Math.round(now - this.lastRecv)} ms (read timeout ${Math.round(this.readTimeout)} ms)`);
      return;
    }
    if (now - this.lastSend >= this.pingInterval && this.endBy === Number.POSITIVE_INFINITY) {
      this.send(new Pending(Ops.ping, PING_FRAME, PING, PING_CONTEXT, ignore, ignore)); // its frame never changes (its xid is fixed)
    }
    this.schedule(now);
  }

  /**
   * close() sent closeSession: the link ends within `ms` (checked on the tick, so up to one tick later), by the
   * server or by this connection, and no more pings go out. The wait costs no timer of its own.
   */
  endWithin(ms: number): void {
    this.endBy = this.now() + ms;
    this.endWait = ms;
  }

  // --- requests ---

  /** Queues a request's frame, its xid written now; `p` gets its reply. */
  send(p: Pending): void {
    if (this.closedReason !== null) {
      p.onFail(ErrorCode.CONNECTIONLOSS, this.closedReason, false);
      return;
    }
    // Frames that beforeNextWrite's callback sends go ahead of this one, on the wire and in flight alike,
    // and so take their xids first.
    this.runBeforeWrite();
    this.enqueue(p.takeFrame(this.owner.nextXid()));
    p.sentAt = this.batchAt;
    p.seq = ++this.queued;
    if (p.xid === Xid.AUTH) (this.authInFlight ??= new Fifo()).push(p);
    else if (p.xid === Xid.PING) (this.pings ??= new Fifo()).push(p);
    else this.inFlight.push(p);
  }

  /**
   * Runs `queue` (which sends frames of its own) just before the next frame is queued, so that its frames go
   * first and in that frame's write (a request's, at the latest the next ping's), or at once when a write is
   * already due: frames that cost no write of their own. Nothing is built, and nothing runs, if the link ends
   * first or `dropBeforeNextWrite()` comes first (connect + close: closeSession goes alone).
   */
  beforeNextWrite(queue: () => void): void {
    if (this.closedReason !== null) return;
    if (this.flushScheduled) queue();
    else this.beforeWrite = queue;
  }

  /** Forgets what `beforeNextWrite` was given (close(): closeSession need not wait behind probes nobody will read). */
  dropBeforeNextWrite(): void {
    this.beforeWrite = null;
  }

  private runBeforeWrite(): void {
    const queue = this.beforeWrite;
    if (queue === null) return;
    this.beforeWrite = null;
    queue();
  }

  /** Adds a frame to the write being gathered (send() ran beforeNextWrite's callback first). */
  private enqueue(frame: Uint8Array): void {
    this.outbox[this.outboxCount++] = frame;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      this.batchAt = this.now();
      // Batch everything queued in this tick into one write.
      microtask(this.flushTask);
    }
  }

  private readonly flushTask = (): void => {
    this.flushScheduled = false;
    this.flush(this.batchAt); // in the turn the batch was gathered: its clock reading is the write's
  };

  /** Writes what the outbox holds, at clock time `sentAt` (read now when not given). */
  private flush(sentAt?: number): void {
    while (!this.blocked && this.outboxCount > 0 && this.closedReason === null) {
      const box = this.outbox;
      const count = this.outboxCount;
      let batch: Uint8Array;
      let n = 1;
      if (count === 1) {
        batch = box[0]!;
        box[0] = undefined;
      } else {
        n = 0;
        let size = 0;
        while (n < count && (n === 0 || size + box[n]!.length <= MAX_WRITE)) size += box[n++]!.length;
        batch = frameBytes(size);
        let at = 0;
        for (let i = 0; i < n; i++) {
          batch.set(box[i]!, at);
          at += box[i]!.length;
        }
        // The rest to the front, the written slots cleared (a frame sent must not keep its block alive).
        for (let i = n; i < count; i++) box[i - n] = box[i];
        for (let i = count - n; i < count; i++) box[i] = undefined;
        if (count === n && box.length > 1024) this.outbox = []; // after a burst: not kept at that size
      }
      this.outboxCount = count - n;
      this.written += n;
      this.writeNow(batch, sentAt ?? this.now());
    }
  }

  /** Writes `bytes` to the link at clock time `at` (read now unless the caller just did). */
  private writeNow(bytes: Uint8Array, at: number = this.now()): void {
    this.lastSend = at;
    const link = this.link;
    if (link === null) return; // only before attach(), when nothing is sent
    try {
      if (!link.write(bytes)) this.blocked = true;
    } catch (e) {
      this.close(`write to ${this.remote} failed: ${(e as Error).message}`, ErrorCode.CONNECTIONLOSS, e as Error);
    }
  }

  // --- replies ---

  private handleFrame(r: JuteReader): void {
    if (this.handshake) {
      const res = readConnectResponse(r); // first: a malformed one throws while connect() can still be rejected (close)
      r.reset(NOTHING, 0, 0); // its bytes hold the session password: the reader keeps no view of them until the next frame
      const done = this.endHandshake();
      this.acked = this.handshakeSentAt;
      done(res, null);
      return;
    }
    // The reply header (ReplyHeader: xid, zxid, err) read field by field: no object per reply.
    const xid = r.int();
    const zxid = r.long();
    const err = r.int();
    switch (xid) {
      case Xid.NOTIFICATION:
        this.owner.onNotification(readWatcherEvent(r), zxid);
        return;
      case Xid.PING: {
        // A ping reply nobody asked for can only be a corrupted xid: the stream is not to be trusted.
        const ping = this.pings?.shift();
        if (ping === undefined) throw new ProtocolError("BAD_FRAME", "ping reply without a ping outstanding");
        this.ack(ping.sentAt);
        return;
      }
      case Xid.AUTH: {
        const auth = this.authInFlight?.shift();
        if (auth) this.ack(auth.sentAt);
        auth?.onReply(err, null);
        return;
      }
    }
    const head = this.inFlight.shift();
    if (!head) throw new ProtocolError("BAD_FRAME", `reply with xid ${xid} but nothing is in flight`);
    if (head.xid !== xid) {
      this.inFlight.push(head); // failed with the rest on close
      throw new ProtocolError("BAD_FRAME", `xid out of order: expected ${head.xid}, got ${xid}`);
    }
    if (zxid > 0n && head.tracksZxid) this.owner.onZxid(zxid);
    this.ack(head.sentAt);
    head.onReply(err, err === 0 ? r : null);
  }

  /** The handshake's callback, to call now. */
  private endHandshake(): Handshaken {
    const h = this.handshake!;
    this.handshake = null;
    return h;
  }

  /** No ConnectResponse came within `timeoutMs` of the ConnectRequest (the handshake's deadline, Expiring): the connection ends (connect()'s callback hears it). */
  deadlinePassed(timeoutMs: number): void {
    if (this.handshake !== null) this.close(`no ConnectResponse from ${this.remote} within ${timeoutMs} ms`);
  }

  private ack(sentAt: number | undefined): void {
    if (sentAt !== undefined && sentAt > this.acked) this.acked = sentAt;
  }

  // --- teardown ---

  /** Ends the connection; every request in flight fails with `code` (CONNECTIONLOSS by default). */
  close(reason: string, code: number = ErrorCode.CONNECTIONLOSS, cause?: Error): void {
    if (this.closedReason !== null) return;
    this.closedReason = reason;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.outbox.length = 0;
    this.outboxCount = 0;
    this.beforeWrite = null;
    this.link?.close();
    this.log.debug(`zookeeper: connection closed: ${reason}`);
    if (this.handshake) {
      const done = this.endHandshake();
      // The link's own error stays reachable (e.g. a TLS alert code that makes retrying pointless).
      done(null, new ZooKeeperError(ErrorCode.CONNECTIONLOSS, reason, { cause }));
    }
    // The owner first (the session moves to "disconnected"), then the requests: a caller that catches
    // CONNECTIONLOSS reads the new state, never "connected".
    this.owner.onClosing(this);
    // A frame still in the outbox was never written: its request certainly did not happen.
    if (this.authInFlight !== null) for (const p of this.authInFlight.drain()) p.onFail(code, reason, p.seq <= this.written);
    for (const p of this.inFlight.drain()) p.onFail(code, reason, p.seq <= this.written);
    this.owner.onClosed(this);
  }
}

