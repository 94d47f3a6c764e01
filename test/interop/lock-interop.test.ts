// zookeeper-ts Lock and LeaderElection sharing paths with Curator (InterProcessMutex, LeaderSelector;
// Debian's libcurator-recipes-java) and kazoo (Lock, Election; Debian's python3-kazoo) processes on a
// standalone server: mutual exclusion through kill -9 and SIGSTOP of holders, and one agreed leader
// through crashes. The long version on a 3-server ensemble is test/stress/recipes-torture.test.ts.
import assert from "node:assert/strict";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { killAllContenders } from "./contenders.ts";
import { runTorture } from "./lock-torture.ts";
import { runElection } from "./election-stability.ts";
import { onSession, removeRoot, uniqueRoot } from "../support/sessions.ts";

const SESSION_MS = 4000; // the shared server's minimum (tickTime 2000)
// The server expires sessions in tickTime buckets: up to one tick past the timeout on the shared
// server (tickTime 2000). The stress run's ensemble (tickTime 500) checks session timeout + 1 s.
const FAILOVER_MS = SESSION_MS + 2000 + 1000;
const root = uniqueRoot("interop-lock"); // every path of the run is below it
const log = (l: string): void => void (process.env.RECIPES_LOG && console.log(l));

describe("Lock and election interop with Curator and kazoo", () => {
  let connectString = "";
  beforeAll(async () => {
    connectString = (await sharedServer()).connectString;
    await onSession(connectString, (zk) => zk.create(root));
  }, 60_000);
  afterAll(async () => {
    await killAllContenders();
    if (connectString) await onSession(connectString, (zk) => removeRoot(zk, root));
  }, 30_000);

  for (const [naming, foreign] of [["curator", "java"], ["kazoo", "python"]] as const) {
    it(`${naming}: zookeeper-ts and ${foreign} holders exclude each other through kill -9 and SIGSTOP`, async () => {
      const r = await runTorture({
        connectString, path: `${root}/lock-${naming}`, kinds: ["ts", foreign, "ts", foreign], naming,
        sessionMs: SESSION_MS, acquisitions: 40, faults: ["kill", "stop"], faultEvery: 12, log,
      });
      console.log(`[lock interop ${naming}] ${JSON.stringify(r)}`);
      assert.deepEqual(r.overlaps, []);
      assert.ok(r.holds >= 40 && (r.byKind.ts ?? 0) > 0 && (r.byKind[foreign] ?? 0) > 0, JSON.stringify(r.byKind));
      assert.ok(r.tokensIncreasing, "tokens grow from holder to holder");
      assert.ok(r.maxWakesPerRelease <= 1, `${r.maxWakesPerRelease} wakes in one release`);
      assert.equal(r.failovers.length, 2);
      for (const f of r.failovers) assert.ok(f.ms <= FAILOVER_MS, `${f.fault} of ${f.victim}: ${f.ms} ms`);
    }, 120_000);
  }

  for (const [protocol, foreign] of [["curator-selector", "java"], ["kazoo", "python"]] as const) {
    it(`${protocol}: one leader that every process agrees on, through crashes of either kind`, async () => {
      const r = await runElection({ connectString, path: `${root}/election-${protocol}`, kinds: ["ts", foreign, "ts", foreign], protocol, sessionMs: SESSION_MS, crashes: 2, log });
      console.log(`[election interop ${protocol}] ${JSON.stringify(r)}`);
      assert.equal(r.stablePoints.length, 3);
      assert.ok(r.stablePoints.every((p) => p.agreed === 4));
      assert.ok(new Set(r.stablePoints.map((p) => p.kind)).size === 2, "both kinds led at some point");
    }, 120_000);
  }
});
