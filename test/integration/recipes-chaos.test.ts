// Leader election under chaos, short version (~20 leadership changes; the 200-change run is
// test/stress/election-chaos.test.ts): participant processes on a 3-server ensemble are resigned,
// closed, killed -9, SIGSTOPped, or lose their server to kill -9, and no two leaderships overlap.
import console from "node:console";
import { describe, it, afterAll } from "../support/bdd.ts";
import { startEnsemble, type ZkEnsemble } from "../support/zk-server.ts";
import { runChaos } from "../support/chaos-run.ts";
import { analyze } from "../support/chaos-report.ts";
import { assertChaos } from "../support/chaos-assert.ts";
import { killAllParticipants, type Runtime } from "../support/participant-process.ts";

const CHANGES = Number(process.env.CHAOS_CHANGES ?? 20);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
// Participants rotate through the three runtimes (stamps are mapped onto one clock by syncClock).
const RUNTIMES = (process.env.CHAOS_RUNTIMES ?? "node,bun,deno").split(",") as Runtime[];

describe("leader election chaos (short)", () => {
  let ensemble: ZkEnsemble | undefined;

  afterAll(async () => {
    await killAllParticipants();
    await ensemble?.close();
  }, 60_000);

  it(`${CHANGES} randomized leadership changes: no overlap, bounded failover, no herd`, async () => {
    ensemble = await startEnsemble({ size: 3, tickTime: 500 });
    const e = ensemble;
    const rec = await runChaos({
      connectString: e.connectString,
      path: `/chaos-${process.pid}`,
      changes: CHANGES,
      size: 3,
      sessionTimeoutMs: 2000,
      runtimes: RUNTIMES,
      weights: { resign: 30, close: 20, kill: 20, stop: 15, server: 15 },
      seed: SEED,
      servers: e.servers,
      waitForQuorum: () => e.waitForQuorum(),
      log: (l) => console.log(`[chaos] ${l}`),
    });
    const f = analyze(rec);
    console.log(f.table);
    assertChaos(rec, f, CHANGES);
  }, 300_000);
});
