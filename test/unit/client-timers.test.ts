// The client's own timers on an injected clock with a fake transport (no sockets, no sleeps): the
// ping interval, the read timeout, client-side expiry and stall detection, in virtual milliseconds.
// Negotiated timeout 3000 ms: read timeout 2000 ms, ping interval 1000 ms, tick 250 ms, expiry 4000 ms.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ZooKeeper } from "../../src/index.ts";
import { FrameDecoder, encodeFrame } from "../../src/protocol/frame.ts";
import { JuteReader } from "../../src/protocol/jute.ts";
import { writeConnectResponse } from "../../src/protocol/records.ts";
import type { Dialer, LinkHandlers } from "../../src/client/transport.ts";
import type { InternalOptions } from "../../src/client/zookeeper.ts";
import { ManualClock, settle } from "../support/fake-clock.ts";

/** A fake server: answers the ConnectRequest and (while `answering`) every ping. */
class FakeServer {
  answering = true;
  refuse = false;
  pings = 0;
  dials = 0;
  private handlers: LinkHandlers | null = null;

  readonly dialer: Dialer = async (_target, handlers) => {
    this.dials++;
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
            const reply = encodeFrame((w) => writeConnectResponse(w, { protocolVersion: 0, timeOut: 3000, sessionId: 0x42n, passwd: new Uint8Array(16), readOnly: false }));
            queueMicrotask(() => handlers.onData(reply));
            continue;
          }
          const xid = new JuteReader(frame, 0, frame.length).int();
          if (xid === -2) this.pings++;
          // Pings and requests (closeSession) get their reply header while the server answers.
          if (this.answering) queueMicrotask(() => this.send(xid));
        }
        return true;
      },
    };
  };

  /** A reply header frame (xid, zxid 0, err 0) from the server. */
  send(xid: number): void {
    this.handlers?.onData(encodeFrame((w) => w.int(xid).long(0n).int(0)));
  }
}

async function connect(clock: ManualClock, server: FakeServer): Promise<ZooKeeper> {
  const opts: InternalOptions = { dialer: server.dialer, clock, sessionTimeout: 3000, connectTimeout: 10_000 };
  const pending = ZooKeeper.connect("fake:2181", opts);
  await settle();
  return pending;
}

describe("client timers on an injected clock", () => {
  it("pings once per interval while the server answers, and stays connected", async () => {
    const clock = new ManualClock();
    const server = new FakeServer();
    const zk = await connect(clock, server);
    await clock.advance(10_000);
    assert.equal(zk.state, "connected");
    assert.ok(server.pings >= 9 && server.pings <= 10, `${server.pings} pings in 10 s at a 1 s interval`);
    assert.ok(clock.now() - zk.lastHeardAt <= 1250, `last heard ${clock.now() - zk.lastHeardAt} ms ago`);
    server.refuse = true;
    await zk.close();
  });

  it("read timeout: a silent server is dropped after 2/3 of the session timeout, not before", async () => {
    const clock = new ManualClock();
    const server = new FakeServer();
    const zk = await connect(clock, server);
    server.answering = false;
    server.refuse = true;
    const states: string[] = [];
    zk.on("state", (s) => states.push(`${s}@${clock.now() - 1000}`));
    await clock.advance(1900);
    assert.equal(zk.state, "connected");
    await clock.advance(400);
    assert.equal(zk.state, "disconnected", states.join(" "));
    await zk.close();
  });

  it("client-side expiry: unreachable for 4/3 of the session timeout ends the session", async () => {
    const clock = new ManualClock();
    const server = new FakeServer();
    const zk = await connect(clock, server);
    const heard = zk.lastHeardAt;
    server.answering = false;
    server.refuse = true;
    await clock.advance(3900);
    assert.equal(zk.state, "disconnected");
    assert.ok(server.dials > 1, "it kept trying to reconnect");
    await clock.advance(heard + 4000 - clock.now() + 50);
    assert.equal(zk.state, "expired");
    await zk.close();
  });

  it("stall detection: bytes read right after a process pause do not count as freshly heard", async () => {
    const clock = new ManualClock();
    const server = new FakeServer();
    const zk = await connect(clock, server);
    server.answering = false;
    server.refuse = true;
    await clock.advance(1100); // the first ping (at 1000 ms) is outstanding, unanswered
    assert.equal(server.pings, 1);
    clock.jump(1500); // paused: no timer ran for 1.5 s
    server.send(-2); // the ping's reply, read only now from the socket buffer
    await settle();
    assert.ok(clock.now() - zk.lastHeardAt >= 2600, `stale bytes refreshed lastHeardAt (${clock.now() - zk.lastHeardAt} ms)`);
    await clock.advance(250); // the overdue tick: past the read timeout
    assert.equal(zk.state, "disconnected");
    await zk.close();
  });
});
