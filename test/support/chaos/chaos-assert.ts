// The issue-4 must-shows over a chaos run's findings: safety (no overlap, no foreign work, resumed
// leaders step down first), liveness bounds per action kind, and no herd effect.
import assert from "node:assert/strict";
import type { ChaosFindings } from "./chaos-report.ts";
import type { ChaosRecord } from "./chaos-run.ts";

export function assertChaos(rec: ChaosRecord, f: ChaosFindings, minChanges: number): void {
  assert.deepEqual(f.violations.map((v) => v.what).slice(0, 20), [], "safety violations");
  assert.ok(f.changes >= minChanges, `only ${f.changes} leadership changes`);
  assert.ok(f.workLines > 0, "leaders logged WORK lines");
  assert.deepEqual(f.slow, [], "failovers over their bound (1 s from the old leader's REVOKED to the next ELECTED after resign/close, session timeout + 1 s after a crash, from the quorum's return when the ZK leader was killed)");
  for (const a of rec.actions) assert.ok(f.latencyMs[a.kind]?.length, `${a.kind} measured`);
  assert.ok(f.herdMax <= 1, `a znode's deletion woke ${f.herdMax} participants: ${f.herds.join("; ")}`);
}
