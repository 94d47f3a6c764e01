// The stress run's fuzzing: test/unit/fuzz-frames.test.ts with FUZZ_RUNS=1,000,000, run in a child
// process under node:test (the bdd shim picks node:test outside vitest), so it has its own heap.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";

const FILE = fileURLToPath(new URL("../unit/fuzz-frames.test.ts", (import.meta as { url: string }).url));
const RUNS = process.env.FUZZ_RUNS ?? "1000000";

describe("fuzzing at stress scale", () => {
  it(`${RUNS} mutated server frames: only ProtocolError, bounded allocation and time`, async () => {
    const t0 = performance.now();
    const env: Record<string, string | undefined> = { ...process.env, FUZZ_RUNS: RUNS };
    delete env.VITEST; // the child must use node:test, not vitest
    const child = spawn(process.execPath, ["--import", "tsx", "--test", FILE], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((r) => child.on("exit", r));
    process.stdout.write(`fuzz ${RUNS}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n${out.split("\n").filter((l) => /rejections|^# (pass|fail)/.test(l)).join("\n")}\n`);
    assert.equal(code, 0, out.slice(-4000));
    assert.match(out, /# pass 4/);
  }, 600_000);
});
