// beforeAll/afterAll for the secure-server test files. Under Bun, node:test's before/after ignore
// their timeout and die at Bun's 5 s default, shorter than generating certificates and starting
// or stopping JVMs; raising Bun's default timeout fixes that (each test still passes its own).
// Elsewhere this only re-exports bdd.ts's hooks. (Redundant once bdd.ts handles it: BUG-H10-3.)
export { afterAll, beforeAll } from "../bdd.ts";

if ("Bun" in globalThis) {
  const bun = (await import("bun:test" as string)) as { setDefaultTimeout(ms: number): void };
  bun.setDefaultTimeout(120_000);
}
