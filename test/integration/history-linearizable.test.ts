// Jepsen-style history check against a real 3-server ensemble (test/support/chaos/history-run.ts): 4 clients
// in one history (2 in this process, 1 a Bun and 1 a Deno child process, test/support/chaos/history-participant.ts),
// each through fault proxies of its own, read (getData { linearizable }), write and cas (through withRetry) 3 znodes
// while links are cut, reset, half-closed, blackholed, a setData reply is dropped, a follower is killed -9
// and restarted and the leader is SIGSTOPped (1.5 s, then 4 s: past syncLimit, a new election); each fault
// twice. Every call must settle, and every key's history must be linearizable
// (test/support/chaos/linearizability.ts). The same history with one outcome mislabelled must be rejected: the
// run is able to catch a client that reports a write as failed when it took effect. In the same run 3 lockers
// (Node, Bun, Deno processes) take a Lock in turns and 3 electors (the same) lead a LeaderElection in turns,
// each through fault proxies of its own (the link faults hit one of them each time as well): their holds,
// from their own logs, must never overlap, their fencing tokens must grow, the tokens they write through
// lock.transaction() / election.transaction() must never go back, and a planted overlap must be caught.
import console from "node:console";
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { startEnsemble, type ZkEnsemble } from "../support/servers/zk-server.ts";
import { FAULTS, plantHoldViolations, plantMislabels, runHistory } from "../support/chaos/history-run.ts";
import { checkLinearizable, registerModel } from "../support/chaos/linearizability.ts";
import { uniqueRoot } from "../support/sessions.ts";

describe("history of reads, writes and cas under faults (3 servers)", () => {
  let ens: ZkEnsemble | undefined;
  afterAll(async () => {
    await ens?.close();
  }, 60_000);

  it("every call settles, every key's history is linearizable, a planted mislabel is caught", async () => {
    ens = await startEnsemble();
    const seed = Number(process.env.HISTORY_SEED ?? Date.now() % 1_000_000);
    const run = await runHistory(ens, {
      root: uniqueRoot("history"), keys: ["a", "b", "c"], clients: 2, children: ["bun", "deno"], lockers: ["node", "bun", "deno"], electors: ["node", "bun", "deno"], rounds: 2 * FAULTS.length, steadyMs: 1500, stopMs: [1500, 4000], seed,
    });
    console.log(`[history] faults: ${run.faults.join("; ")}`);
    console.log(`[history] ${run.summary}`);
    console.log(`[history] ${run.syncLine}`);
    console.log(`[history] ${run.lock.line}`);
    console.log(`[history] ${run.election.line}`);
    assert.deepEqual(run.hangs, [], "every call settled");
    assert.equal(run.result.verdict, "linearizable", run.result.message);
    for (const kind of ["lock", "election"] as const) {
      const { problems, line, holds } = run[kind];
      assert.deepEqual(problems, [], `${kind} holds exclusive, guarded writes in token order`);
      assert.match(line, new RegExp(`^${kind}: [1-9]\\d* holds .* 0 overlaps, 0 problems$`), `the ${kind} was held, exclusively`);
      for (const id of [1, 2, 3].map((i) => `${kind[0]}${i}`)) assert.ok(holds.some((h) => h.holder === id), `${id} (Node, Bun, Deno) held the ${kind}`);
      const plants = plantHoldViolations(run[kind]);
      assert.equal(plants.length, 2, `the ${kind} changed hands (a hold and a guarded write to plant in)`);
      for (const p of plants) {
        console.log(`[history] planted ${p.what} (${kind}): ${p.problems.length} problems (${p.problems[0] ?? "none"})`);
        assert.ok(p.problems.length > 0, `planted ${p.what} (${kind}) not caught`);
      }
    }
    assert.ok(run.history.filter((op) => op.outcome === "ok").length > 200, "the workload made progress");
    for (const c of ["c1", "c2", "c3", "c4"]) assert.ok(run.history.filter((op) => op.client === c && op.outcome === "ok").length > 20, `${c} (in-process, Bun, Deno) took part`);

    const plants = plantMislabels(run.history);
    assert.equal(plants.length, 2, "a write read back and a read to plant mislabels in");
    for (const p of plants) {
      const t0 = performance.now();
      const caught = checkLinearizable(p.history, registerModel(), { maxMs: 30_000 });
      console.log(`[history] planted ${p.what}: verdict ${caught.verdict} (${(performance.now() - t0).toFixed(0)} ms)`);
      assert.equal(caught.verdict, "violation", `planted (${p.what}) not caught`);
      assert.match(caught.message, new RegExp(`^key ${p.key}: violation`));
    }
  }, 150_000);
});
