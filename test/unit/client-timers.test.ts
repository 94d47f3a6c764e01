// The client's own timers on an injected clock with a fake transport (no sockets, no sleeps): the
// ping interval, the read timeout, client-side expiry and stall detection, in virtual milliseconds.
// Negotiated timeout 3000 ms: read timeout 2000 ms, ping interval 1000 ms, tick 250 ms, expiry 4000 ms.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ZooKeeper } from "../../src/index.ts";
import { ManualClock, settle } from "../support/fakes/fake-clock.ts";
import { FakeZk, connectFake } from "../support/fakes/fake-zk.ts";

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

describe("connect()'s deadline on an injected clock", () => {
  /** A ManualClock that counts the timers set on it. */
  class CountingClock extends ManualClock {
    set = 0;
    durations: number[] = [];
    override setTimeout(fn: () => void, ms: number): ReturnType<ManualClock["setTimeout"]> {
      this.set++;
      this.durations.push(ms);
      return super.setTimeout(fn, ms);
    }
  }

  it("the attempt's timer steps by the connection's tick (one duration: the runtime keeps one timer list for both), and still ends a stuck dial at its deadline", async () => {
    const clock = new CountingClock();
    const server = new FakeZk(); // negotiates 3000 ms: tick 250 ms
    const zk = await connectFake(clock, server);
    await zk.close();
    assert.deepEqual(clock.durations, [250, 250]);
    // A dial that never completes: the attempt's deadline (3000 ms: the session timeout over one host) still ends it, in 250 ms steps.
    const stuck = new CountingClock();
    const dials: number[] = [];
    const outcome = ZooKeeper.connect("slow:2181", {
      transport: { connect: () => (dials.push(stuck.now()), new Promise(() => {})) },
      clock: stuck,
      sessionTimeout: 3000,
      connectTimeout: 15_000,
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    await stuck.advance(1000);
    assert.equal(dials.length, 1);
    assert.ok(stuck.durations.every((ms) => ms <= 250), `durations ${stuck.durations.join(", ")}`);
    await stuck.advance(15_000);
    const e = await outcome;
    assert.ok(e instanceof Error);
    assert.match(e.message, /^CONNECTIONLOSS: no session established within 15000 ms/);
    assert.ok(dials.length >= 2 && dials[1]! - dials[0]! >= 1000, `second dial at ${dials[1]} after the first at ${dials[0]} (the first's deadline)`);
  });

  it("a session that connects at its first try and closes sets two timers: the attempt's (which watches connect()'s deadline too) and the connection's tick (which watches closeSession's answer too)", async () => {
    const clock = new CountingClock();
    const zk = await connectFake(clock, new FakeZk());
    assert.equal(zk.state, "connected");
    await zk.close();
    assert.equal(clock.set, 2);
  });

  it("close() on a link that stays up but never answers closeSession ends it within the wait (5 s at most) and one tick", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    server.timeOut = 9000; // read timeout 6000 ms, ping interval 3000 ms, tick 750 ms: the 5000 ms wait ends it first
    const pending = ZooKeeper.connect("fake:2181", { transport: server, clock, sessionTimeout: 9000 });
    await settle();
    const zk = await pending;
    server.holding = true; // closeSession's answer is held back; the link stays up
    const start = clock.now();
    let closedAt = 0;
    const closing = zk.close().then(() => (closedAt = clock.now()));
    await clock.advance(4999);
    assert.equal(closedAt, 0, "still waiting for the answer");
    await clock.advance(751);
    await closing;
    assert.ok(closedAt - start >= 5000 && closedAt - start <= 5750, `closed after ${closedAt - start} ms`);
    assert.equal(server.pings, 0, "no ping after closeSession");
    assert.equal(zk.state, "closed");
  });

  it("stalled in priming after a prompt handshake: connect() rejects at its deadline, watched by the attempt's timer", async () => {
    const clock = new ManualClock();
    const server = new FakeZk();
    server.answering = false; // the ConnectResponse comes, the feature probes are never answered
    const start = clock.now();
    const outcome = ZooKeeper.connect("fake:2181", { transport: server, clock, sessionTimeout: 3000, connectTimeout: 1500 }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    await clock.advance(1499);
    assert.equal(server.connects, 1);
    assert.equal(await Promise.race([outcome, settle().then(() => "pending")]), "pending");
    await clock.advance(1);
    const e = await outcome;
    assert.ok(e instanceof Error);
    assert.equal(e.message, "CONNECTIONLOSS: no session established within 1500 ms");
    assert.equal(clock.now() - start, 1500);
  });

  it("a connect timeout shorter than the first dial's deadline (500 ms at the least) still rejects on time", async () => {
    const clock = new ManualClock();
    const outcome = ZooKeeper.connect("slow:2181", { transport: { connect: () => new Promise(() => {}) }, clock, connectTimeout: 300 }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    await clock.advance(299);
    assert.equal(await Promise.race([outcome, settle().then(() => "pending")]), "pending");
    await clock.advance(1);
    const e = await outcome;
    assert.ok(e instanceof Error);
    assert.match(e.message, /^CONNECTIONLOSS: no session established within 300 ms/);
  });
});
