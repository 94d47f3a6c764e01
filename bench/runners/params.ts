// The `key=value` parameters every runner accepts after `<connectString> <workload>`.
export interface Params {
  outstanding?: number; // operations kept in flight
  ms?: number; // measured window
  warmupMs?: number; // unmeasured run before the window
  size?: number; // payload bytes
  count?: number; // watch storm: number of watches
  participants?: number; // election: number of participants
  rounds?: number; // election: failovers measured
  permits?: number; // semaphore: leases at once
  root?: string; // znode under which the runner works
}

const NUMERIC = new Set(["outstanding", "ms", "warmupMs", "size", "count", "participants", "rounds", "permits"]);

export function parseParams(args: readonly string[]): Params {
  const p: Record<string, number | string> = {};
  for (const a of args) {
    const i = a.indexOf("=");
    if (i <= 0) throw new Error(`parameter ${a} is not key=value`);
    const k = a.slice(0, i);
    const v = a.slice(i + 1);
    if (NUMERIC.has(k)) {
      const n = Number(v);
      if (!Number.isFinite(n)) throw new Error(`parameter ${k} needs a number, got ${v}`);
      p[k] = n;
    } else if (k === "root") p[k] = v;
    else throw new Error(`unknown parameter ${k}`);
  }
  return p as Params;
}

export function formatParams(p: Params): string[] {
  return Object.entries(p).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`);
}
