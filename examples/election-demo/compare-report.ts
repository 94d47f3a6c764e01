// The numbers of `npm run demo -- --compare`: split brain from the machines' stamped lines (on the
// launcher's one monotonic clock), the comparison table, and one verdict per design derived from it.
import { intervalsOf, type Interval, type TimedEvent } from "../../test/support/chaos/chaos-history.ts";

export interface DesignResult {
  design: string;
  machines: number;
  sessionMs: number; // negotiated
  /** Total time with two or more machines acting as master. */
  splitBrainMs: number;
  /** True when a split brain was still going when the run ended it (kill -9 of the stale master). */
  splitBrainUnended: boolean;
  /** Watch notifications delivered per change of the master (mean over the crash and the blackhole). */
  wakeupsPerChange: number;
  wakeups: { crash: number; blackhole: number };
  /** Candidate znodes under the election path that no running machine believes it owns, after the lost reply. */
  orphans: number;
  /** From the fault to the first act of a new master; null: none within the bound. */
  failoverMs: { crash: number | null; blackhole: number | null; lostReply: number | null };
  /** How long we waited for a master after the lost create reply before unblocking it with kill -9. */
  lostReplyBoundMs: number;
  /** Acts of the blackholed master after its link came back (it learned its session had expired). */
  staleActsAfterHeal: number;
  errors: string[];
}

export interface CompareResult {
  sessionMs: number;
  seconds: number;
  designs: DesignResult[];
  /** Every process the run started (machines, and the throwaway server); all gone when it returns. */
  pids: number[];
}

/** Time covered by two or more intervals of different machines. */
export function splitBrainNs(intervals: readonly Interval[]): bigint {
  const edges = intervals.flatMap((i) => [{ ns: i.start, d: 1 }, { ns: i.end, d: -1 }]);
  edges.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : a.d - b.d)); // ends before starts at one instant
  let depth = 0;
  let total = 0n;
  let since = 0n;
  for (const e of edges) {
    if (depth >= 2 && e.d < 0 && depth + e.d < 2) total += e.ns - since;
    depth += e.d;
    if (depth >= 2 && e.d > 0 && depth - e.d < 2) since = e.ns;
  }
  return total;
}

/** Every machine incarnation's master intervals (ELECTED to REVOKED, or to our kill -9, or to endNs). */
export function masterIntervals(machines: readonly { key: string; events: TimedEvent[] }[], endNs: bigint): Interval[] {
  return machines.flatMap((m) => intervalsOf(m.key, m.events, endNs).intervals);
}

const cellMs = (v: number | null, bound?: number): string => (v === null ? `none in ${((bound ?? 0) / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);

/** The comparison table, one row per design. */
export function table(r: CompareResult): string {
  const head = ["design", "split brain", "wake-ups/change", "orphans", "failover kill -9", "failover blackhole", "master after lost reply"];
  const rows = r.designs.map((d) => [
    d.design,
    d.splitBrainMs === 0 ? "0 ms" : `${d.splitBrainUnended ? "≥ " : ""}${Math.round(d.splitBrainMs)} ms`,
    `${Number(d.wakeupsPerChange.toFixed(1))} (${d.wakeups.crash}+${d.wakeups.blackhole})`,
    String(d.orphans),
    cellMs(d.failoverMs.crash),
    cellMs(d.failoverMs.blackhole),
    cellMs(d.failoverMs.lostReply, d.lostReplyBoundMs),
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i])).join(" | ")} |`;
  return [line(head), `|${width.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** One sentence per design, from its numbers only. */
export function verdict(d: DesignResult): string {
  const faults: string[] = [];
  if (d.splitBrainMs > 0) {
    faults.push(`two masters for ${d.splitBrainUnended ? "at least " : ""}${Math.round(d.splitBrainMs)} ms after its link was cut${d.splitBrainUnended ? " (the stale master never stopped by itself)" : ""}`);
  }
  if (d.wakeupsPerChange > 1) faults.push(`wakes ${Number(d.wakeupsPerChange.toFixed(1))} machines per change (herd)`);
  if (d.orphans > 0) faults.push(`a lost create reply left ${d.orphans} orphan znode${d.orphans > 1 ? "s" : ""}`);
  if (d.failoverMs.lostReply === null) faults.push(`no master at all for ${(d.lostReplyBoundMs / 1000).toFixed(1)} s after it`);
  if (d.failoverMs.crash === null || d.failoverMs.blackhole === null) faults.push("no new master after a fault");
  if (faults.length === 0) return `${d.design}: survived every fault in this run: 0 ms split brain, ${d.wakeupsPerChange} wake-up per change, 0 orphans.`;
  return `${d.design}: ${faults.join("; ")}.`;
}
