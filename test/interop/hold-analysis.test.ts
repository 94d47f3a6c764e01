// The torture verdicts can fail: overlapping, herd and token histories are caught; clean ones pass.
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { analyseHolds, maxConcurrent, overlapping, type HeldInterval } from "./hold-analysis.ts";

const ms = (n: number): bigint => BigInt(Math.round(n * 1e6));
const hold = (id: string, from: number, to: number | null, token: number): HeldInterval => ({
  who: { id, clockErrorNs: ms(0.1) },
  start: ms(from),
  end: to === null ? null : ms(to),
  token: BigInt(token),
});

describe("lock torture verdicts", () => {
  it("passes a clean history", () => {
    const v = analyseHolds([hold("a", 0, 10, 1), hold("b", 12, 20, 2), hold("a", 21, 30, 3)], [ms(11), ms(20.5)]);
    assert.deepEqual(v, { overlaps: [], maxWakesPerRelease: 1, tokensIncreasing: true });
  });
  it("counts wake-ups by their own stamps: a successor woken 2 ms after its predecessor's hold began is one wake", () => {
    // a holds from 0, b is woken at 2 (a released early) and holds from 3, c is woken at 4: one wake each
    const v = analyseHolds([hold("a", 0, 1.9, 1), hold("b", 3, 3.9, 2), hold("c", 5, 6, 3)], [ms(2), ms(4)]);
    assert.equal(v.maxWakesPerRelease, 1);
    assert.equal(analyseHolds([hold("a", 0, 1.9, 1), hold("b", 3, 3.9, 2)], [ms(2), ms(2.5)]).maxWakesPerRelease, 2);
  });
  it("catches an overlap, a never-closed hold, two wakes in one release and a token going back", () => {
    const v = analyseHolds([hold("a", 0, 10, 1), hold("b", 5, 20, 3), hold("c", 25, null, 2), hold("d", 40, 50, 4)], [ms(21), ms(22)]);
    assert.equal(v.overlaps.length, 2); // a/b, and c (never closed) with d
    assert.match(v.overlaps[0], /^a .* vs b/);
    assert.equal(v.maxWakesPerRelease, 2);
    assert.equal(v.tokensIncreasing, false);
  });
  it("tolerates the clock-sync error at a handover", () => {
    assert.deepEqual(analyseHolds([hold("a", 0, 10.5, 1), hold("b", 10, 20, 2)], []).overlaps, []);
    assert.equal(analyseHolds([hold("a", 0, 12, 1), hold("b", 10, 20, 2)], []).overlaps.length, 1);
  });
  it("tolerates both holders' clock-sync errors at a handover, and no more", () => {
    // Each holder's stamps are mapped onto the one clock with an error of their own: at a handover from a (±0.1 ms)
    // to b (±1.5 ms), b's start may read up to 2.6 ms before a's end without proving an overlap.
    const b = (from: number, to: number): HeldInterval => ({ ...hold("b", from, to, 2), who: { id: "b", clockErrorNs: ms(1.5) } });
    assert.deepEqual(overlapping([hold("a", 0, 10, 1), b(7.5, 20)]), []);
    assert.equal(overlapping([hold("a", 0, 10, 1), b(7.3, 20)]).length, 1);
    assert.equal(maxConcurrent([hold("a", 0, 10, 1), b(7.5, 20)]), 1);
    assert.equal(maxConcurrent([hold("a", 0, 10, 1), b(7.3, 20)]), 2);
    // a later start with a smaller error is still checked after one that is not within the margin
    const late = overlapping([hold("a", 0, 10, 1), b(7.5, 7.6), hold("c", 7.6, 12, 3)]);
    assert.equal(late.length, 1);
    assert.match(late[0], /^a .* vs c /);
  });
  it("read-write and semaphore verdicts: readers may overlap, a writer may not; concurrency counted with the same tolerance", () => {
    const writer = (h: HeldInterval): boolean => h.who.id.startsWith("w");
    const rw = (a: HeldInterval, b: HeldInterval): boolean => writer(a) || writer(b);
    assert.deepEqual(overlapping([hold("r1", 0, 10, 0), hold("r2", 2, 12, 0), hold("w1", 12.5, 20, 0)], rw), []);
    assert.equal(overlapping([hold("r1", 0, 10, 0), hold("w1", 5, 12, 0), hold("r2", 10, 15, 0)], rw).length, 2);
    assert.equal(overlapping([hold("w1", 0, 10, 0), hold("w2", 8, 15, 0)], rw).length, 1);
    assert.equal(maxConcurrent([hold("a", 0, 10, 0), hold("b", 2, 12, 0), hold("c", 10.5, 20, 0)]), 2); // c after a's end, within tolerance
    assert.equal(maxConcurrent([hold("a", 0, 10, 0), hold("b", 2, 12, 0), hold("c", 5, 20, 0)]), 3);
    assert.equal(maxConcurrent([hold("a", 0, null, 0), hold("b", 30, 40, 0)]), 2); // never closed: to the end
  });
});
