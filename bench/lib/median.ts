// Median of several runs (or passes) per workload and client: each metric on its own.
import type { RunnerResult } from "./child.ts";
import type { Row } from "./table.ts";

const METRICS = ["opsPerSec", "p50Ms", "p99Ms", "cpuPer10k", "cpuSec", "seconds", "ops"] as const;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Rows in the order of the first run; a cell that failed in every run stays failed. */
export function medianRows(runs: Row[][]): Row[] {
  const out: Row[] = [];
  for (const first of runs[0] ?? []) {
    const same = runs.flatMap((rows) => rows.filter((r) => r.key === first.key && r.client === first.client));
    const ok = same.map((r) => r.result).filter((r): r is RunnerResult => r !== undefined);
    if (ok.length === 0) {
      out.push(first);
      continue;
    }
    const result: RunnerResult = { ...ok[0] };
    for (const m of METRICS) result[m] = median(ok.map((r) => r[m]));
    out.push({ ...first, result, error: undefined });
  }
  return out;
}
