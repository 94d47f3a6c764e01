// A tiny misbehaving ZooKeeper server for garbage tests. It completes a valid handshake and then
// sends bytes no real server would. With `upstream` set it relays the client's ConnectRequest to a
// real server and hands back that server's ConnectResponse, so the session it "establishes" is
// real and the client can resume it on the next host; without it it invents a session.
import net from "node:net";

export type Garbage =
  | "oversized" // a length prefix of 2^31-1
  | "negative" // a length prefix of -5
  | "beyond" // a length prefix just over the client's default maxBufferSize (1 MB + 1)
  | "short-frame" // a 3-byte frame: too short for a ReplyHeader
  | "junk-reply" // a well-framed reply whose xid nobody asked for
  | "bad-body" // a reply with the right xid, err 0, and a body whose string length is hostile
  | "random" // 4 KB of random bytes
  | "trickle"; // a 1000-byte frame header, then one byte every 200 ms: a frame that never finishes in time

export interface FakeServerOptions {
  garbage: Garbage;
  /** When the garbage goes out: in place of the ConnectResponse, right after it, or in answer to the first request. */
  when: "handshake" | "afterConnect" | "firstRequest";
  upstream?: { host: string; port: number };
}

export interface FakeServer {
  readonly port: number;
  readonly connectString: string;
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Garbage payloads sent so far. */
  readonly sent: number;
  close(): Promise<void>;
}

/** Splits a socket's bytes into length-prefixed frames (each with its prefix), read one at a time. */
class Frames {
  private acc = Buffer.alloc(0);
  private readonly ready: Buffer[] = [];
  private waiter: ((f: Buffer | null) => void) | null = null;
  private ended = false;

  constructor(s: net.Socket) {
    s.on("data", (b: Buffer) => {
      this.acc = Buffer.concat([this.acc, b]);
      while (this.acc.length >= 4) {
        const len = this.acc.readInt32BE(0);
        if (len < 0 || len > 1 << 20) return this.end();
        if (this.acc.length < 4 + len) break;
        this.ready.push(this.acc.subarray(0, 4 + len));
        this.acc = this.acc.subarray(4 + len);
      }
      this.wake();
    });
    s.on("close", () => this.end());
  }

  private end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    if (!w || (this.ready.length === 0 && !this.ended)) return;
    this.waiter = null;
    w(this.ready.shift() ?? null);
  }

  /** The next whole frame; rejects when the socket ends first. */
  next(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.waiter = (f) => (f ? resolve(f) : reject(new Error("closed before a whole frame")));
      this.wake();
    });
  }
}

function inventedResponse(req: Buffer): Buffer {
  const timeout = req.length >= 24 ? req.readInt32BE(4 + 12) : 30_000;
  const b = Buffer.alloc(4 + 4 + 4 + 8 + 4 + 16 + 1);
  let o = b.writeInt32BE(b.length - 4, 0);
  o = b.writeInt32BE(0, o); // protocolVersion
  o = b.writeInt32BE(timeout, o);
  o = b.writeBigInt64BE(0x0badc0de00000001n, o);
  o = b.writeInt32BE(16, o);
  return b; // 16 zero password bytes, readOnly false
}

async function handshake(client: net.Socket, frames: Frames, upstream: FakeServerOptions["upstream"]): Promise<void> {
  const req = await frames.next();
  if (!upstream) {
    client.write(inventedResponse(req));
    return;
  }
  const up = net.connect(upstream);
  up.on("error", () => {});
  const upFrames = new Frames(up);
  try {
    await new Promise<void>((resolve, reject) => {
      up.once("connect", resolve);
      up.once("error", reject);
    });
    up.write(req);
    client.write(await upFrames.next());
  } finally {
    up.destroy(); // the server keeps the session; the client resumes it elsewhere
  }
}

function garbageBytes(kind: Garbage, xid: number): Buffer {
  const int = (v: number): Buffer => {
    const b = Buffer.alloc(4);
    b.writeInt32BE(v);
    return b;
  };
  switch (kind) {
    case "oversized":
      return Buffer.concat([int(0x7fffffff), Buffer.alloc(64, 0xee)]);
    case "negative":
      return Buffer.concat([int(-5), Buffer.alloc(64, 0xee)]);
    case "beyond":
      return Buffer.concat([int(0x100000), Buffer.alloc(64, 0xee)]);
    case "short-frame":
      return Buffer.from([0, 0, 0, 3, 1, 2, 3]);
    case "junk-reply": {
      const h = Buffer.alloc(4 + 16);
      h.writeInt32BE(16, 0);
      h.writeInt32BE(0x5eed, 4); // an xid no request has
      return h;
    }
    case "bad-body": {
      // ReplyHeader{xid, zxid 1, err 0} then a string/buffer/vector count of 2^31-1.
      const b = Buffer.alloc(4 + 16 + 4 + 8);
      b.writeInt32BE(b.length - 4, 0);
      b.writeInt32BE(xid, 4);
      b.writeBigInt64BE(1n, 8);
      b.writeInt32BE(0, 16);
      b.writeInt32BE(0x7fffffff, 20);
      return b;
    }
    case "trickle":
    case "random": {
      const b = Buffer.alloc(4096);
      for (let i = 0; i < b.length; i++) b[i] = (Math.random() * 256) | 0;
      return b;
    }
  }
}

export async function startFakeServer(opts: FakeServerOptions): Promise<FakeServer> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  let sent = 0;
  const server = net.createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    void (async () => {
      try {
        const frames = new Frames(s);
        if (opts.when === "handshake") {
          await frames.next(); // the ConnectRequest, answered with the garbage
          sent++;
          s.write(garbageBytes(opts.garbage, 0));
          return;
        }
        await handshake(s, frames, opts.upstream);
        let xid = 0;
        if (opts.when === "firstRequest") {
          // Skip pings (xid -2) and auth (-4): wait for a real request and answer it with garbage.
          for (;;) {
            const f = await frames.next();
            xid = f.length >= 8 ? f.readInt32BE(4) : 0;
            // The feature probes are answered as the 3.8 server behind it would (config node there, no
            // persistent-recursive watch type): whatever the client remembers of this host:port (a port the
            // OS gave a real server earlier in the same process), it stays on this link, and the next request
            // is the user's. Answered "like 3.4" (NONODE), a client that had seen a 3.8 server on the same
            // port dropped the link as "now ZooKeeper 3.4" before the garbage could be tested (Bun, loaded run).
            const probe = featureProbe(f);
            if (probe !== null) {
              // exists: the node is there (a Stat of 68 zero bytes); removeWatches: BADARGUMENTS, not 3.9's NOWATCHER.
              s.write(probe === "config" ? reply(xid, 0, 68) : reply(xid, -8));
              continue;
            }
            if (xid >= 0) break;
          }
        }
        if (s.destroyed) return;
        sent++;
        if (opts.garbage === "trickle") {
          s.write(Buffer.from([0, 0, 0x03, 0xe8]));
          const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write(Buffer.from([0]))), 200);
          s.once("close", () => clearInterval(t));
          return;
        }
        s.write(garbageBytes(opts.garbage, xid));
      } catch {
        s.destroy();
      }
    })();
  });
  server.on("error", () => {});
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    connectString: `127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get sent() {
      return sent;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

// --- a relay that corrupts server frames ---

export interface MutatingRelay {
  readonly port: number;
  readonly connectString: string;
  /** Server frames relayed and how many of them were corrupted. */
  readonly stats: { frames: number; mutated: number; byKind: Record<string, number>; recent: string[] };
  /** Probability (0..1) that a server frame after the handshake is corrupted. */
  setRate(rate: number): void;
  close(): Promise<void>;
}

/** One random corruption of a whole frame (prefix included). Never touches the ReplyHeader zxid (payload bytes 4..11). */
function corrupt(frame: Buffer, byKind: Record<string, number>): Buffer {
  const b = Buffer.from(frame);
  const pick = Math.floor(Math.random() * 5);
  const kind = ["flip", "int", "truncate", "prefix", "extend"][pick]!;
  byKind[kind] = (byKind[kind] ?? 0) + 1;
  const safe = (at: number): boolean => at < 8 || at >= 16; // whole-frame offsets of the zxid: 8..15
  switch (kind) {
    case "flip": {
      for (let n = 1 + Math.floor(Math.random() * 3); n > 0; n--) {
        const at = 4 + Math.floor(Math.random() * Math.max(1, b.length - 4));
        if (at < b.length && safe(at)) b[at]! ^= 1 << Math.floor(Math.random() * 8);
      }
      return b;
    }
    case "int": {
      const slots = Math.floor((b.length - 4) / 4);
      const at = 4 + 4 * Math.floor(Math.random() * Math.max(1, slots));
      const values = [-1, 0, 1, 0x7fffffff, -0x80000000, b.length, Math.floor(Math.random() * 2 ** 32) | 0];
      let v = values[Math.floor(Math.random() * values.length)]!;
      // Not a special xid (notification -1, ping -2, auth -4): a reply turned into one of those is
      // indistinguishable from the real thing, and its request could only wait (as in any client).
      if (at === 4 && v < 0 && v >= -8) v = 0x7fff0000;
      if (at + 4 <= b.length && safe(at) && safe(at + 3)) b.writeInt32BE(v, at);
      return b;
    }
    case "truncate": {
      // A shorter payload with a consistent prefix: the stream stays framed, the record is cut.
      const len = Math.floor(Math.random() * (b.length - 4));
      b.writeInt32BE(len, 0);
      return b.subarray(0, 4 + len);
    }
    case "prefix": {
      // A lying length prefix: the stream loses its framing from here on.
      b.writeInt32BE(Math.max(0, b.length - 4 + Math.floor(Math.random() * 41) - 20), 0);
      return b;
    }
    default: {
      // Trailing junk inside a consistent frame.
      const extra = Buffer.alloc(1 + Math.floor(Math.random() * 16), Math.floor(Math.random() * 256));
      const out = Buffer.concat([b, extra]);
      out.writeInt32BE(out.length - 4, 0);
      return out;
    }
  }
}

export async function startMutatingRelay(upstream: { host: string; port: number }, rate: number): Promise<MutatingRelay> {
  const sockets = new Set<net.Socket>();
  const stats = { frames: 0, mutated: 0, byKind: {} as Record<string, number>, recent: [] as string[] };
  let p = rate;
  const server = net.createServer((client) => {
    const up = net.connect(upstream);
    for (const s of [client, up]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => {
        sockets.delete(s);
        client.destroy();
        up.destroy();
      });
    }
    client.on("data", (b: Buffer) => up.write(b));
    let acc: Buffer = Buffer.alloc(0);
    let first = true;
    up.on("data", (b: Buffer) => {
      acc = Buffer.concat([acc, b]);
      while (acc.length >= 4) {
        const len = acc.readInt32BE(0);
        if (acc.length < 4 + len) break;
        const frame = acc.subarray(0, 4 + len);
        acc = acc.subarray(4 + len);
        stats.frames++;
        if (!first && Math.random() < p) {
          stats.mutated++;
          const bad = corrupt(frame, stats.byKind);
          // The last few corruptions, as hex before → after, for failure messages.
          stats.recent.push(`${frame.subarray(0, 24).toString("hex")} -> ${bad.subarray(0, 24).toString("hex")}`);
          if (stats.recent.length > 5) stats.recent.shift();
          client.write(bad);
        } else client.write(frame);
        first = false;
      }
    });
  });
  server.on("error", () => {});
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    connectString: `127.0.0.1:${port}`,
    stats,
    setRate: (r) => {
      p = r;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Which of the client's feature probes (features.ts) the request frame `f` is, if any. */
function featureProbe(f: Buffer): "config" | "removal" | null {
  if (f.length < 12) return null;
  const op = f.readInt32BE(8);
  if (op === 18) return "removal"; // removeWatches: only the probe sends it before the user's first request
  const path = "/zookeeper/config";
  const config = op === 3 && f.length >= 16 + path.length && f.readInt32BE(12) === path.length && f.toString("utf8", 16, 16 + path.length) === path;
  return config ? "config" : null;
}

/** A reply frame: ReplyHeader{xid, zxid 1, err} and `bodyBytes` zero bytes. */
function reply(xid: number, err: number, bodyBytes = 0): Buffer {
  const b = Buffer.alloc(4 + 16 + bodyBytes);
  b.writeInt32BE(16 + bodyBytes, 0);
  b.writeInt32BE(xid, 4);
  b.writeBigInt64BE(1n, 8);
  b.writeInt32BE(err, 16);
  return b;
}
