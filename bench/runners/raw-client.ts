// The wire limit (`raw`): the least a JavaScript client can do on one socket for the bench's workloads.
// Request frames are built once per (op, path) and only the xid is patched; replies are matched FIFO and
// only their header (xid, zxid, err) is read — plus the created name for create, the one body the
// workloads need. No session management, pings, reconnects, validation or public API: a measuring stick.
// Writes are gathered per tick into one socket write, as every pipelined client does.
import { connect as tcp, type Socket } from "node:net";
import type { Done, Driver, Session } from "./harness.ts";
import { OP, int32 } from "../lib/wire.ts";

const WATCH_XID = -1;
const PING_XID = -2;
const ACL_OPEN = [0, 0, 0, 1, 0, 0, 0, 31, 0, 0, 0, 5, ...Buffer.from("world"), 0, 0, 0, 6, ...Buffer.from("anyone")];

/** One frame: length, xid placeholder, opcode, then the body parts (numbers are 4-byte ints, bytes raw). */
function frame(op: number, parts: (number | Uint8Array | number[])[]): Buffer {
  const chunks = parts.map((p) => (typeof p === "number" ? int32(p) : Buffer.from(p)));
  const body = Buffer.concat([int32(0), int32(op), ...chunks]);
  return Buffer.concat([int32(body.length), body]);
}
const str = (s: string): (number | Buffer)[] => {
  const b = Buffer.from(s);
  return [b.length, b];
};
const bytes = (d: Uint8Array): (number | Uint8Array)[] => [d.length, d];

type OnReply = (err: number, reply: Buffer) => void;

export class RawSession implements Session {
  private readonly pending: OnReply[] = [];
  private head = 0;
  private xid = 1;
  private outq: Buffer[] = [];
  private readonly frames = new Map<string, Buffer>();
  private readonly watchers = new Map<string, () => void>();
  private acc: Buffer = Buffer.alloc(0);
  private onHandshake: (() => void) | null;
  private readonly socket: Socket;

  constructor(socket: Socket, onReady: () => void) {
    this.socket = socket;
    this.onHandshake = onReady;
    socket.setNoDelay(true);
    socket.on("data", (c: Buffer) => this.read(c));
    // ConnectRequest: protocolVersion, lastZxidSeen (long), timeOut, sessionId (long), passwd (16 zero bytes), readOnly.
    socket.write(Buffer.concat([int32(45), int32(0), Buffer.alloc(8), int32(30_000), Buffer.alloc(8), int32(16), Buffer.alloc(16), Buffer.alloc(1)]));
  }

  private read(chunk: Buffer): void {
    let b = this.acc.length ? Buffer.concat([this.acc, chunk]) : chunk;
    let off = 0;
    while (b.length - off >= 4) {
      const len = b.readInt32BE(off);
      if (b.length - off - 4 < len) break;
      const f = b.subarray(off + 4, off + 4 + len);
      off += 4 + len;
      if (this.onHandshake) {
        const h = this.onHandshake;
        this.onHandshake = null;
        h();
        continue;
      }
      const xid = f.readInt32BE(0);
      if (xid === WATCH_XID) {
        const n = f.readInt32BE(24); // header 16, then type, state, path
        const path = f.toString("utf8", 28, 28 + n);
        const w = this.watchers.get(path);
        this.watchers.delete(path);
        w?.();
      } else if (xid !== PING_XID) {
        const cb = this.pending[this.head];
        this.pending[this.head++] = undefined!;
        if (this.head === this.pending.length) {
          this.pending.length = 0;
          this.head = 0;
        }
        cb(f.readInt32BE(12), f);
      }
    }
    b = b.subarray(off);
    this.acc = b.length ? Buffer.from(b) : Buffer.alloc(0);
  }

  /** Queues a copy of the template `f` (the cached frame stays as it is) and `cb` for its reply. */
  private send(f: Buffer, cb: OnReply): void {
    const out = Buffer.allocUnsafe(f.length);
    f.copy(out);
    this.sendOwned(out, cb);
  }

  /** Queues `f` (built for this call) with the next xid, and `cb` for its reply. */
  private sendOwned(f: Buffer, cb: OnReply): void {
    f.writeInt32BE(this.xid++, 4);
    this.pending.push(cb);
    if (this.outq.push(f) === 1) queueMicrotask(() => this.flush());
  }

  private flush(): void {
    const q = this.outq;
    this.outq = [];
    this.socket.write(q.length === 1 ? q[0] : Buffer.concat(q));
  }

  private cached(key: string, make: () => Buffer): Buffer {
    let f = this.frames.get(key);
    if (!f) this.frames.set(key, (f = make()));
    return f;
  }

  get(path: string, d: Done): void {
    this.send(this.cached(`g${path}`, () => frame(OP.getData, [...str(path), [0]])), (e) => d(e ? new Error(`getData: ${e}`) : null));
  }
  set(path: string, data: Uint8Array, d: Done): void {
    this.send(this.cached(`s${path}`, () => frame(OP.setData, [...str(path), ...bytes(data), -1])), (e) => d(e ? new Error(`setData: ${e}`) : null));
  }
  createEphSeq(prefix: string, data: Uint8Array, d: (err: Error | null, path?: string) => void): void {
    const f = this.cached(`c${prefix}`, () => frame(OP.create, [...str(prefix), ...bytes(data), ACL_OPEN, 3]));
    this.send(f, (e, r) => (e ? d(new Error(`create: ${e}`)) : d(null, r.toString("utf8", 20, 20 + r.readInt32BE(16)))));
  }
  ensure(path: string, data: Uint8Array, ephemeral: boolean, d: Done): void {
    const f = frame(OP.create, [...str(path), ...bytes(data), ACL_OPEN, ephemeral ? 1 : 0]);
    this.send(f, (e) => d(e && e !== -110 ? new Error(`create: ${e}`) : null)); // -110 NODEEXISTS
  }
  remove(path: string, d: Done): void {
    // A new path every time, so no template: length, xid, opcode, path, version -1, written in place.
    const n = Buffer.byteLength(path);
    const f = Buffer.allocUnsafe(20 + n);
    f.writeInt32BE(16 + n, 0);
    f.writeInt32BE(OP.delete, 8);
    f.writeInt32BE(n, 12);
    f.write(path, 16);
    f.writeInt32BE(-1, 16 + n);
    this.sendOwned(f, (e) => d(e ? new Error(`delete: ${e}`) : null));
  }
  watchData(path: string, onChange: () => void, d: Done): void {
    this.watchers.set(path, onChange);
    this.send(this.cached(`w${path}`, () => frame(OP.getData, [...str(path), [1]])), (e) => d(e ? new Error(`getData: ${e}`) : null));
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.send(CLOSE, () => {
        this.socket.end();
        resolve();
      });
    });
  }
}

const CLOSE = frame(OP.closeSession, []);

export const driver: Driver = {
  peer: "raw",
  connect: (cs) =>
    new Promise((resolve, reject) => {
      const [host, port] = cs.split(",")[0]!.split("/")[0]!.split(":");
      const socket = tcp({ host, port: Number(port ?? 2181) });
      socket.once("error", reject);
      socket.once("connect", () => {
        const s = new RawSession(socket, () => resolve(s));
      });
    }),
};

