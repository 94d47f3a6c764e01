// A fake ZooKeeper reached through a public ConnectOptions.transport, for the client's own timers on an
// injected clock (no sockets, no sleeps): it answers the ConnectRequest (negotiated timeout 3000 ms:
// read timeout 2000 ms, ping interval 1000 ms, tick 250 ms, client-side expiry 4000 ms), then every
// ping and request with a bare reply header — unless `answering` is off (replies dropped) or `holding`
// is on (replies kept in `held` until `release()`).
import { ZooKeeper, type LinkHandlers, type Transport } from "../../../src/index.ts";
import { FrameDecoder, encodeFrame } from "../../../src/protocol/frame.ts";
import { JuteReader } from "../../../src/protocol/jute.ts";
import { writeConnectResponse } from "../../../src/protocol/records.ts";
import { type ManualClock, settle } from "./fake-clock.ts";

export class FakeZk implements Transport {
  /** The session timeout it grants. */
  timeOut = 3000;
  answering = true;
  holding = false;
  refuse = false;
  connects = 0;
  pings = 0;
  held: number[] = []; // xids of replies not sent yet
  private handlers: LinkHandlers | null = null;

  async connect(_target: { host: string; port: number }, handlers: LinkHandlers): Promise<{ write(b: Uint8Array): boolean; close(): void; remote: string }> {
    this.connects++;
    if (this.refuse) throw new Error("connect ECONNREFUSED (fake)");
    this.handlers = handlers;
    const decoder = new FrameDecoder();
    let first = true;
    return {
      remote: "fake:2181",
      close: () => {
        if (this.handlers === handlers) this.handlers = null;
      },
      write: (bytes) => {
        for (const frame of decoder.push(bytes)) {
          if (first) {
            first = false;
            const reply = encodeFrame((w) => writeConnectResponse(w, { protocolVersion: 0, timeOut: this.timeOut, sessionId: 0x42n, passwd: new Uint8Array(16), readOnly: false }));
            queueMicrotask(() => handlers.onData(reply));
            continue;
          }
          const xid = new JuteReader(frame, 0, frame.length).int();
          if (xid === -2) this.pings++;
          if (!this.answering) continue;
          if (this.holding) this.held.push(xid);
          else queueMicrotask(() => this.send(xid));
        }
        return true;
      },
    };
  }

  /** A reply header frame (xid, zxid 0, err 0) from the server. */
  send(xid: number): void {
    this.handlers?.onData(encodeFrame((w) => w.int(xid).long(0n).int(0)));
  }

  /** Sends the held replies, in order. */
  release(): void {
    for (const xid of this.held.splice(0)) this.send(xid);
  }
}

/** A client of `server` on `clock` (session timeout 3000 ms), connected. */
export async function connectFake(clock: ManualClock, server: FakeZk): Promise<ZooKeeper> {
  const pending = ZooKeeper.connect("fake:2181", { transport: server, clock, sessionTimeout: 3000, connectTimeout: 10_000 });
  await settle();
  return pending;
}
