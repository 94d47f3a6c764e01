// A TCP proxy for fault-injection tests: sits between a client and a real server on 127.0.0.1
// and misbehaves on command (cut, reset, blackhole, delay, drip, half-close, refuse, cut at a
// chosen request frame). node:net only, so it runs under Node, Bun and Deno.
//
// Each accepted connection is a Link with two FIFO pumps (client→server "up", server→client
// "down"). Every chunk, FIN and abort travels through a pump, so delay and blackhole keep
// order: nothing overtakes anything. Event handlers never throw; close() clears every socket
// and timer so the process can exit.
import net from "node:net";

export interface RequestCut {
  fired: boolean; // false when the proxy closed before the frame came
  xid: number;
  // forward: true only: err of the server's reply to that xid (seen by the proxy, never by
  // the client); null if no reply came within the grace period.
  serverErr: number | null;
}

export interface FaultProxy {
  readonly port: number;
  readonly connectString: string; // "127.0.0.1:port" (its listenHost)
  readonly connections: number; // client connections not yet closed
  /** Destroys every current connection both ways (FIN); new ones are still accepted. */
  cut(): void;
  /** Like cut, with TCP RST (socket.resetAndDestroy(); Node, Bun and Deno all have it). */
  reset(): void;
  /** On: nothing passes either way, FIN/RST included; new connections are accepted but not
   * connected upstream. Off: new connections are normal, and held connections resume with their
   * held bytes in order (like TCP after a healed partition). */
  blackhole(on: boolean): void;
  /** Delays every chunk (and FIN) in both directions by ms from its arrival; 0 = off. */
  delay(ms: number): void;
  /** Forwards one byte per write, waiting for each write and a turn of the event loop between. */
  drip(on: boolean): void;
  /** FIN to the clients of current connections; their data still goes upstream, replies are dropped. */
  halfClose(): void;
  /** On: new connections are accepted and closed at once, never connected upstream. */
  refuse(on: boolean): void;
  /** Target for connections accepted from now on. */
  setTarget(host: string, port: number): void;
  /** Bytes actually forwarded: up = client→server, down = server→client. */
  bytes(): { up: number; down: number };
  /** Forwards exactly n more client bytes (counted over all connections), then cuts that link.
   * Resolves when it has cut (or when the proxy closes). */
  cutAfterClientBytes(n: number): Promise<void>;
  /** Cuts the link at the next client frame with this opcode (after the ConnectRequest).
   * forward: true sends the whole frame, closes the client at once, and keeps the server side
   * open until the server's reply to that xid (its err is reported) or replyGraceMs; closing
   * earlier could make the server drop the request as stale. forward: false sends everything
   * before the frame and none of it (a partial header is held back while such a cut is armed),
   * then closes the client and ends the server side. Non-ZooKeeper streams (four-letter words,
   * TLS) are not parsed. */
  cutAfterRequest(opcode: number, opts: { forward: boolean }): Promise<RequestCut>;
  /** The next connection accepted forwards the server's first n frames whole (the ConnectResponse is
   * frame 1), then ends the client side after them (FIN follows their bytes) and drops the server
   * side. Resolves with the frames forwarded when it has cut, or when the link or the proxy closed first. */
  cutAfterServerFrames(n: number): Promise<number>;
  /** Closes the listener, every connection and timer; pending cut promises resolve (fired: false). */
  close(): Promise<void>;
}

export interface FaultProxyOptions {
  port?: number;
  /** The address it listens on (default 127.0.0.1; any 127.x.y.z is loopback on Linux). */
  listenHost?: string;
  onConnection?: (id: number) => void;
  // forward: true cuts wait this long for the server's reply before dropping the upstream.
  replyGraceMs?: number;
}

// Anything larger is not a ZooKeeper frame (e.g. a four-letter word or TLS): stop parsing.
const MAX_FRAME = 64 * 1024 * 1024;

const IS_DENO = "Deno" in globalThis;

interface Head { start: number; end: number; xid: number; type: number; err: number }

// Finds frame boundaries in one direction. The first frame (Connect request/response) has no
// header. With hold, bytes of a frame whose length+header is incomplete are held back, so a cut
// "before frame X" never leaks X's first bytes; without hold every byte goes out at once.
class FrameScanner {
  private first = true;
  private remaining = 0;
  private broken = false;
  private acc: Buffer = Buffer.alloc(0); // incomplete length+header at a frame boundary
  private accOut = 0; // how many bytes of acc already went out
  private readonly headLen: number;
  constructor(headLen: number) {
    this.headLen = headLen;
  }

  // Returns the bytes that may go out now and the frame heads found, positioned in those bytes
  // (start may be negative when a frame's first bytes went out in an earlier call).
  feed(chunk: Buffer, hold: boolean): { buf: Buffer; heads: Head[] } {
    const data = this.acc.length > 0 ? Buffer.concat([this.acc, chunk]) : chunk;
    const skip = this.accOut;
    const heads: Head[] = [];
    let tail = -1;
    let off = 0;
    while (off < data.length && !this.broken) {
      if (this.remaining > 0) {
        const n = Math.min(this.remaining, data.length - off);
        off += n;
        this.remaining -= n;
        continue;
      }
      if (data.length - off < (this.first ? 4 : 4 + this.headLen)) {
        tail = off;
        break;
      }
      const len = data.readInt32BE(off);
      if (len < 0 || len > MAX_FRAME) {
        this.broken = true;
        break;
      }
      if (!this.first && len >= this.headLen) {
        const at = off + 4;
        const err = this.headLen >= 16 ? data.readInt32BE(at + 12) : 0;
        heads.push({ start: off - skip, end: off + 4 + len - skip, xid: data.readInt32BE(at), type: data.readInt32BE(at + 4), err });
      }
      this.first = false;
      this.remaining = len;
      off += 4;
    }
    const end = tail >= 0 && hold ? Math.max(tail, skip) : data.length;
    this.acc = tail >= 0 ? Buffer.from(data.subarray(tail)) : Buffer.alloc(0);
    this.accOut = tail >= 0 ? end - tail : 0;
    return { buf: data.subarray(skip, end), heads };
  }
}

// Where whole frames end in a stream (the offsets just past each frame's last byte, per chunk): the
// length prefix alone, so it counts the ConnectResponse, which has no reply header, like any other.
class FrameEnds {
  private lenBytes = 0;
  private len = 0;
  private left = 0;

  ends(chunk: Buffer): number[] {
    const out: number[] = [];
    let off = 0;
    while (off < chunk.length) {
      if (this.left === 0) {
        this.len = this.len * 256 + chunk[off++]!;
        if (++this.lenBytes < 4) continue;
        this.left = this.len;
        this.len = 0;
        this.lenBytes = 0;
        if (this.left === 0) out.push(off);
        continue;
      }
      const n = Math.min(this.left, chunk.length - off);
      off += n;
      this.left -= n;
      if (this.left === 0) out.push(off);
    }
    return out;
  }
}

interface DownCut { left: number; sent: number; resolve: (frames: number) => void }

type Item = { kind: "data"; buf: Buffer; due: number } | { kind: "end"; due: number; then?: () => void } | { kind: "abort"; due: number };

function destroySocket(s: net.Socket | null, rst: boolean): void {
  if (!s || s.destroyed) return;
  try {
    // resetAndDestroy (Node ≥ 16.17) sends RST; where missing or failing, a plain destroy (FIN).
    if (rst && typeof s.resetAndDestroy === "function") s.resetAndDestroy();
    else s.destroy();
  } catch {
    s.destroy();
  }
}

class Link {
  readonly id: number;
  readonly client: net.Socket;
  upstream: net.Socket | null = null;
  dead = false; // no more forwarding
  clientClosed = false;
  clientWriteEnded = false; // halfClose(): s2c data is dropped from then on
  readonly up: Pump;
  readonly down: Pump;
  readonly c2s = new FrameScanner(8); // at forward time: xid, type
  readonly s2c = new FrameScanner(16); // at receive time: xid, zxid, err
  awaiting: { xid: number; done: (err: number | null) => void } | null = null;
  c2sSent = 0; // c2s bytes forwarded so far (absolute offset for pendingCut)
  pendingCut: { abs: number; fire: () => void } | null = null;
  downCut: DownCut | null = null; // cutAfterServerFrames on this link
  private readonly downEnds = new FrameEnds();
  readonly timers = new Set<ReturnType<typeof setTimeout>>();
  readonly proxy: Proxy;

  constructor(proxy: Proxy, id: number, client: net.Socket) {
    this.proxy = proxy;
    this.id = id;
    this.client = client;
    this.up = new Pump(this, true);
    this.down = new Pump(this, false);
    client.setNoDelay(true);
    client.on("error", () => {});
    client.on("data", (b: Buffer) => {
      if (!this.dead) this.up.push({ kind: "data", buf: b, due: Date.now() + proxy.delayMs });
    });
    client.on("end", () => this.up.push({ kind: "end", due: Date.now() + proxy.delayMs }));
    client.on("close", () => {
      this.clientClosed = true;
      this.settleDownCut();
      if (!client.readableEnded) this.up.push({ kind: "abort", due: Date.now() + proxy.delayMs });
      this.maybeForget();
    });
  }

  connectUpstream(host: string, port: number): void {
    const s = net.connect({ host, port, allowHalfOpen: true });
    this.upstream = s;
    s.setNoDelay(true);
    s.on("error", () => {});
    s.on("data", (b: Buffer) => this.fromUpstream(b));
    s.on("end", () => this.down.push({ kind: "end", due: Date.now() + this.proxy.delayMs }));
    s.on("close", () => {
      this.settleDownCut();
      if (!s.readableEnded) this.down.push({ kind: "abort", due: Date.now() + this.proxy.delayMs });
      if (this.awaiting) this.finishAwait(null);
      this.maybeForget();
    });
    this.up.kick();
  }

  // A link that ends before its cutAfterServerFrames fired: the promise says how many frames went out.
  settleDownCut(): void {
    const cut = this.downCut;
    this.downCut = null;
    cut?.resolve(cut.sent);
  }

  private fromUpstream(b: Buffer): void {
    const { heads } = this.s2c.feed(b, false);
    if (this.awaiting) {
      const h = heads.find((x) => x.xid === this.awaiting?.xid);
      if (h) this.finishAwait(h.err);
    }
    if (this.dead) return;
    const cut = this.downCut;
    if (!cut) {
      this.down.push({ kind: "data", buf: b, due: Date.now() + this.proxy.delayMs });
      return;
    }
    const ends = this.downEnds.ends(b);
    if (ends.length < cut.left) {
      cut.left -= ends.length;
      cut.sent += ends.length;
      this.down.push({ kind: "data", buf: b, due: Date.now() + this.proxy.delayMs });
      return;
    }
    // The n-th frame ends in this chunk: forward up to its end, then FIN the client once those bytes are
    // written and drop the server side; nothing the server sends later reaches the client.
    const due = Date.now() + this.proxy.delayMs;
    const frames = cut.sent + cut.left;
    this.downCut = null;
    this.dead = true;
    this.up.stop();
    this.down.push({ kind: "data", buf: b.subarray(0, ends[cut.left - 1]), due });
    this.down.push({
      kind: "end",
      due,
      then: () => {
        this.down.stop();
        destroySocket(this.upstream, false);
        cut.resolve(frames);
      },
    });
  }

  private finishAwait(err: number | null): void {
    const a = this.awaiting;
    this.awaiting = null;
    a?.done(err);
    this.kill(false);
  }

  // Stop forwarding and drop both sockets (rst: TCP reset where the runtime supports it).
  kill(rst: boolean): void {
    this.dead = true;
    this.up.stop();
    this.down.stop();
    destroySocket(this.client, rst);
    if (this.awaiting) return; // keep the upstream until the server's reply (cutAfterRequest)
    destroySocket(this.upstream, rst);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.maybeForget();
  }

  // Cut by a c2s trigger; forward: true keeps the upstream until the reply to xid arrives.
  triggerCut(awaitXid: number | null, done: (err: number | null) => void): void {
    if (awaitXid === null) {
      // Let the bytes already written reach the server, then FIN: nothing else follows.
      this.upstream?.end();
      this.dead = true;
      destroySocket(this.client, false);
      this.up.stop();
      this.down.stop();
      done(null);
      return;
    }
    this.awaiting = { xid: awaitXid, done };
    this.kill(false);
    const t = setTimeout(() => this.finishAwait(null), this.proxy.replyGraceMs);
    this.timers.add(t);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }

  private maybeForget(): void {
    const upDone = !this.upstream || this.upstream.destroyed;
    if (this.clientClosed && upDone && !this.awaiting) this.proxy.forget(this);
  }
}

// One direction of a link: a FIFO drained by a single async loop.
class Pump {
  private readonly items: Item[] = [];
  private running = false;
  private stopped = false;
  private readonly link: Link;
  private readonly isUp: boolean;
  constructor(link: Link, isUp: boolean) {
    this.link = link;
    this.isUp = isUp;
  }

  push(item: Item): void {
    if (this.stopped) return;
    this.items.push(item);
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.items.length = 0;
  }

  kick(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.run().catch(() => {});
  }

  private dst(): net.Socket | null {
    return this.isUp ? this.link.upstream : this.link.client;
  }

  // Returns (synchronously, clearing `running`) whenever it must wait for a kick.
  private async run(): Promise<void> {
    try {
      const proxy = this.link.proxy;
      while (this.items.length > 0 && !this.stopped && !proxy.blackholed) {
        const dst = this.dst();
        if (!dst) return;
        const item = this.items[0];
        const wait = item.due - Date.now();
        if (wait > 0) {
          await this.link.sleep(wait);
          continue;
        }
        this.items.shift();
        if (item.kind === "abort") destroySocket(dst, false);
        else if (item.kind === "end") {
          if (!dst.destroyed && !dst.writableEnded) dst.end(item.then);
          else item.then?.();
        } else await this.write(dst, item.buf);
      }
    } finally {
      this.running = false;
    }
  }

  private async write(dst: net.Socket, chunk: Buffer): Promise<void> {
    const proxy = this.link.proxy;
    let buf = chunk;
    let cut: (() => void) | null = null;
    if (this.isUp) {
      const plan = proxy.planUp(this.link, chunk);
      buf = plan.buf;
      cut = plan.cut;
    } else if (this.link.clientWriteEnded) return;
    if (proxy.dripping) {
      for (let i = 0; i < buf.length; i++) {
        if (this.stopped || dst.destroyed) return;
        // Waiting for the write callback keeps runtimes with async writes (Deno) from
        // coalescing queued bytes into one writev.
        await new Promise<void>((r) => dst.write(buf.subarray(i, i + 1), () => r()));
        this.count(1);
        if (i + 1 < buf.length) await this.yieldTurn();
      }
    } else if (buf.length > 0 && !dst.destroyed && !dst.writableEnded) {
      dst.write(buf);
      this.count(buf.length);
    }
    cut?.();
  }

  // setImmediate between bytes; Deno reads sockets in later macrotasks, so there a receiver in
  // the same process would still see the bytes coalesced: it needs a 0 ms timer instead.
  private yieldTurn(): Promise<void> {
    if (IS_DENO) return this.link.sleep(0);
    return new Promise<void>((r) => setImmediate(r));
  }

  private count(n: number): void {
    if (this.isUp) this.link.proxy.up += n;
    else this.link.proxy.down += n;
  }
}

type Trigger =
  | { kind: "bytes"; left: number; resolve: () => void }
  | { kind: "request"; opcode: number; forward: boolean; resolve: (c: RequestCut) => void };

class Proxy implements FaultProxy {
  port = 0;
  delayMs = 0;
  dripping = false;
  blackholed = false;
  refusing = false;
  up = 0;
  down = 0;
  replyGraceMs: number;
  private host: string;
  private targetPort: number;
  private nextId = 1;
  private readonly links = new Set<Link>();
  private readonly triggers: Trigger[] = [];
  private readonly downCuts: DownCut[] = [];
  private readonly server: net.Server;
  private readonly onConnection?: (id: number) => void;
  private listenHost = "127.0.0.1";

  constructor(host: string, port: number, opts: FaultProxyOptions) {
    this.host = host;
    this.targetPort = port;
    this.onConnection = opts.onConnection;
    this.replyGraceMs = opts.replyGraceMs ?? 5000;
    this.server = net.createServer({ allowHalfOpen: true }, (s) => this.accept(s));
    this.server.on("error", () => {});
  }

  listen(port: number, host: string): Promise<void> {
    this.listenHost = host;
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        const addr = this.server.address();
        this.port = typeof addr === "object" && addr ? addr.port : port;
        resolve();
      });
    });
  }

  get connectString(): string {
    return `${this.listenHost}:${this.port}`;
  }

  get connections(): number {
    let n = 0;
    for (const l of this.links) if (!l.clientClosed) n++;
    return n;
  }

  private accept(s: net.Socket): void {
    s.on("error", () => {});
    if (this.refusing) {
      s.destroy();
      return;
    }
    const link = new Link(this, this.nextId++, s);
    link.downCut = this.downCuts.shift() ?? null;
    this.links.add(link);
    if (!this.blackholed) link.connectUpstream(this.host, this.targetPort);
    try {
      this.onConnection?.(link.id);
    } catch {
      // a test hook must not break the proxy
    }
  }

  forget(link: Link): void {
    this.links.delete(link);
  }

  // Decide how much of a c2s chunk goes out and which cut (if any) follows it. The earliest
  // cut position wins; a forwarded frame that ends in a later chunk binds its trigger to the link.
  planUp(link: Link, chunk: Buffer): { buf: Buffer; cut: (() => void) | null } {
    const hold = this.triggers.some((t) => t.kind === "request" && !t.forward);
    const { buf, heads } = link.c2s.feed(chunk, hold);
    let best: { pos: number; t: Trigger | null; fire: () => void } | null = null;
    const offer = (pos: number, t: Trigger | null, fire: () => void): void => {
      if (!best || pos < best.pos) best = { pos, t, fire };
    };
    const pending = link.pendingCut;
    if (pending) offer(pending.abs - link.c2sSent, null, pending.fire);
    for (const t of this.triggers) {
      if (t.kind === "bytes") offer(t.left, t, () => link.triggerCut(null, () => t.resolve()));
      else {
        const h = heads.find((x) => x.type === t.opcode);
        if (!h) continue;
        const done = (err: number | null): void => t.resolve({ fired: true, xid: h.xid, serverErr: err });
        offer(t.forward ? h.end : Math.max(0, h.start), t, () => link.triggerCut(t.forward ? h.xid : null, done));
      }
    }
    const win = best as { pos: number; t: Trigger | null; fire: () => void } | null;
    const at = win && win.pos <= buf.length ? win.pos : buf.length;
    if (win?.t) this.triggers.splice(this.triggers.indexOf(win.t), 1);
    if (win && win.pos > buf.length) link.pendingCut = { abs: link.c2sSent + win.pos, fire: win.fire };
    for (const t of this.triggers) if (t.kind === "bytes") t.left -= at;
    link.c2sSent += at;
    return { buf: buf.subarray(0, at), cut: win && win.pos <= buf.length ? win.fire : null };
  }

  cut(): void {
    for (const l of [...this.links]) l.kill(false);
  }

  reset(): void {
    for (const l of [...this.links]) l.kill(true);
  }

  blackhole(on: boolean): void {
    this.blackholed = on;
    if (on) return;
    for (const l of this.links) {
      if (l.dead) continue;
      if (!l.upstream) l.connectUpstream(this.host, this.targetPort);
      l.up.kick();
      l.down.kick();
    }
  }

  delay(ms: number): void {
    this.delayMs = Math.max(0, ms);
  }

  drip(on: boolean): void {
    this.dripping = on;
  }

  halfClose(): void {
    for (const l of this.links) {
      l.clientWriteEnded = true;
      if (!l.client.destroyed) l.client.end();
    }
  }

  refuse(on: boolean): void {
    this.refusing = on;
  }

  setTarget(host: string, port: number): void {
    this.host = host;
    this.targetPort = port;
  }

  bytes(): { up: number; down: number } {
    return { up: this.up, down: this.down };
  }

  cutAfterClientBytes(n: number): Promise<void> {
    return new Promise((resolve) => this.triggers.push({ kind: "bytes", left: Math.max(0, n), resolve }));
  }

  cutAfterRequest(opcode: number, opts: { forward: boolean }): Promise<RequestCut> {
    return new Promise((resolve) => this.triggers.push({ kind: "request", opcode, forward: opts.forward, resolve }));
  }

  cutAfterServerFrames(n: number): Promise<number> {
    return new Promise((resolve) => this.downCuts.push({ left: Math.max(1, Math.floor(n)), sent: 0, resolve }));
  }

  close(): Promise<void> {
    for (const c of this.downCuts.splice(0)) c.resolve(c.sent);
    for (const l of this.links) l.settleDownCut();
    for (const t of this.triggers.splice(0)) {
      if (t.kind === "bytes") t.resolve();
      else t.resolve({ fired: false, xid: 0, serverErr: null });
    }
    for (const l of [...this.links]) {
      l.awaiting?.done(null);
      l.awaiting = null;
      l.kill(false);
    }
    this.links.clear();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export async function startFaultProxy(targetHost: string, targetPort: number, opts: FaultProxyOptions = {}): Promise<FaultProxy> {
  const p = new Proxy(targetHost, targetPort, opts);
  await p.listen(opts.port ?? 0, opts.listenHost ?? "127.0.0.1");
  return p;
}
