// The verdicts of a lock torture run from its HOLD/FREE history (pure: no processes, no clocks).
// Times are on one hrtime scale (ns); `end` is the last moment the holder knew it held (or its kill).

export interface HeldInterval {
  who: { id: string; clockErrorNs: bigint };
  start: bigint;
  end: bigint | null; // null: never closed (the run ended while held)
  token: bigint;
}

export interface HoldVerdict {
  /** Pairs of holds that intersect by more than the two holders' clock-sync errors + 1 ms. */
  overlaps: string[];
  /**
   * The most waiter wake-ups between two consecutive hold starts, all on the one clock (each wake as
   * the waiter stamped it). Not by arrival at the test process: lines from different processes cross
   * different pipes, and on a busy machine a holder's HOLD can arrive after its successor's wake-up.
   */
  maxWakesPerRelease: number;
  /** Tokens strictly increasing in hold order. */
  tokensIncreasing: boolean;
}

/** `wakes`: when each waiter's predecessor watch fired, on the holds' clock. */
export function analyseHolds(holds: readonly HeldInterval[], wakes: readonly bigint[]): HoldVerdict {
  const sorted = byStart(holds);
  const overlaps = overlapping(sorted);
  let maxWakesPerRelease = 0;
  for (let i = 1; i < sorted.length; i++) {
    const n = wakes.filter((w) => w > sorted[i - 1].start && w <= sorted[i].start).length;
    maxWakesPerRelease = Math.max(maxWakesPerRelease, n);
  }
  return { overlaps, maxWakesPerRelease, tokensIncreasing: sorted.every((h, i) => i === 0 || h.token > sorted[i - 1].token) };
}

function byStart<H extends HeldInterval>(holds: readonly H[]): H[] {
  return [...holds].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

/**
 * Pairs of holds that intersect by more than the two holders' clock-sync errors + 1 ms and `conflict` (default: any
 * two; a read-write lock: any pair with a writer in it). Each holder's stamps are mapped onto the one clock with
 * an error of their own (LineProcess.syncClock), so a handover can read as an overlap of up to both errors together.
 */
export function overlapping<H extends HeldInterval>(holds: readonly H[], conflict: (a: H, b: H) => boolean = () => true): string[] {
  const sorted = byStart(holds);
  const out: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i];
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j];
      const margin = a.who.clockErrorNs + b.who.clockErrorNs + 1_000_000n;
      const end = a.end ?? b.start + margin + 1n; // never closed: anyone after it overlaps
      if (b.start + margin < end) {
        if (conflict(a, b)) out.push(`${a.who.id} [${a.start}, ${a.end}] ±${a.who.clockErrorNs} ns vs ${b.who.id} from ${b.start} ±${b.who.clockErrorNs} ns`);
      } else if (a.end !== null && b.start + a.who.clockErrorNs + 1_000_000n >= a.end) break; // nor can any later start
    }
  }
  return out;
}

/**
 * The most holds at one moment (a semaphore's leases), each hold counted from its start + its holder's clock-sync
 * error + 1 ms (the same tolerance as `overlapping`) to its end; a hold never closed counts to the end.
 */
export function maxConcurrent(holds: readonly HeldInterval[]): number {
  const edges: Array<[bigint, number]> = [];
  for (const h of holds) {
    // Each side shortened by its own clock-sync error (and 1 ms): two holds count as concurrent when they would
    // overlap by more than both errors and 1 ms, as in overlapping().
    const from = h.start + h.who.clockErrorNs + 1_000_000n;
    const to = h.end === null ? null : h.end - h.who.clockErrorNs;
    if (to !== null && to <= from) continue;
    edges.push([from, 1]);
    if (to !== null) edges.push([to, -1]);
  }
  edges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])); // an end before a start at the same moment
  let now = 0;
  let max = 0;
  for (const [, d] of edges) max = Math.max(max, (now += d));
  return max;
}
