// The chaos run's herd check counts the participants a znode's deletion woke as successors. A leader also
// holds an existence watch on its own znode (it steps down at once when the znode is deleted from outside),
// and when its session expires while its process is stopped, the server may write that NodeDeleted to the
// old link before closing it: the resumed owner then logs `WATCH <its znode> own`, which is not a herd.
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { analyze } from "../support/chaos-report.ts";
import type { ChaosRecord, Member } from "../support/chaos-run.ts";

const ms = (n: number): bigint => BigInt(Math.round(n * 1e6));

function member(id: string, lines: { kind: string; args: string[]; at: number }[]): Member {
  const p = {
    lines: lines.map((l) => ({ kind: l.kind, args: l.args, line: [l.kind, ...l.args].join(" "), monoNs: ms(l.at), epochMs: null, receivedNs: ms(l.at) })),
    clockOffsetNs: 0n,
    localNs: (l: { monoNs: bigint | null }) => l.monoNs,
  };
  return { c: { id, p } as unknown as Member["c"], marks: [], leading: false, stopped: false, leaving: false };
}

function record(members: Member[]): ChaosRecord {
  return { config: { runtimes: ["node"], seed: 1 } as unknown as ChaosRecord["config"], startNs: 0n, endNs: ms(1000), actions: [], members, elections: 2, negotiatedMs: 2000 };
}

describe("chaos analysis: the herd", () => {
  it("the owner's own-watch line is not a successor woken", () => {
    const f = analyze(
      record([
        member("a", [{ kind: "WATCH", args: ["/e/n1", "own"], at: 300 }]),
        member("b", [{ kind: "WATCH", args: ["/e/n1"], at: 200 }, { kind: "ELECTED", args: [String(ms(210)), "0", "7"], at: 210 }]),
      ]),
    );
    assert.equal(f.herdMax, 1);
    assert.deepEqual(f.herds, []);
  });

  it("two successors woken by one znode are a herd, and the report names them", () => {
    const f = analyze(
      record([
        member("b", [{ kind: "WATCH", args: ["/e/n1"], at: 200 }]),
        member("c", [{ kind: "WATCH", args: ["/e/n1"], at: 205 }]),
      ]),
    );
    assert.equal(f.herdMax, 2);
    assert.equal(f.herds.length, 1);
    assert.match(f.herds[0]!, /^\/e\/n1: b @.*, c @/);
  });
});
