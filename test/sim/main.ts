// npm run sim: SIM_SEEDS=<n> seeds (default 10,000) from SIM_START (default 1) on a pool of worker
// processes (SIM_WORKERS, default one per core), or SIM_SEED=<s> for one seed in this process with
// its trace hash (SIM_TRACE=1 prints the trace). A planted bug: SIM_MUTATE=<name> or
// `npm run sim -- --mutation <name>` (see mutations.ts; `--mutation all` runs each in turn and prints
// the seed count that caught it). Exits 1 on a failing seed and prints the command that replays it.
import { runSeed } from "./driver.ts";
import { MUTATIONS } from "./mutations.ts";
import { runPool } from "./pool.ts";

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const one = process.env.SIM_SEED;
const start = Number(flag("start") ?? process.env.SIM_START ?? 1);
const count = Number(flag("seeds") ?? process.env.SIM_SEEDS ?? 10_000);
const workers = Number(flag("workers") ?? 0) || undefined;
const mutation = flag("mutation") ?? process.env.SIM_MUTATE ?? "";

const replay = (seed: number, mutate: string): string => {
  const env = ["SIM_PAUSE_ORDER", "SIM_STRICT"].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]} `);
  if (mutate) env.unshift(`SIM_MUTATE=${mutate} `);
  return `${env.join("")}SIM_SEED=${seed} npm run sim`;
};

if (one) {
  const r = await runSeed(Number(one), mutation);
  console.log(`seed ${one} trace ${r.hash} steps ${r.steps}${r.known.length ? ` known ${r.known.join(",")}` : ""}`);
  if (r.violations.length > 0) {
    console.log(`seed ${one} FAILED${mutation ? ` (mutation ${mutation})` : ""}:\n  ${r.violations.join("\n  ")}`);
    process.exit(1);
  }
} else if (mutation === "all") {
  // The mutation check: every planted bug must be caught within `count` seeds.
  let missed = 0;
  console.log(`| mutation | caught at seed count | first failure |\n|---|---|---|`);
  for (const m of MUTATIONS) {
    const r = await runPool({ start, count, mutation: m, workers });
    if (!r.failure) missed++;
    console.log(`| ${m} | ${r.failure ? r.seeds : `NOT CAUGHT in ${count}`} | ${r.failure ? `${r.failure.violations[0]} (${replay(r.failure.seed, m)})` : ""} |`);
  }
  process.exit(missed > 0 ? 1 : 0);
} else {
  const r = await runPool({ start, count, mutation, workers });
  const rate = `${(r.seeds / r.seconds).toFixed(0)} seeds/s on ${r.workers} workers, ${(r.seeds / r.cpuSeconds).toFixed(0)} seeds per CPU-second`;
  if (r.failure) {
    console.log(`seed ${r.failure.seed} FAILED after ${r.seeds} seeds${mutation ? ` (mutation ${mutation})` : ""}:\n  ${r.failure.violations.join("\n  ")}`);
    console.log(`replay: ${replay(r.failure.seed, mutation)}`);
    process.exit(1);
  }
  console.log(`${r.seeds} seeds ok in ${r.seconds.toFixed(1)} s (${rate}, ${r.steps} steps; known findings (seeds): ${JSON.stringify(r.known)})`);
}
