// An in-process stand-in for the server, for measuring a client's own CPU per operation without a JVM, a
// kernel or a network in the count: every batch the client writes is answered, as one chunk, on the next
// turn of the event loop (as a socket read would deliver a server's batched replies). Replies are templates
// with the xid patched in, so the stand-in costs the same whatever client talks to it. zookeeper-ts reaches
// it through ConnectOptions.transport, the raw client through a socket-shaped object. Not a ZooKeeper: it
// knows the handful of requests bench/prof.ts sends, and answers the client's feature probes as 3.8 does.
import type { Link, LinkHandlers, Transport } from "../src/index.ts";
import { OP, int32 } from "./lib/wire.ts";

const ZXID = 0x0000_0005_0000_0a2bn; // a plausible zxid: epoch 5, counter 2603
const STAT = (() => {
  const s = Buffer.alloc(68);
  s.writeBigInt64BE(0x0000_0005_0000_0011n, 0); // czxid
  s.writeBigInt64BE(ZXID, 8); // mzxid
  s.writeBigInt64BE(1_764_000_000_000n, 16); // ctime
  s.writeBigInt64BE(1_764_000_100_000n, 24); // mtime
  s.writeInt32BE(7, 32); // version
  s.writeBigInt64BE(ZXID, 60); // pzxid (ephemeralOwner 0, dataLength and numChildren left 0)
  s.writeInt32BE(100, 52); // dataLength
  return s;
})();

/** A reply frame: length, ReplyHeader {xid 0 (patched), zxid, err}, then `body`. */
function replyTemplate(err: number, body: Uint8Array = new Uint8Array(0)): Buffer {
  const f = Buffer.alloc(20 + body.length);
  f.writeInt32BE(16 + body.length, 0);
  f.writeBigInt64BE(ZXID, 8);
  f.writeInt32BE(err, 16);
  f.set(body, 20);
  return f;
}

const OK = replyTemplate(0);
const WITH_STAT = replyTemplate(0, STAT);
const GET_DATA = replyTemplate(0, Buffer.concat([int32(100), Buffer.alloc(100, 0x61), STAT]));
const BAD_ARGUMENTS = replyTemplate(-8);
// ConnectResponse: protocolVersion 0, timeOut 30000, sessionId, passwd (16 bytes), readOnly false.
const CONNECTED = Buffer.concat([int32(4 + 4 + 8 + 4 + 16 + 1), int32(0), int32(30_000), Buffer.from("0100000500000001", "hex"), int32(16), Buffer.alloc(16, 7), Buffer.alloc(1)]);


/** One client connection to the stand-in: takes the client's writes, answers them a turn later. */
export class LoopLink {
  private first = true;
  private out: Buffer[] = [];
  private scheduled = false;
  private sequence = 0;
  private closing = false;
  /** Paths with a one-shot data watch (getData with watch = true), for `fire`. */
  readonly watched: string[] = [];
  private readonly deliver: (chunk: Buffer) => void;
  private readonly ended: () => void;

  constructor(deliver: (chunk: Buffer) => void, ended: () => void) {
    this.deliver = deliver;
    this.ended = ended;
  }

  /** The client's bytes: whole frames only (every client here writes whole frames). */
  write(bytes: Uint8Array): boolean {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let at = 0; at < b.length; ) {
      const len = b.readInt32BE(at);
      this.answer(b.subarray(at + 4, at + 4 + len));
      at += 4 + len;
    }
    return true;
  }

  private answer(f: Buffer): void {
    if (this.first) {
      this.first = false;
      return this.queue(CONNECTED, null);
    }
    const xid = f.readInt32BE(0);
    const op = f.readInt32BE(4);
    switch (op) {
      case OP.getData: {
        const n = f.readInt32BE(8);
        if (f[12 + n] === 1) this.watched.push(f.toString("latin1", 12, 12 + n));
        return this.queue(GET_DATA, xid);
      }
      case OP.exists:
      case OP.setData:
        return this.queue(WITH_STAT, xid);
      case OP.create: {
        const n = f.readInt32BE(8);
        const name = Buffer.from(f.toString("latin1", 12, 12 + n) + String(++this.sequence).padStart(10, "0"), "latin1");
        return this.queue(replyTemplate(0, Buffer.concat([int32(name.length), name])), xid);
      }
      case OP.removeWatches:
        return this.queue(BAD_ARGUMENTS, xid); // the feature probe's answer on 3.5 to 3.8
      case OP.closeSession:
        this.closing = true;
        return this.queue(OK, xid);
      default: // delete, ping, setWatches, auth: an empty OK
        return this.queue(OK, xid);
    }
  }

  /** Queues a copy of `template` with `xid` (null: the ConnectResponse, as it is). */
  private queue(template: Buffer, xid: number | null): void {
    const f = Buffer.from(template);
    if (xid !== null) f.writeInt32BE(xid, 4);
    this.out.push(f);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const chunk = this.out.length === 1 ? this.out[0]! : Buffer.concat(this.out);
      this.out = [];
      this.deliver(chunk);
      if (this.closing) this.ended();
    });
  }

  /** Sends NodeDataChanged for every watched path, in chunks of about 64 KB, as a storm of notifications. */
  fire(): void {
    const frames = this.watched.splice(0).map((path) => {
      const p = Buffer.from(path, "latin1");
      const f = Buffer.alloc(4 + 16 + 12 + p.length);
      f.writeInt32BE(f.length - 4, 0);
      f.writeInt32BE(-1, 4);
      f.writeBigInt64BE(ZXID, 8);
      f.writeInt32BE(3, 20); // NodeDataChanged
      f.writeInt32BE(3, 24); // SyncConnected
      f.writeInt32BE(p.length, 28);
      p.copy(f, 32);
      return f;
    });
    for (let i = 0; i < frames.length; ) {
      let size = 0;
      let j = i;
      while (j < frames.length && size < 65_536) size += frames[j++]!.length;
      this.deliver(Buffer.concat(frames.slice(i, j)));
      i = j;
    }
  }
}

/**
 * The stand-in as a zookeeper-ts transport; `last()` is the latest connection made through it. Only that one is
 * kept: a list of them all kept every session of a connect loop alive, and its GC cost was counted as the client's.
 */
export function loopbackTransport(): { transport: Transport; last(): LoopLink | undefined } {
  let latest: LoopLink | undefined;
  const transport: Transport = {
    connect: (_target, handlers: LinkHandlers): Promise<Link> => {
      let open = true;
      const loop = new LoopLink(
        (chunk) => open && handlers.onData(chunk),
        () => open && ((open = false), handlers.onClose()),
      );
      latest = loop;
      return Promise.resolve({ write: (bytes) => loop.write(bytes), close: () => void (open = false), remote: "loopback:2181" });
    },
  };
  return { transport, last: () => latest };
}

/** The stand-in behind a socket-shaped object (write, on("data"), setNoDelay, end), for the raw client. */
export function loopbackSocket(): { socket: LoopSocket; link: LoopLink } {
  let onData: (chunk: Buffer) => void = () => {};
  const link = new LoopLink(
    (chunk) => onData(chunk),
    () => {},
  );
  const socket: LoopSocket = {
    write: (bytes) => link.write(bytes),
    on: (_event, listener) => {
      onData = listener;
      return socket;
    },
    setNoDelay: () => socket,
    end: () => socket,
  };
  return { socket, link };
}

export interface LoopSocket {
  write(bytes: Uint8Array): boolean;
  on(event: "data", listener: (chunk: Buffer) => void): LoopSocket;
  setNoDelay(noDelay?: boolean): LoopSocket;
  end(): LoopSocket;
}
