// Bounded simulation run inside npm test: SIM_SEEDS seeds (default 500) must hold every invariant,
// and the same seed must give the same trace hash.
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { runSeed } from "./driver.ts";

const seeds = Number(process.env.SIM_SEEDS ?? 500);

describe("deterministic simulation", () => {
  it("same seed, same trace", async () => {
    const a = await runSeed(12345, "");
    const b = await runSeed(12345, "");
    assert.equal(a.hash, b.hash);
    const c = await runSeed(12346, "");
    assert.notEqual(a.hash, c.hash);
  }, 60_000);

  it(`${seeds} seeds hold every invariant`, async () => {
    for (let seed = 1; seed <= seeds; seed++) {
      const r = await runSeed(seed, "");
      assert.deepEqual(r.violations, [], `seed ${seed} failed; replay: SIM_SEED=${seed} npm run sim`);
    }
  }, 600_000);
});
