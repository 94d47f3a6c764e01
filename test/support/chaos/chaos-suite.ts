// The election chaos test body shared by the short (test/integration/recipes-chaos.test.ts) and the
// long (test/stress/election-chaos.test.ts) runs: a 3-server ensemble (tickTime 500, sessions 2000 ms),
// runChaos, the report, the checks. CHAOS_CHANGES, CHAOS_SEED, CHAOS_RUNTIMES override the defaults.
import console from "node:console";
import { describe, it, afterAll } from "../bdd.ts";
import { startEnsemble, type ZkEnsemble } from "../servers/zk-server.ts";
import { runChaos, type ActionKind } from "./chaos-run.ts";
import { analyze } from "./chaos-report.ts";
import { assertChaos } from "./chaos-assert.ts";
import { serverLogBetween } from "../servers/server-log.ts";
import { killAllParticipants, type Runtime } from "../processes/participant-process.ts";

export interface ChaosSuite {
  title: string;
  /** Election path is `${pathPrefix}-${pid}`. */
  pathPrefix: string;
  changes: number;
  runtimes: string; // comma-separated
  size: number;
  weights: Partial<Record<ActionKind, number>>;
  timeoutMs: number;
}

export function chaosSuite(s: ChaosSuite): void {
  const changes = Number(process.env.CHAOS_CHANGES ?? s.changes);
  const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 100_000);
  const runtimes = (process.env.CHAOS_RUNTIMES ?? s.runtimes).split(",") as Runtime[];

  describe(s.title, () => {
    let ensemble: ZkEnsemble | undefined;

    afterAll(async () => {
      await killAllParticipants();
      await ensemble?.close();
    }, 60_000);

    it(`${changes} randomized leadership changes: no overlap, bounded failover, no herd`, async () => {
      // GC lines in server.log: a slow failover's report shows whether a server paused meanwhile.
      ensemble = await startEnsemble({ size: 3, tickTime: 500, jvmArgs: ["-Xlog:gc:stdout:utctime"] });
      const e = ensemble;
      const rec = await runChaos({
        connectString: e.connectString,
        path: `${s.pathPrefix}-${process.pid}`,
        changes,
        size: s.size,
        sessionTimeoutMs: 2000,
        runtimes,
        weights: s.weights,
        seed,
        servers: e.servers,
        waitForQuorum: () => e.waitForQuorum(),
        log: (l) => console.log(`[chaos] ${l}`),
      });
      const f = analyze(rec);
      console.log(f.table);
      // What each server logged during a failover over its bound (its own time, not the participants').
      for (const w of f.slowWindows) {
        const at = (ns: bigint): number => rec.startEpochMs + Number(ns - rec.startNs) / 1e6;
        for (const srv of e.servers) {
          const lines = serverLogBetween(srv.dir, at(w.from) - 200, at(w.to) + 200);
          console.log(`server ${srv.id} from ${new Date(at(w.from) - 200).toISOString()} to ${new Date(at(w.to) + 200).toISOString()}:\n${lines.map((l) => `  ${l}`).join("\n") || "  (nothing)"}`);
        }
      }
      assertChaos(rec, f, changes);
    }, s.timeoutMs);
  });
}
