// npm run sim: SIM_SEEDS=<n> seeds from SIM_START (default 1), or SIM_SEED=<s> for one seed with its
// trace hash. Exits 1 on the first failing seed and prints the command that replays it.
import { runSeed } from "./driver.ts";

const one = process.env.SIM_SEED;
const start = Number(process.env.SIM_START ?? 1);
const count = one ? 1 : Number(process.env.SIM_SEEDS ?? 10_000);
const mutate = process.env.SIM_MUTATE ?? "";
const t0 = performance.now();
let steps = 0;
const known = new Map<string, number>();
for (let i = 0; i < count; i++) {
  const seed = one ? Number(one) : start + i;
  const r = await runSeed(seed, mutate);
  steps += r.steps;
  for (const k of r.known) known.set(k, (known.get(k) ?? 0) + 1);
  if (one) console.log(`seed ${seed} trace ${r.hash} steps ${r.steps}`);
  if (r.violations.length > 0) {
    console.log(`seed ${seed} FAILED after ${i + 1} seeds${mutate ? ` (mutation ${mutate})` : ""}:\n  ${r.violations.join("\n  ")}`);
    const env = ["SIM_MUTATE", "SIM_PAUSE_ORDER", "SIM_STRICT"].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]} `).join("");
    console.log(`replay: ${env}SIM_SEED=${seed} npm run sim`);
    process.exit(1);
  }
}
const secs = (performance.now() - t0) / 1000;
console.log(`${count} seeds ok in ${secs.toFixed(1)} s (${(count / secs).toFixed(0)} seeds/s, ${steps} steps; known findings (seeds): ${JSON.stringify(Object.fromEntries(known))})`);
