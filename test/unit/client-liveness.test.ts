// The liveness reading (liveness.ts through zk.heardWithin / zk.leaseRemaining) on an injected clock,
// with a fake server given as a public ConnectOptions.transport: the lease counts from when the last
// acknowledged request was *sent*, so replies read late (slow, or after a process pause) never extend
// it. Also: the transport and clock options are the ones used, and are checked.
// Negotiated timeout 3000 ms: read timeout 2000 ms, ping interval 1000 ms, tick 250 ms.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ErrorCode, ZooKeeper, ZooKeeperError, type LinkHandlers, type Transport } from "../../src/index.ts";
import { ManualClock, settle } from "../support/fakes/fake-clock.ts";
import { FakeZk, connectFake } from "../support/fakes/fake-zk.ts";

describe("liveness: the lease from the acknowledged send", () => {
  it("uses the given transport and clock; zk.clock is that clock", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    assert.equal(server.connects, 1);
    assert.equal(zk.clock, clock);
    assert.equal(zk.remoteAddress, "fake:2181");
    assert.equal(zk.lastHeardAt, clock.now(), "lastHeardAt is on the injected clock");
    server.refuse = true;
    await zk.close();
  });

  it("counts from the send: a silent server leaves the lease running out at the read timeout after the last acked send", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    const sent = clock.now(); // the ConnectRequest went out at this time (no time passed since)
    assert.equal(zk.readTimeout, 2000);
    assert.equal(zk.leaseRemaining(), 2000);
    assert.equal(zk.heardWithin(1), true);
    server.holding = true; // nothing answered from here on
    await clock.advance(1900);
    assert.equal(zk.state, "connected");
    assert.equal(zk.leaseRemaining(), sent + 2000 - clock.now());
    assert.equal(zk.heardWithin(2000), true);
    assert.equal(zk.heardWithin(1800), false);
    assert.equal(zk.leaseRemaining(1800), 0);
    await clock.advance(150);
    assert.equal(zk.heardWithin(2000), false);
    assert.equal(zk.leaseRemaining(), 0);
  });

  it("a reply that arrives late renews the lease only from its request's send time", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    server.holding = true;
    await clock.advance(1100); // one ping (sent at 1000 ms) is outstanding
    // (with the feature probes, xids 1 and 2, when "fake:2181" was seen in an earlier test of this file)
    assert.deepEqual(server.held.filter((xid) => xid < 0), [-2]);
    const pingSent = clock.now() - 100;
    await clock.advance(800);
    server.release(); // the reply comes 900 ms after its ping
    await settle();
    assert.ok(clock.now() - zk.lastHeardAt < 1, "the bytes were heard just now");
    assert.equal(zk.leaseRemaining(), pingSent + 2000 - clock.now(), "but the lease runs from the ping's send");
    server.holding = false;
    server.refuse = true;
    await zk.close();
  });

  it("replies read after a process pause do not renew a lapsed lease", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    server.holding = true;
    await clock.advance(1100);
    clock.jump(3000); // paused: no timer ran for 3 s; the ping's reply waited in the socket buffer
    server.release();
    await settle();
    assert.equal(zk.heardWithin(zk.readTimeout), false);
    assert.equal(zk.leaseRemaining(), 0);
    assert.equal(zk.heardWithin(zk.negotiatedTimeout), false);
    await clock.advance(250);
    assert.notEqual(zk.state, "connected", "the overdue tick dropped the link (and, 4 s unheard, expired the session)");
    server.refuse = true;
    await zk.close();
  });

  it("reads false once the session has ended", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    const zk = await connectFake(clock, server);
    assert.equal(zk.heardWithin(2000), true);
    server.refuse = true;
    await zk.close();
    assert.equal(zk.state, "closed");
    assert.equal(zk.heardWithin(1e9), false);
    assert.equal(zk.leaseRemaining(), 0);
  });

  it("rejects a transport without connect() and an incomplete clock with BADARGUMENTS", async () => {
    const bad = [{ transport: {} as Transport }, { clock: { now: () => 0 } as never }];
    for (const opts of bad) {
      await assert.rejects(ZooKeeper.connect("fake:2181", opts), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.BADARGUMENTS);
    }
  });
});
