// Leader election under chaos, long version: at least 200 randomized leadership changes among
// participant processes on a 3-server ensemble (tickTime 500, sessions 2000 ms). Each change is a
// resign, a clean close, a kill -9 or SIGSTOP of the leader, or a kill -9 of the server the leader is
// connected to. Checks: no two leadership intervals overlap, no leader action (WORK line) falls in
// another's leadership, a resumed leader steps down before acting, failover within 1 s (resign/close)
// or the session timeout + 1 s (crashes), and each znode deletion wakes at most one participant.
// CHAOS_CHANGES, CHAOS_SEED (replay), CHAOS_RUNTIMES=node,bun,deno override the defaults.
import console from "node:console";
import { describe, it, afterAll } from "../support/bdd.ts";
import { startEnsemble, type ZkEnsemble } from "../support/zk-server.ts";
import { runChaos } from "../support/chaos-run.ts";
import { analyze } from "../support/chaos-report.ts";
import { assertChaos } from "../support/chaos-assert.ts";
import { killAllParticipants, type Runtime } from "../support/participant-process.ts";

const CHANGES = Number(process.env.CHAOS_CHANGES ?? 200);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
const RUNTIMES = (process.env.CHAOS_RUNTIMES ?? "node").split(",") as Runtime[];

describe("leader election chaos (stress)", () => {
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
      path: `/chaos-stress-${process.pid}`,
      changes: CHANGES,
      size: 4,
      sessionTimeoutMs: 2000,
      runtimes: RUNTIMES,
      weights: { resign: 35, close: 20, kill: 17, stop: 12, server: 16 },
      seed: SEED,
      servers: e.servers,
      waitForQuorum: () => e.waitForQuorum(),
      log: (l) => console.log(`[chaos] ${l}`),
    });
    const f = analyze(rec);
    console.log(f.table);
    assertChaos(rec, f, CHANGES);
  }, 900_000);
});
