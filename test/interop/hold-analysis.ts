// The verdicts of a lock torture run from its HOLD/FREE history (pure: no processes, no clocks).
// Times are on one hrtime scale (ns); `end` is the last moment the holder knew it held (or its kill).

export interface HeldInterval {
  who: { id: string; clockErrorNs: bigint };
  start: bigint;
  end: bigint | null; // null: never closed (the run ended while held)
  token: bigint;
  receivedNs: bigint; // when its HOLD line reached the test process
}

export interface HoldVerdict {
  /** Pairs of holds that intersect by more than the holder's clock-sync error + 1 ms. */
  overlaps: string[];
  /** The most waiter wake-ups (WATCH lines, by arrival) between two consecutive HOLD arrivals. */
  maxWakesPerRelease: number;
  /** Tokens strictly increasing in hold order. */
  tokensIncreasing: boolean;
}

export function analyseHolds(holds: readonly HeldInterval[], wakes: readonly bigint[]): HoldVerdict {
  const sorted = [...holds].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const overlaps: string[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i];
    const margin = a.who.clockErrorNs + 1_000_000n;
    for (let j = i + 1; j < sorted.length; j++) {
      const b = sorted[j];
      const end = a.end ?? b.start + margin + 1n; // never closed: anyone after it overlaps
      if (b.start + margin < end) overlaps.push(`${a.who.id} [${a.start}, ${a.end}] vs ${b.who.id} from ${b.start}`);
      else if (a.end !== null) break;
    }
  }
  let maxWakesPerRelease = 0;
  const byArrival = [...holds].sort((a, b) => (a.receivedNs < b.receivedNs ? -1 : 1));
  for (let i = 1; i < byArrival.length; i++) {
    const n = wakes.filter((w) => w > byArrival[i - 1].receivedNs && w <= byArrival[i].receivedNs).length;
    maxWakesPerRelease = Math.max(maxWakesPerRelease, n);
  }
  return { overlaps, maxWakesPerRelease, tokensIncreasing: sorted.every((h, i) => i === 0 || h.token > sorted[i - 1].token) };
}
