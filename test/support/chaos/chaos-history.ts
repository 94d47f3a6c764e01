// Safety analysis of a chaos run: turns each participant's stamped lines (mapped onto the test's
// process.hrtime clock) and the test's own kill/stop/cont marks into leadership intervals, then finds
// overlaps and leader actions (WORK lines) that fall inside another participant's leadership.
//
// What an interval is:
// - it starts at the participant's ELECTED stamp;
// - it ends at its REVOKED (or EXPIRED) stamp, or at the kill -9 the test recorded (a dead process
//   cannot act; the test takes the stamp after kill(2) returned, so no later line can exist);
// - SIGSTOP: a stopped process cannot act either, so when, after SIGCONT, its first line is REVOKED
//   the interval ends at the stop. If instead it did WORK first, it still believed it led after
//   resuming: the interval spans the stop and collides with whoever was elected meanwhile.
// - an interval still open at the end of the run ends at `endNs`.

export type EventKind = "ELECTED" | "REVOKED" | "EXPIRED" | "WORK" | "kill" | "stop" | "cont" | "exit";

export interface TimedEvent {
  kind: EventKind;
  ns: bigint; // test-process hrtime
  detail?: string;
}

export interface Interval {
  id: string;
  start: bigint;
  end: bigint;
  how: string; // what ended it: revoked:<reason> | kill | stop | expired | exit | open
}

export interface Violation {
  what: string;
}

export function intervalsOf(id: string, events: readonly TimedEvent[], endNs: bigint): { intervals: Interval[]; problems: Violation[] } {
  const sorted = [...events].sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
  const intervals: Interval[] = [];
  const problems: Violation[] = [];
  let start: bigint | null = null;
  let stoppedAt: bigint | null = null; // set while leading and stopped (or resumed but not yet acted)
  const close = (end: bigint, how: string): void => {
    if (start === null) return;
    intervals.push({ id, start, end, how });
    start = null;
    stoppedAt = null;
  };
  for (const e of sorted) {
    switch (e.kind) {
      case "ELECTED":
        if (start !== null) problems.push({ what: `${id}: ELECTED again at ${ms(e.ns)} while leading since ${ms(start)}` });
        else start = e.ns;
        break;
      case "REVOKED":
        close(stoppedAt ?? e.ns, stoppedAt !== null ? "stop" : `revoked:${e.detail ?? "?"}`);
        break;
      case "EXPIRED":
        close(stoppedAt ?? e.ns, stoppedAt !== null ? "stop" : "expired");
        break;
      case "WORK":
        if (start === null) problems.push({ what: `${id}: WORK at ${ms(e.ns)} while not leading` });
        stoppedAt = null; // it acted after resuming: the stop did not end its leadership
        break;
      case "stop":
        if (start !== null) stoppedAt = e.ns;
        break;
      case "kill":
      case "exit":
        close(stoppedAt ?? e.ns, stoppedAt !== null ? "stop" : e.kind);
        break;
      case "cont":
        break;
    }
  }
  close(stoppedAt ?? endNs, stoppedAt !== null ? "stop" : "open");
  return { intervals, problems };
}

/** Pairs of intervals of different participants that share any instant. */
export function overlaps(all: readonly Interval[]): Violation[] {
  const sorted = [...all].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: Violation[] = [];
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j].start < sorted[i].end; j++) {
      const a = sorted[i];
      const b = sorted[j];
      if (a.id !== b.id) out.push({ what: `overlap: ${describe(a)} and ${describe(b)} share ${dur(minBig(a.end, b.end) - b.start)}` });
    }
  }
  return out;
}

/** WORK stamps of one participant that fall inside another participant's interval. */
export function foreignWork(work: readonly { id: string; ns: bigint }[], all: readonly Interval[]): Violation[] {
  const out: Violation[] = [];
  for (const w of work) {
    const hit = all.find((i) => i.id !== w.id && i.start < w.ns && w.ns < i.end);
    if (hit) out.push({ what: `${w.id} worked at ${ms(w.ns)} inside ${describe(hit)}` });
  }
  return out;
}

function describe(i: Interval): string {
  return `${i.id} [${ms(i.start)}, ${ms(i.end)}) ended by ${i.how}`;
}

let origin = 0n;
/** Times in messages are printed in ms relative to this (the run's start). */
export function setOrigin(ns: bigint): void {
  origin = ns;
}

/** An instant, as ms since the origin. */
export function ms(ns: bigint): string {
  return `t+${dur(ns - origin)}`;
}

export function dur(ns: bigint): string {
  return `${(Number(ns) / 1e6).toFixed(3)}ms`;
}

const minBig = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/** p50/p99/max of a list (nearest rank), as whole ms. */
export function quantiles(values: readonly number[]): { n: number; p50: number; p99: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number): number => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN);
  return { n: s.length, p50: Math.round(at(0.5)), p99: Math.round(at(0.99)), max: Math.round(s[s.length - 1] ?? NaN) };
}
