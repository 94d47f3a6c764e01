// The client's own timers on an injected clock with a fake transport (no sockets, no sleeps): the
// ping interval, the read timeout, client-side expiry and stall detection, in virtual milliseconds.
// Negotiated timeout 3000 ms: read timeout 2000 ms, ping interval 1000 ms, tick 250 ms, expiry 4000 ms.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ZooKeeper } from "../../src/index.ts";
import { ManualClock, settle } from "../support/fake-clock.ts";
import { FakeZk, connectFake } from "../support/fake-zk.ts";

describe("client timers on an injected clock", () => {
  it("pings once per interval while the server answers, and stays connected", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    await clock.advance(10_000);
    assert.equal(zk.state, "connected");
    assert.ok(server.pings >= 9 && server.pings <= 10, `${server.pings} pings in 10 s at a 1 s interval`);
    assert.ok(clock.now() - zk.lastHeardAt <= 1250, `last heard ${clock.now() - zk.lastHeardAt} ms ago`);
    server.refuse = true;
    await zk.close();
  });

  it("read timeout: a silent server is dropped after 2/3 of the session timeout, not before", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
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
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    const heard = zk.lastHeardAt;
    server.answering = false;
    server.refuse = true;
    await clock.advance(3900);
    assert.equal(zk.state, "disconnected");
    assert.ok(server.connects > 1, "it kept trying to reconnect");
    await clock.advance(heard + 4000 - clock.now() + 50);
    assert.equal(zk.state, "expired");
    await zk.close();
  });

  it("stall detection: bytes read right after a process pause do not count as freshly heard", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
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
