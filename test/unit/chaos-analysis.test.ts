// The chaos run's analysis (chaos-report.ts) on records written by hand.
//
// The herd: the chaos run's herd check counts the participants a znode's deletion woke as successors. A leader
// also holds an existence watch on its own znode (it steps down at once when the znode is deleted from outside),
// and when its session expires while its process is stopped, the server may write that NodeDeleted to the old
// link before closing it: the resumed owner then logs `WATCH <its znode> own`, which is not a herd.
//
// The ZK leader killed: the chaos run times a failover after the ZK leader was killed from the quorum's return
// (the survivors elect a new ZK leader in the ensemble's own time, now and then seconds). Seed 17607 of the
// stress run (stop 37's CI): the survivors took about 10 s, every participant's session expired on the client's
// own clock meanwhile (4/3 of 2 s) and they exited, and the respawned ones printed no "connected" line (their
// first connect came before their state listener): with no sign of the quorum's return, 13 s were timed from the
// kill and reported slow. The return is now also stamped by the harness polling the survivors, and a participant
// prints its first connect.
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { analyze } from "../support/chaos/chaos-report.ts";
import type { Action, ChaosRecord, Member } from "../support/chaos/chaos-run.ts";

const ms = (n: number): bigint => BigInt(Math.round(n * 1e6));

function member(id: string, lines: { kind: string; args: string[]; at: number }[]): Member {
  const p = {
    lines: lines.map((l) => ({ kind: l.kind, args: l.args, line: [l.kind, ...l.args].join(" "), monoNs: ms(l.at), epochMs: null, receivedNs: ms(l.at) })),
    clockOffsetNs: 0n,
    localNs: (l: { monoNs: bigint | null }) => l.monoNs,
  };
  return { c: { id, p } as unknown as Member["c"], marks: [], leading: false, connected: true, stopped: false, leaving: false };
}

function record(members: Member[], actions: Action[] = [], endMs = 1000): ChaosRecord {
  return { config: { runtimes: ["node"], seed: 1 } as unknown as ChaosRecord["config"], startNs: 0n, startEpochMs: 0, endNs: ms(endMs), actions, members, elections: 2, negotiatedMs: 2000 };
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

/** #189: n90 led through server 3, the ZK leader, killed at t = 1000 ms; n92 (a respawn) elected at 14,067 ms. */
function run(opts: { quorumAt?: number; firstConnectAt?: number }): ChaosRecord {
  const action: Action = { n: 189, kind: "server", ns: ms(1000), leader: "n90", server: 3, serverMode: "leader", quorumNs: opts.quorumAt === undefined ? undefined : ms(opts.quorumAt) };
  const n92 = [
    ...(opts.firstConnectAt === undefined ? [] : [{ kind: "STATE", args: ["connected", String(ms(opts.firstConnectAt)), "0"], at: opts.firstConnectAt }]),
    { kind: "READY", args: ["2000"], at: 12_200 },
    { kind: "WATCH", args: ["/e/n89"], at: 14_060 },
    { kind: "ELECTED", args: [String(ms(14_067)), "0", "9"], at: 14_067 },
  ];
  const members = [
    member("n90", [
      { kind: "ELECTED", args: [String(ms(500)), "0", "7"], at: 500 },
      { kind: "STATE", args: ["disconnected", String(ms(1011)), "0"], at: 1011 },
      { kind: "REVOKED", args: [String(ms(1011)), "0", "disconnected"], at: 1011 },
      { kind: "STATE", args: ["expired", String(ms(3668)), "0"], at: 3668 },
      { kind: "EXPIRED", args: [String(ms(3668)), "0"], at: 3668 },
    ]),
    member("n92", n92),
  ];
  return record(members, [action], 20_000);
}

describe("chaos analysis: a failover after the ZK leader was killed", () => {
  it("is timed from the survivors seen serving when no participant saw the quorum return", () => {
    const f = analyze(run({ quorumAt: 11_800 }));
    assert.deepEqual(f.slow, []);
    assert.deepEqual(f.latencyMs["server:quorum"], [10_800]);
    assert.deepEqual(f.latencyMs["server:leader"], [2267]);
  });

  it("is timed from a respawn's first connect when that came before the harness saw the survivors", () => {
    const f = analyze(run({ quorumAt: 12_100, firstConnectAt: 11_900 }));
    assert.deepEqual(f.latencyMs["server:quorum"], [10_900]);
    assert.deepEqual(f.latencyMs["server:leader"], [2167]);
  });

  it("without either sign is timed from the kill, and over its bound says where the time went", () => {
    const f = analyze(run({}));
    assert.equal(f.slow.length, 1);
    assert.match(f.slow[0]!, /^#189 server of n90 \(server 3, leader\) at .*: next leader after 13067 ms; n90: STATE disconnected/);
    const late = analyze(run({ quorumAt: 9000 }));
    assert.deepEqual(late.slow.length, 1, "a bound is still a bound: 5067 ms from the quorum's return");
    assert.match(late.slow[0]!, /next leader after 5067 ms \(survivors serving @/);
  });
});
