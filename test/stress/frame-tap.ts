// A transparent TCP relay that records every client→server request frame (opcode and size), so
// load tests can count e.g. the SetWatches batches a reconnect sends. The first frame of each
// connection is the ConnectRequest (no header) and is recorded with opcode null.
import net from "node:net";

export interface TappedFrame {
  conn: number;
  opcode: number | null;
  /** Payload bytes, without the 4-byte length. */
  size: number;
  payload: Buffer;
}

export interface FrameTap {
  readonly port: number;
  readonly connectString: string;
  readonly frames: TappedFrame[];
  /** Destroys every relayed connection (both sides); the listener stays up. */
  cutAll(): void;
  close(): Promise<void>;
}

export async function startFrameTap(host: string, port: number, keepPayloadOf: readonly number[] = []): Promise<FrameTap> {
  const frames: TappedFrame[] = [];
  const pairs = new Set<[net.Socket, net.Socket]>();
  let conns = 0;
  const server = net.createServer((client) => {
    const conn = ++conns;
    const upstream = net.connect({ host, port });
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    let acc: Buffer = Buffer.alloc(0);
    let first = true;
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    for (const s of pair) {
      s.on("error", end);
      s.on("close", end);
      s.setNoDelay(true);
    }
    upstream.on("data", (b: Buffer) => client.write(b));
    client.on("data", (b: Buffer) => {
      upstream.write(b);
      acc = acc.length === 0 ? b : Buffer.concat([acc, b]);
      while (acc.length >= 4) {
        const len = acc.readInt32BE(0);
        if (acc.length < 4 + len) break;
        const payload = acc.subarray(4, 4 + len);
        const opcode = first || len < 8 ? null : payload.readInt32BE(4);
        frames.push({ conn, opcode, size: len, payload: opcode !== null && keepPayloadOf.includes(opcode) ? Buffer.from(payload) : Buffer.alloc(0) });
        first = false;
        acc = acc.subarray(4 + len);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const p = (server.address() as net.AddressInfo).port;
  return {
    port: p,
    connectString: `127.0.0.1:${p}`,
    frames,
    cutAll: () => {
      for (const [a, b] of [...pairs]) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
    },
    close: () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
