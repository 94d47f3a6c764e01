// The session's transition table (session-states.ts): legal and illegal moves, every state reachable
// from "connecting", "ended" final, the public state each shows, and docs/session-states.md in step.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type Phase, type PhaseKind, TRANSITIONS, checkTransition, publicState } from "../../src/client/session/session-states.ts";

const KINDS = Object.keys(TRANSITIONS) as PhaseKind[];

describe("session transition table", () => {
  it("has the five states", () => {
    assert.deepEqual([...KINDS].sort(), ["closing", "connected", "connecting", "disconnected", "ended"]);
  });

  it("allows exactly the listed moves and throws on every other", () => {
    let legal = 0;
    let illegal = 0;
    for (const from of KINDS) {
      for (const to of KINDS) {
        if (TRANSITIONS[from].includes(to)) {
          checkTransition(from, to);
          legal++;
        } else {
          assert.throws(() => checkTransition(from, to), new RegExp(`illegal session transition ${from} -> ${to}`));
          illegal++;
        }
      }
    }
    assert.equal(legal, 10);
    assert.equal(illegal, 15);
  });

  it("specific moves: no way back to connecting, no self-moves, closing only ends", () => {
    for (const from of KINDS) assert.throws(() => checkTransition(from, "connecting"));
    for (const k of KINDS) assert.throws(() => checkTransition(k, k));
    assert.deepEqual(TRANSITIONS.closing, ["ended"]);
    assert.deepEqual(TRANSITIONS.ended, []);
    checkTransition("disconnected", "connected");
    assert.throws(() => checkTransition("connecting", "disconnected"), /connecting -> disconnected/);
  });

  it("every state is reachable from connecting, and ended from every state but itself", () => {
    const seen = new Set<PhaseKind>(["connecting"]);
    const todo: PhaseKind[] = ["connecting"];
    while (todo.length > 0) for (const to of TRANSITIONS[todo.pop()!]) if (!seen.has(to) && seen.add(to)) todo.push(to);
    assert.deepEqual([...seen].sort(), [...KINDS].sort());
    for (const k of KINDS) if (k !== "ended") assert.ok(TRANSITIONS[k].includes("ended") || TRANSITIONS[k].every((t) => TRANSITIONS[t].includes("ended")), k);
  });

  it("shows the public SessionState of each state", () => {
    const conn = {} as never;
    const cases: [Phase, string][] = [
      [{ kind: "connecting", attempt: null }, "connecting"],
      [{ kind: "connected", conn, host: { host: "h", port: 1 }, readOnly: false, probe: null }, "connected"],
      [{ kind: "connected", conn, host: { host: "h", port: 1 }, readOnly: true, probe: null }, "connectedReadOnly"],
      [{ kind: "disconnected", since: 0, expiry: null, attempt: null }, "disconnected"],
      [{ kind: "closing", was: "connectedReadOnly", conn: null }, "connectedReadOnly"],
      [{ kind: "ended", state: "authFailed", code: -115, reason: "x" }, "authFailed"],
    ];
    for (const [p, shown] of cases) assert.equal(publicState(p), shown, p.kind);
  });

  it("docs/session-states.md lists the same table", () => {
    const doc = readFileSync(fileURLToPath(new URL("../../docs/session-states.md", (import.meta as { url: string }).url)), "utf8");
    const rows = new Map<string, string[]>();
    for (const line of doc.split("\n")) {
      const m = /^\| `(\w+)` \| ([^|]*) \|/.exec(line);
      if (m) rows.set(m[1]!, [...m[2]!.matchAll(/`(\w+)`/g)].map((x) => x[1]!));
    }
    assert.deepEqual(Object.fromEntries(rows), Object.fromEntries(KINDS.map((k) => [k, [...TRANSITIONS[k]]])));
  });
});
