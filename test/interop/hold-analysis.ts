// The verdicts of a lock torture run from its HOLD/FREE history (pure: no processes, no clocks).
// Times are on one hrtime scale (ns); `end` is the last moment the holder knew it held (or its kill).

export interface HeldInterval {
  who: { id: string; clockErrorNs: bigint };
  start: bigint;
  end: bigint | null; // null: never closed (the run ended while held)
  token: bigint;
}

export interface HoldVerdict {
  /** Pairs of holds that intersect by more than the holder's clock-sync error + 1 ms. */
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
  for (let i = 1; i < sorted.length; i++) {
    const n = wakes.filter((w) => w > sorted[i - 1].start && w <= sorted[i].start).length;
    maxWakesPerRelease = Math.max(maxWakesPerRelease, n);
  }
  return { overlaps, maxWakesPerRelease, tokensIncreasing: sorted.every((h, i) => i === 0 || h.token > sorted[i - 1].token) };
}
