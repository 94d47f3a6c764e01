// Locks, elections and the tree cache on a 3-server ensemble (tickTime 500), long version:
// - per naming (Curator, kazoo): zookeeper-ts and foreign holders on one path, >= 200 acquisitions
//   through kill -9 and SIGSTOP of holders and kill -9 of the server a holder is connected to:
//   0 overlapping holds, <= 1 waiter woken per release, new holder within session + 1 s, tokens grow;
// - election interop (LeaderSelector, kazoo Election) through 6 leader crashes: one agreed leader;
// - TreeCache: 10,000 random changes with link cuts and a server kill: cache = fresh read at every
//   quiet point, and the event stream replayed onto the snapshot gives the same tree.
// RECIPES_ACQUISITIONS and RECIPES_CHANGES override the sizes.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { ZooKeeper } from "../../src/index.ts";
import { TreeCache } from "../../src/recipes/index.ts";
import { startEnsemble, type ZkEnsemble } from "../support/servers/zk-server.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { diff, dump, freshRead, randomWorkload, replayer } from "../support/tree-workload.ts";
import { untilState } from "../support/wait.ts";
import { killAllContenders } from "../interop/contenders.ts";
import { runTorture, type Fault } from "../interop/lock-torture.ts";
import { runElection } from "../interop/election-stability.ts";

// The lock runs' bound, session + 1 s, covers a server kill as well, whose failover does not shrink with the
// session (the holder reconnects and its session lives on), while the Java and kazoo clients give each server's
// handshake the session divided by the server count: with a shorter session a loaded machine's slow handshake
// turns into retries and backoff on top. So they keep 3000 ms.
const SESSION_MS = 3000;
// The election runs kill only participants (no server: nobody reconnects) and bound no latency; each crash
// costs one expiry of the dead leader's session. 2000 ms is the election chaos run's session on this tickTime.
const ELECTION_SESSION_MS = 2000;
const ACQUISITIONS = Number(process.env.RECIPES_ACQUISITIONS ?? 220);
const CHANGES = Number(process.env.RECIPES_CHANGES ?? 10_000);
const tag = randomUUID().slice(0, 8);
const log = (l: string): void => console.log(l);

describe("recipes torture on a 3-server ensemble", () => {
  let ensemble: ZkEnsemble;
  beforeAll(async () => {
    ensemble = await startEnsemble({ size: 3 });
  }, 120_000);
  afterAll(async () => {
    await killAllContenders();
    await ensemble?.close();
  }, 60_000);

  for (const [naming, foreign] of [["curator", "java"], ["kazoo", "python"]] as const) {
    it(`${naming} lock: zookeeper-ts and ${foreign} holders through holder and server crashes`, async () => {
      const faults: Fault[] = [];
      for (let i = 0; i < 4; i++) faults.push("kill", "stop", "server");
      const r = await runTorture({
        connectString: ensemble.connectString, ensemble, path: `/torture-${naming}-${tag}`, kinds: ["ts", foreign, "ts", foreign],
        naming, sessionMs: SESSION_MS, acquisitions: ACQUISITIONS, faults, faultEvery: Math.max(5, Math.floor(ACQUISITIONS / 16)), log,
      });
      const per = (f: Fault) => r.failovers.filter((x) => x.fault === f).map((x) => Math.round(x.ms));
      console.log(`[torture ${naming}] holds ${r.holds} ${JSON.stringify(r.byKind)}, overlaps ${r.overlaps.length}, wakes ${r.wakes} (max ${r.maxWakesPerRelease} per release), tokens increasing ${r.tokensIncreasing}, failover ms kill ${per("kill")} stop ${per("stop")} server ${per("server")}, ${r.seconds.toFixed(0)} s`);
      assert.deepEqual(r.overlaps, []);
      assert.ok(r.holds >= 200, `${r.holds} holds`);
      assert.ok(r.tokensIncreasing, "tokens grow from holder to holder");
      assert.ok(r.maxWakesPerRelease <= 1, `${r.maxWakesPerRelease} wakes in one release`);
      assert.equal(r.failovers.length, faults.length);
      for (const f of r.failovers) assert.ok(f.ms <= SESSION_MS + 1000, `${f.fault} of ${f.victim}: ${f.ms} ms`);
    }, 900_000);
  }

  for (const [protocol, foreign] of [["curator-selector", "java"], ["kazoo", "python"]] as const) {
    it(`${protocol} election: one agreed leader through 6 crashes`, async () => {
      const r = await runElection({ connectString: ensemble.connectString, path: `/torture-election-${protocol}-${tag}`, kinds: ["ts", foreign, "ts", foreign], protocol, sessionMs: ELECTION_SESSION_MS, crashes: 6, log });
      console.log(`[election ${protocol}] ${r.stablePoints.map((p) => `${p.leader} after ${Math.round(p.ms)} ms`).join(", ")}`);
      assert.equal(r.stablePoints.length, 7);
      assert.ok(r.stablePoints.every((p) => p.agreed === 4));
    }, 600_000);
  }

  it(`TreeCache: ${CHANGES} random changes with link cuts and a server kill`, async () => {
    const proxies: FaultProxy[] = await Promise.all(ensemble.servers.map((s) => startFaultProxy(s.host, s.clientPort)));
    const writer = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout: 10_000 });
    const t0 = performance.now();
    writer.on("state", (s) => console.log(`[tree cache] writer ${s} at ${Math.round(performance.now() - t0)} ms (${writer.remoteAddress ?? "-"})`));
    const zk = await ZooKeeper.connect(proxies.map((p) => p.connectString).join(","), { sessionTimeout: 10_000 });
    try {
      const base = `/torture-cache-${tag}`;
      await writer.create(base, "root");
      await randomWorkload(writer, base, 500, 7);
      const cache = new TreeCache(zk, base);
      await cache.start();
      const replay = replayer(cache, dump(cache));
      let drops = 0;
      zk.on("state", (s) => void (s === "disconnected" && drops++));
      const rounds = 10;
      let applied = 0;
      for (let round = 0; round < rounds; round++) {
        const work = randomWorkload(writer, base, CHANGES / rounds, 1000 + round);
        if (round % 3 === 1) setTimeout(() => proxies.forEach((p) => p.cut()), 50);
        if (round === 5) {
          // kill -9 the server the cache's session is on (reached through its proxy)
          const port = Number(zk.remoteAddress?.split(":").pop());
          const i = proxies.findIndex((p) => p.port === port);
          assert.ok(i >= 0, `the cache's link ${zk.remoteAddress} is one of the proxies`);
          setTimeout(() => {
            console.log(`[tree cache] kill -9 server ${ensemble.servers[i].id} (the cache's) during round ${round}`);
            void ensemble.servers[i].kill("SIGKILL");
          }, 50);
        }
        applied += await work;
        if (round === 6) {
          for (const s of ensemble.servers) if (!s.running) await s.start();
          await ensemble.waitForQuorum();
        }
        await untilState(zk, "connected", 60_000);
        await zk.sync(base);
        await cache.settled();
        const fresh = await freshRead(writer, base);
        assert.deepEqual(diff(dump(cache), fresh), [], `round ${round}: cache vs fresh`);
        assert.deepEqual(diff(replay.tree, fresh), [], `round ${round}: replay vs fresh`);
        console.log(`[tree cache] quiet point ${round}: ${fresh.size} nodes equal (cache, replay), ${replay.events} events, ${drops} drops`);
      }
      assert.ok(applied >= CHANGES);
      assert.ok(drops >= 3, `${drops} drops`);
      await cache.close();
    } finally {
      await zk.close();
      await writer.close();
      await Promise.all(proxies.map((p) => p.close()));
    }
  }, 900_000);
});
