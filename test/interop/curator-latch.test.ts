// The Curator LeaderLatch participant (5.4.0, or 5.7.1 with ZK_CURATOR=5.7.1) against a real server: it elects exactly
// one, fails over after kill -9, and its stamps line up with this process's clock.
import assert from "node:assert/strict";
import console from "node:console";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { sharedServer } from "../support/zk-server.ts";
import { compileParticipant, curatorLine, killAllParticipants, startParticipant, type JavaParticipant } from "./java-participant.ts";

const SESSION_MS = 6000;

describe("Curator LeaderLatch participant", () => {
  let server: { connectString: string };
  beforeAll(async () => {
    [server] = await Promise.all([sharedServer(), compileParticipant()]);
  });
  afterAll(() => killAllParticipants());

  const start = (path: string, id: string): Promise<JavaParticipant> =>
    startParticipant({ connectString: server.connectString, electionPath: path, id, sessionTimeoutMs: SESSION_MS });

  it(`loads the Curator that ZK_CURATOR names (${curatorLine()}), and nothing of the other`, async () => {
    const p = await start(`/interop-versions-${process.pid}`, "versions");
    await p.waitFor("READY", 30_000);
    const v = await p.versions();
    console.log(`[curator-latch] Curator from ${v.curatorJar}, ZooKeeper client ${v.zookeeperClient}`);
    if (curatorLine() === "5.7.1") {
      assert.match(v.curatorJar, /\/lines\/curator-5\.7\.1\/jars\/curator-recipes-5\.7\.1\.jar$/);
      assert.equal(v.zookeeperClient, "3.9.3");
    } else {
      assert.match(v.curatorJar, /^\/usr\/share\/java\/curator-recipes(-5\.4\.0)?\.jar$/);
      assert.equal(v.zookeeperClient, "3.8.0");
    }
    await p.close();
  }, 60_000);

  it("stamps events on a clock that maps onto process.hrtime", async () => {
    const p = await start(`/interop-clock-${process.pid}`, "clock");
    await p.waitFor("READY", 30_000);
    const isNode = !("Bun" in globalThis) && !("Deno" in globalThis);
    // Node's hrtime and Java's nanoTime both read CLOCK_MONOTONIC: no offset beyond the round trip.
    if (isNode) assert.ok(p.clockOffsetNs >= -p.clockErrorNs && p.clockOffsetNs <= p.clockErrorNs, `offset ${p.clockOffsetNs} ns`);
    for (let i = 0; i < 5; i++) {
      const before = process.hrtime.bigint();
      const [javaNs] = await p.ask("clock?", "CLOCK");
      const after = process.hrtime.bigint();
      const t = BigInt(javaNs) - p.clockOffsetNs;
      assert.ok(before - p.clockErrorNs <= t && t <= after + p.clockErrorNs, `java ${t} outside [${before}, ${after}] ± ${p.clockErrorNs}`);
    }
    await p.close();
    assert.equal(await p.exited, 0);
  }, 60_000);

  it("elects exactly one of two, and the other after kill -9 of the leader", async () => {
    const path = `/interop-latch-${process.pid}-${Date.now()}`;
    const a = await start(path, "java-a");
    await a.waitFor("READY", 30_000);
    const b = await start(path, "java-b");
    await b.waitFor("READY", 30_000);
    await a.waitFor("ELECTED", 10_000); // first in line
    assert.equal(await b.leader(), "java-a");
    assert.equal(await a.leader(), "java-a");
    assert.deepEqual(await b.participants(), ["java-a", "java-b"]);
    assert.match(await b.ourPath(), new RegExp(`^${path}/_c_[0-9a-f-]{36}-latch-\\d{10}$`));
    assert.equal(b.events.filter((e) => e.kind === "ELECTED").length, 0);

    const killedAt = process.hrtime.bigint();
    await a.kill("SIGKILL");
    const elected = await b.waitFor("ELECTED", SESSION_MS + 10_000);
    // kill -9 leaves the session open: the takeover waits for the server to expire it.
    const ms = Number((b.localNs(elected) ?? 0n) - killedAt) / 1e6;
    assert.ok(ms >= SESSION_MS - 2000 && ms <= SESSION_MS + 6000, `takeover after ${ms} ms`);
    assert.equal(await b.leader(), "java-b");
    assert.deepEqual(await b.participants(), ["java-b"]);
    await b.close();
    assert.equal(await b.exited, 0);
  }, 90_000);
});
