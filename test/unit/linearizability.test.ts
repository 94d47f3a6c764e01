// test/support/chaos/linearizability.ts: the history checker accepts linearizable histories (overlapping
// writes and reads, unknown outcomes that did or did not apply) and rejects the classic anomalies (a stale
// read, a lost acknowledged write, a failed write that took effect); the lock check rejects two holders
// at once and a fencing token going backwards. Properties: a history built from a sequential run with
// random real-time overlaps is accepted; one read changed to a value never written is rejected.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkExclusive,
  checkLinearizable,
  registerModel,
  type Operation,
  type Outcome,
  type RegisterInput,
  type RegisterOutput,
} from "../support/chaos/linearizability.ts";

type Op = Operation<RegisterInput, RegisterOutput>;
const model = registerModel();

// Shorthands: client, [invoke, complete], and for reads the value and version seen.
const read = (client: string, invoke: number, complete: number, value: string, version: number, key = "a"): Op =>
  ({ client, key, invoke, complete, outcome: "ok", input: { f: "read" }, output: { value, version } });
const write = (client: string, invoke: number, complete: number, value: string, version: number | Outcome, key = "a"): Op =>
  typeof version === "number"
    ? { client, key, invoke, complete, outcome: "ok", input: { f: "write", value }, output: { version } }
    : { client, key, invoke, complete: version === "unknown" ? Infinity : complete, outcome: version, input: { f: "write", value } };
const cas = (client: string, invoke: number, complete: number, expected: number, value: string, outcome: number | Outcome, key = "a"): Op =>
  typeof outcome === "number"
    ? { client, key, invoke, complete, outcome: "ok", input: { f: "cas", expected, value }, output: { version: outcome } }
    : { client, key, invoke, complete: outcome === "unknown" ? Infinity : complete, outcome, input: { f: "cas", expected, value } };

const verdict = (h: Op[]) => checkLinearizable(h, model);

describe("linearizability checker: register histories", () => {
  it("accepts overlapping writes and reads that some order explains", () => {
    const h = [
      write("c1", 0, 10, "x", 1),
      write("c2", 2, 12, "y", 2), // both overlap: y after x, as the versions say
      read("c3", 1, 3, "", 0), // before either took effect
      read("c3", 5, 11, "x", 1), // x took effect first
      read("c1", 13, 14, "y", 2),
      cas("c2", 15, 16, 2, "z", 3),
      read("c3", 15.5, 17, "z", 3),
    ];
    const r = verdict(h);
    assert.equal(r.verdict, "linearizable", r.message);
    assert.equal(r.message, "");
  });

  it("accepts an unknown write that did apply (read back later), and one that did not", () => {
    const applied = [write("c1", 0, 5, "x", "unknown"), read("c2", 20, 21, "x", 1), write("c2", 22, 23, "y", 2)];
    assert.equal(verdict(applied).verdict, "linearizable");
    const lost = [write("c1", 0, 5, "x", "unknown"), read("c2", 20, 21, "", 0), write("c2", 22, 23, "y", 1), read("c1", 24, 25, "y", 1)];
    assert.equal(verdict(lost).verdict, "linearizable");
    // ... or that applied long after its client gave up, between two later reads
    const late = [write("c1", 0, 5, "x", "unknown"), read("c2", 20, 21, "", 0), read("c2", 30, 31, "x", 1)];
    assert.equal(verdict(late).verdict, "linearizable");
  });

  it("keeps keys apart and leaves definite failures out", () => {
    const h = [
      write("c1", 0, 1, "x", 1, "a"),
      write("c1", 2, 3, "x", 1, "b"),
      cas("c2", 4, 5, 0, "no", "fail", "a"), // BADVERSION: did not apply
      write("c2", 4, 5, "never", "fail", "b"), // never sent
      read("c3", 6, 7, "x", 1, "a"),
      read("c3", 6, 7, "x", 1, "b"),
    ];
    const r = verdict(h);
    assert.equal(r.verdict, "linearizable", r.message);
    assert.deepEqual(r.keys.map((k) => [k.key, k.ops]), [["a", 2], ["b", 2]]);
  });

  it("rejects a stale read, naming the key and the operations", () => {
    const h = [write("c1", 0, 1, "x", 1), write("c1", 2, 3, "y", 2), read("c2", 4, 5, "x", 1)];
    const r = verdict(h);
    assert.equal(r.verdict, "violation");
    assert.match(r.message, /^key a: violation \(3 ops/);
    assert.match(r.message, /no order places next:\n {4}c2 read\(\) -> "x"@v1 \[4\.000, 5\.000\] ok/);
    assert.match(r.message, /c1 write\("y"\) -> v2/);
  });

  it("rejects a lost acknowledged write", () => {
    const h = [write("c1", 0, 1, "x", 1), read("c2", 2, 3, "", 0)];
    assert.equal(verdict(h).verdict, "violation");
    // also when the later write claims the version the lost one had
    const h2 = [write("c1", 0, 1, "x", 1), write("c2", 2, 3, "y", 1)];
    assert.equal(verdict(h2).verdict, "violation");
  });

  it("rejects a failed write that took effect (read back later)", () => {
    const h = [write("c1", 0, 1, "x", "fail"), read("c2", 2, 3, "x", 1)];
    assert.equal(verdict(h).verdict, "violation");
    const c = [cas("c1", 0, 1, 0, "x", "fail"), read("c2", 2, 3, "x", 1)];
    assert.equal(verdict(c).verdict, "violation");
  });

  it("rejects an ok cas whose expected version could not have matched", () => {
    const h = [write("c1", 0, 1, "x", 1), cas("c2", 2, 3, 0, "y", 2)];
    assert.equal(verdict(h).verdict, "violation");
  });

  it("gives up with unknown-bound rather than searching without end", () => {
    // 14 concurrent unknown cas (each expecting another version) and a read that no subset explains: the
    // search must try the subsets (a refused cas leaves the state alone but is placed all the same).
    const h = [...Array.from({ length: 14 }, (_, i) => cas(`c${i}`, 0, 1, i, `w${i}`, "unknown")), read("r", 2, 3, "never", 3)];
    const bounded = checkLinearizable(h, model, { maxStates: 500 });
    assert.equal(bounded.verdict, "unknown-bound");
    assert.match(bounded.message, /key a: unknown-bound/);
  });
});

describe("lock / leader holds", () => {
  it("accepts one holder at a time with increasing tokens", () => {
    assert.deepEqual(checkExclusive([
      { holder: "p1", acquired: 0, released: 10, token: 1 },
      { holder: "p2", acquired: 11, released: 20, token: 5 },
      { holder: "p1", acquired: 21, released: Infinity, token: 9 },
    ]), []);
  });

  it("rejects two holders overlapping, also a hold never released", () => {
    const v = checkExclusive([
      { holder: "p1", acquired: 0, released: 10, token: 1 },
      { holder: "p2", acquired: 9, released: 20, token: 2 },
    ]);
    assert.equal(v.length, 1);
    assert.match(v[0], /overlap: p1 .* and p2 /);
    assert.equal(checkExclusive([
      { holder: "p1", acquired: 0, released: Infinity, token: 1 },
      { holder: "p2", acquired: 30, released: 40, token: 2 },
    ]).length, 1);
  });

  it("rejects a fencing token going backwards (or repeating)", () => {
    const v = checkExclusive([
      { holder: "p1", acquired: 0, released: 10, token: 7n },
      { holder: "p2", acquired: 11, released: 20, token: 3n },
    ]);
    assert.deepEqual(v, ["fencing token went from 7 (p1 at 0.000) to 3 (p2 at 11.000)"]);
    assert.equal(checkExclusive([
      { holder: "p1", acquired: 0, released: 10, token: 4 },
      { holder: "p2", acquired: 11, released: 20, token: 4 },
    ]).length, 1);
  });
});

// A sequential run of the register model on a few keys, each operation given a linearization point
// (its index) and a real-time interval around it of random width, so operations overlap at random.
// Unknown writes that did not apply, and definite failures, are left out of the run.
interface Plan {
  key: number;
  kind: "read" | "write" | "cas";
  casHits: boolean; // a cas that names the current version (else a stale one)
  fate: "ok" | "fail" | "unknown-applied" | "unknown-lost";
  before: number;
  after: number;
  client: number;
}

const plan = fc.record({
  key: fc.integer({ min: 0, max: 2 }),
  kind: fc.constantFrom("read", "write", "cas"),
  casHits: fc.boolean(),
  fate: fc.constantFrom("ok", "ok", "ok", "ok", "fail", "unknown-applied", "unknown-lost"),
  before: fc.double({ min: 0, max: 6, noNaN: true }),
  after: fc.double({ min: 0, max: 6, noNaN: true }),
  client: fc.integer({ min: 1, max: 5 }),
}) as fc.Arbitrary<Plan>;

function historyOf(plans: Plan[]): Op[] {
  const state = new Map<string, { value: string; version: number }>();
  const h: Op[] = [];
  plans.forEach((p, i) => {
    const key = `k${p.key}`;
    const s = state.get(key) ?? { value: "", version: 0 };
    const at = i * 2; // the linearization point
    const base = { client: `c${p.client}`, key, invoke: at - p.before, complete: at + p.after };
    if (p.kind === "read") {
      h.push({ ...base, outcome: "ok", input: { f: "read" }, output: { ...s } });
      return;
    }
    const value = `v${i}`;
    const input: RegisterInput = p.kind === "write" ? { f: "write", value } : { f: "cas", expected: p.casHits ? s.version : s.version + 7, value };
    const refused = input.f === "cas" && input.expected !== s.version;
    if (p.fate === "fail" || refused) {
      h.push({ ...base, outcome: "fail", input });
      return;
    }
    if (p.fate === "unknown-lost") {
      h.push({ ...base, complete: Infinity, outcome: "unknown", input });
      return;
    }
    const next = { value, version: s.version + 1 };
    state.set(key, next);
    if (p.fate === "unknown-applied") h.push({ ...base, complete: Infinity, outcome: "unknown", input });
    else h.push({ ...base, outcome: "ok", input, output: { version: next.version } });
  });
  return h;
}

describe("linearizability checker: properties", () => {
  it("accepts every history from a sequential run with random overlaps", () => {
    fc.assert(
      fc.property(fc.array(plan, { minLength: 1, maxLength: 60 }), (plans) => {
        const r = verdict(historyOf(plans));
        assert.equal(r.verdict, "linearizable", r.message);
      }),
      { numRuns: 300 },
    );
  });

  it("rejects such a history once one read returns a value never written", () => {
    fc.assert(
      fc.property(fc.array(plan, { minLength: 1, maxLength: 60 }), fc.nat(), (plans, pick) => {
        const h = historyOf(plans);
        const reads = h.filter((op) => op.input.f === "read");
        fc.pre(reads.length > 0);
        const victim = reads[pick % reads.length];
        const seen = victim.output as { value: string; version: number };
        victim.output = { value: "never-written", version: seen.version };
        const r = verdict(h);
        assert.equal(r.verdict, "violation");
        assert.match(r.message, new RegExp(`key ${victim.key}: violation`));
      }),
      { numRuns: 300 },
    );
  });
});

// Every order, tried one by one: the reference the search (with its memo and shortcuts) must agree with.
function bruteForce(h: Op[]): boolean {
  const ops = h.filter((op) => op.outcome === "ok" || (op.outcome === "unknown" && op.input.f !== "read"));
  const placed = new Set<number>();
  const go = (s: { value: string; version: number }): boolean => {
    if (ops.every((op, i) => op.outcome !== "ok" || placed.has(i))) return true;
    return ops.some((op, i) => {
      if (placed.has(i)) return false;
      // anything that completed before op was invoked must come first
      if (ops.some((o, j) => !placed.has(j) && o.outcome === "ok" && o.complete < op.invoke)) return false;
      const next = model.step(s, op.input, op.outcome === "ok" ? op.output : undefined);
      if (next === undefined) return false;
      placed.add(i);
      const ok = go(next);
      placed.delete(i);
      return ok;
    });
  };
  return go({ value: "", version: 0 });
}

const anyOp = fc
  .record({
    f: fc.constantFrom("read", "write", "cas"),
    outcome: fc.constantFrom("ok", "ok", "fail", "unknown") as fc.Arbitrary<Outcome>,
    invoke: fc.integer({ min: 0, max: 6 }),
    length: fc.integer({ min: 0, max: 4 }),
    value: fc.constantFrom("", "a", "b", "c"),
    version: fc.integer({ min: 0, max: 3 }),
    client: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ f, outcome, invoke, length, value, version, client }): Op => {
    const base = { client: `c${client}`, key: "a", invoke, complete: outcome === "unknown" ? Infinity : invoke + length, outcome };
    if (f === "read") return { ...base, input: { f }, ...(outcome === "ok" ? { output: { value, version } } : {}) };
    const input: RegisterInput = f === "write" ? { f, value } : { f, expected: version, value };
    return { ...base, input, ...(outcome === "ok" ? { output: { version: version + 1 } } : {}) };
  });

describe("linearizability checker: against every order", () => {
  it("agrees with a brute-force search on small random histories", () => {
    let violations = 0;
    fc.assert(
      fc.property(fc.array(anyOp, { minLength: 1, maxLength: 7 }), (h) => {
        const expected = bruteForce(h);
        if (!expected) violations++;
        assert.equal(verdict(h).verdict, expected ? "linearizable" : "violation");
      }),
      { numRuns: 1000 },
    );
    assert.ok(violations > 100, `both verdicts exercised (${violations} violations of 1000)`);
  });
});
