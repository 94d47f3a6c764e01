// One test API for three runtimes: vitest under Node, bun:test under Bun (its node:test ignores hook
// timeouts), node:test under Deno. Assertions use node:assert/strict everywhere.
type Fn = () => unknown;
type Suite = (name: string, fn: Fn) => void;
type Test = (name: string, fn: Fn, timeoutMs?: number) => void;
type Hook = (fn: Fn, timeoutMs?: number) => void;

interface Bdd {
  describe: Suite;
  it: Test;
  beforeAll: Hook;
  afterAll: Hook;
  beforeEach: Hook;
  afterEach: Hook;
}

async function load(): Promise<Bdd> {
  if (process.env.VITEST) {
    const v = await import("vitest");
    return { describe: v.describe, it: v.it, beforeAll: v.beforeAll, afterAll: v.afterAll, beforeEach: v.beforeEach, afterEach: v.afterEach } as unknown as Bdd;
  }
  if ("Bun" in globalThis) {
    // A variable specifier keeps other runtimes' type checkers away from the Bun-only module.
    const bunTest = "bun:test";
    const b = (await import(bunTest)) as Bdd & { setDefaultTimeout(ms: number): void };
    b.setDefaultTimeout(120_000); // hooks without an explicit timeout get the same room as under vitest
    return { describe: b.describe, it: b.it, beforeAll: b.beforeAll, afterAll: b.afterAll, beforeEach: b.beforeEach, afterEach: b.afterEach };
  }
  const t = await import("node:test");
  // node:test takes options before the function; adapt the vitest-style (name, fn, timeout) order.
  const it: Test = (name, fn, timeout) => t.it(name, timeout ? { timeout } : {}, fn as () => Promise<void>);
  const hook = (h: (fn: Fn, o?: { timeout?: number }) => void): Hook => (fn, timeout) => h(fn, timeout ? { timeout } : {});
  return {
    describe: (name, fn) => t.describe(name, fn as () => void),
    it,
    beforeAll: hook(t.before as never),
    afterAll: hook(t.after as never),
    beforeEach: hook(t.beforeEach as never),
    afterEach: hook(t.afterEach as never),
  };
}

export const { describe, it, beforeAll, afterAll, beforeEach, afterEach } = await load();
