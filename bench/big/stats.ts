// Helpers of bench/big: the 4lw `wchp` reply (path, then one tab-indented session id per watcher) and percentiles.

/** A JSON line from a worker, tagged with the worker's index `w`. */
export type Event = { ev: string; w?: number } & Record<string, unknown>;

/** Sessions watching each path, from a `wchp` reply. */
export function parseWchp(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let current: string | null = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("/")) out.set((current = line.trim()), 0);
    else if (current !== null && line.trim().startsWith("0x")) out.set(current, out.get(current)! + 1);
  }
  return out;
}

/** How many candidate znodes (children of `parent`) have 0, 1, 2, ... watching sessions: {"1": 998, ...}. */
export function countWatchers(wchp: string, parent: string, children: readonly string[]): Record<string, number> {
  const per = parseWchp(wchp);
  const layout: Record<string, number> = {};
  for (const c of children) {
    const k = String(per.get(`${parent}/${c}`) ?? 0);
    layout[k] = (layout[k] ?? 0) + 1;
  }
  return layout;
}

/** The q-th percentile (0..1) of `xs` in ms, rounded to 0.01. */
export function percentile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(s.length * q))] * 100) / 100;
}
