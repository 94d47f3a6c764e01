// The chaos analysis maps each participant's stamps onto the test's clock (± the clock sync error). A
// SIGSTOPped process writes nothing until SIGCONT, so a line that arrived before the cont was written before
// the stop, even when its mapped stamp lands a few ms after the stop mark. Found in a loaded CI run: a Bun
// leader's last WORK line, mapped 0-30 ms late, read as "acted after the stop" and turned a clean stop into an
// overlap with its successor.
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { timedEvents, type Member } from "../support/chaos/chaos-run.ts";
import { intervalsOf } from "../support/chaos/chaos-history.ts";

const ms = (n: number): bigint => BigInt(Math.round(n * 1e6));

/** A member whose lines are WORK stamps (already on our clock: offset 0) with the time we received them. */
function member(work: { stampMs: number; receivedMs: number }[], marks: Member["marks"]): Member {
  const lines = [
    { kind: "ELECTED", args: [], line: "ELECTED", monoNs: ms(0), epochMs: null, receivedNs: ms(0) },
    ...work.map((w) => ({ kind: "WORK", args: [String(ms(w.stampMs))], line: "WORK", monoNs: null, epochMs: null, receivedNs: ms(w.receivedMs) })),
  ];
  const p = { lines, clockOffsetNs: 0n, localNs: (l: { monoNs: bigint | null }) => l.monoNs };
  return { c: { id: "x", p } as unknown as Member["c"], marks, leading: true, connected: true, stopped: false, leaving: false };
}

describe("chaos analysis: lines around a SIGKILL", () => {
  // Found in a loaded CI run (three CI runs and a busy loop on 2 cores): "n1: WORK at t+4744 ms while not
  // leading", a leader's last WORK line mapped past the kill mark by the clock sync's error.
  it("a line whose mapped stamp falls after the kill mark was written before it: no WORK while not leading", () => {
    const kill = { kind: "kill" as const, ns: ms(100) };
    const events = timedEvents(member([{ stampMs: 90, receivedMs: 91 }, { stampMs: 103, receivedMs: 99 }], [kill]));
    const { intervals, problems } = intervalsOf("x", events, ms(400));
    assert.deepEqual(problems, []);
    assert.deepEqual(intervals.map((i) => [i.end, i.how]), [[ms(100), "kill"]]);
  });
});

describe("chaos analysis: lines around a SIGSTOP", () => {
  const stop = { kind: "stop" as const, ns: ms(100) };
  const cont = { kind: "cont" as const, ns: ms(300) };

  it("a line received before the cont counts as written before the stop, whatever its mapped stamp", () => {
    const events = timedEvents(member([{ stampMs: 90, receivedMs: 91 }, { stampMs: 104, receivedMs: 106 }], [stop, cont]));
    const { intervals } = intervalsOf("x", [...events, { kind: "REVOKED", ns: ms(310), detail: "disconnected" }], ms(400));
    assert.deepEqual(intervals.map((i) => [i.end, i.how]), [[ms(100), "stop"]]);
  });

  it("a line received after the cont is work after resuming: the interval spans the stop", () => {
    const events = timedEvents(member([{ stampMs: 90, receivedMs: 91 }, { stampMs: 305, receivedMs: 306 }], [stop, cont]));
    const { intervals } = intervalsOf("x", [...events, { kind: "REVOKED", ns: ms(310), detail: "disconnected" }], ms(400));
    assert.deepEqual(intervals.map((i) => [i.end, i.how]), [[ms(310), "revoked:disconnected"]]);
  });
});
