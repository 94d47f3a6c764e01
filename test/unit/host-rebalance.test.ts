// updateServerList's rebalancing (issue 42 item 1), the Java client's rule (StaticHostProvider): on HostList
// with an injected random source. First the rule case by case (a constant random picks the branch), then the
// expected fractions over many clients drawn from one seeded PRNG, checked against 99.9% binomial bounds.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import console from "node:console";
import type { HostPort } from "../../src/protocol/connect-string.ts";
import { HostList } from "../../src/client/session/hosts.ts";
import { rng } from "../support/prng.ts";

const S = (n: number): HostPort => ({ host: `s${n}`, port: 2181 });
const list = (...ids: number[]): HostPort[] => ids.map(S);
const name = (h: HostPort): string => h.host;
const always = (x: number) => (): number => x;

/** A client on `current` (dialled and connected through the list) of `ids`, drawing from `random`. */
function on(current: number, ids: number[], random: () => number): HostList {
  const l = new HostList(list(...ids), random);
  l.connected(S(current));
  return l;
}

/** z for a two-sided 99.9% interval. */
const Z = 3.29;
function within(count: number, n: number, p: number, what: string): string {
  const mean = n * p;
  const half = Z * Math.sqrt(n * p * (1 - p));
  assert.ok(Math.abs(count - mean) <= half, `${what}: ${count}, expected ${mean.toFixed(0)} ± ${half.toFixed(0)}`);
  return `${what} ${count} (expected ${mean.toFixed(0)} ± ${half.toFixed(0)})`;
}

describe("HostList.rebalance: the Java client's rule", () => {
  it("the list grew, my server stays: I move with probability 1 - old/new, to one of the new servers", () => {
    const stay = on(1, [1, 2, 3], always(0.41)); // 0.41 > 1 - 3/5
    assert.equal(stay.rebalance(list(1, 2, 3, 4, 5), S(1)), false);
    const move = on(1, [1, 2, 3], always(0.39));
    assert.equal(move.rebalance(list(1, 2, 3, 4, 5), S(1)), true);
    assert.ok(["s4", "s5"].includes(name(move.next().host)));
  });

  it("the list grew, my server left: I move to one of the new servers", () => {
    const l = on(3, [1, 2, 3], always(0.99));
    assert.equal(l.rebalance(list(1, 2, 4, 5), S(3)), true);
    const first = name(l.next().host);
    const second = name(l.next().host);
    assert.deepEqual([first, second].sort(), ["s4", "s5"], "the new servers first, each once");
    assert.ok(["s1", "s2"].includes(name(l.next().host)), "then the old ones");
  });

  it("the list shrank or kept its size, my server stays: I stay, and a later reconnect goes round from it", () => {
    for (const r of [0, 0.5, 0.999]) {
      const l = on(2, [1, 2, 3, 4, 5], always(r));
      assert.equal(l.rebalance(list(1, 2, 3), S(2)), false);
      assert.equal(l.rebalance(list(1, 2, 3), S(2)), false, "the same list again");
      const after = [l.next(), l.next(), l.next()].map((n) => name(n.host));
      assert.equal(after[2], "s2", "a full pass ends back on s2");
    }
  });

  it("the list shrank, my server left: to an old server with probability kept*(old-new)/(new*(old-kept))", () => {
    // Only removals: kept = new, so the old servers with probability 1.
    const l = on(5, [1, 2, 3, 4, 5], always(0.999));
    assert.equal(l.rebalance(list(1, 2, 3), S(5)), true);
    assert.ok(["s1", "s2", "s3"].includes(name(l.next().host)));
    // Same size, one swapped: kept*(0)/... = 0, so the new server.
    const swap = on(3, [1, 2, 3], always(0.999));
    assert.equal(swap.rebalance(list(1, 2, 4), S(3)), true);
    assert.equal(name(swap.next().host), "s4");
    // 5 -> {1, 2, 6}: to an old one with probability 2*2/(3*3) = 4/9, else to s6.
    const toNew = on(5, [1, 2, 3, 4, 5], always(0.55)); // 0.55 <= 5/9: the new server
    assert.equal(toNew.rebalance(list(1, 2, 6), S(5)), true);
    assert.equal(name(toNew.next().host), "s6");
    const toOld = on(5, [1, 2, 3, 4, 5], always(0.57));
    assert.equal(toOld.rebalance(list(1, 2, 6), S(5)), true);
    assert.ok(["s1", "s2"].includes(name(toOld.next().host)));
  });

  it("a move walks each group once, then the plain round robin; a connection ends it", () => {
    const l = on(3, [1, 2, 3], always(0.999));
    l.rebalance(list(1, 2, 4), S(3)); // pFresh = 1
    const walk = [0, 1, 2, 3, 4, 5].map(() => l.next());
    assert.equal(name(walk[0]!.host), "s4");
    assert.deepEqual(walk.slice(1, 3).map((w) => name(w.host)).sort(), ["s1", "s2"], "then the old ones");
    assert.deepEqual(walk.slice(0, 3).map((w) => w.delayMs), [0, 0, 0]);
    assert.equal(walk[3]!.delayMs, 1000, "every host tried: the pause after a full pass");
    const again = on(3, [1, 2, 3], always(0.999));
    again.rebalance(list(1, 2, 4), S(3));
    again.connected(S(1)); // e.g. a dial begun before the update
    assert.equal(again.rebalance(list(1, 2, 4), S(1)), false, "no move pending any more; s1 stays");
  });

  it("an update while a move is pending: the host the move would dial next counts as mine", () => {
    const l = on(3, [1, 2, 3], always(0.999));
    assert.equal(l.rebalance(list(1, 2, 4), S(3)), true); // would dial s4 next
    assert.equal(l.rebalance(list(1, 2, 4), null), false, "s4 is in the list and it did not grow: stay on the s4 plan, no move");
    const order = l.all.map(name);
    assert.equal(name(l.next().host), order[(order.indexOf("s4") + 1) % 3], "the round robin goes on from s4, as Java's next() does");
  });

  it("the expected fractions over many clients (seeded): 3 -> 5, 5 -> 3, 5 -> {1, 2, 6}", () => {
    const random = rng(4242);
    const n = 9000;
    const spread = (from: number[], to: number[]): { per: Map<string, number>; moved: number } => {
      const per = new Map<string, number>(to.map((id) => [`s${id}`, 0]));
      let moved = 0;
      for (let i = 0; i < n; i++) {
        const mine = from[i % from.length]!;
        const l = on(mine, from, random);
        const move = l.rebalance(list(...to), S(mine));
        const at = move ? name(l.next().host) : `s${mine}`;
        if (move) moved++;
        per.set(at, per.get(at)! + 1);
      }
      return { per, moved };
    };
    const lines: string[] = [];
    const grow = spread([1, 2, 3], [1, 2, 3, 4, 5]);
    lines.push(`3 -> 5: ${within(grow.moved, n, 0.4, "moved")}`);
    // An old server keeps each of its 3000 clients with probability 0.6; a new one gets each client with probability 0.2.
    for (const [s, c] of grow.per) lines.push(`  ${s}: ${s === "s4" || s === "s5" ? within(c, n, 0.2, "clients") : within(c, n / 3, 0.6, "clients")}`);
    const shrink = spread([1, 2, 3, 4, 5], [1, 2, 3]);
    assert.equal(shrink.moved, (n * 2) / 5, "exactly the clients of the removed servers move");
    // The kept servers keep their own 1800 each; the 3600 movers spread evenly over them.
    lines.push(`5 -> 3: moved ${shrink.moved} (exactly those of s4, s5)`);
    for (const [s, c] of shrink.per) lines.push(`  ${s}: 1800 + ${within(c - 1800, (n * 2) / 5, 1 / 3, "movers")}`);
    const swap = spread([1, 2, 3, 4, 5], [1, 2, 6]);
    // 5400 movers: to s6 with probability 5/9, else evenly to s1, s2 (2/9 each): 3000 expected everywhere.
    lines.push(`5 -> {1,2,6}: moved ${swap.moved}`);
    lines.push(`  s6: ${within(swap.per.get("s6")!, (n * 3) / 5, 5 / 9, "movers")}`);
    for (const s of ["s1", "s2"]) lines.push(`  ${s}: 1800 + ${within(swap.per.get(s)! - 1800, (n * 3) / 5, 2 / 9, "movers")}`);
    console.log(`[host-rebalance] ${n} clients, 99.9% binomial intervals\n${lines.join("\n")}`);
  });
});
