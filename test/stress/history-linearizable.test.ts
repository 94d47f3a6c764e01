// The long variant of test/integration/history-linearizable.test.ts: 5 clients, every fault four times,
// the leader SIGSTOPped 1.5 s, 4 s and 8 s (past the clients' read timeout: they move to another server);
// 3 lockers and 3 electors (Node, Bun, Deno) holding in turns through fault proxies of their own.
import console from "node:console";
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { startEnsemble, type ZkEnsemble } from "../support/servers/zk-server.ts";
import { FAULTS, plantHoldViolations, plantMislabels, runHistory } from "../support/chaos/history-run.ts";
import { checkLinearizable, registerModel } from "../support/chaos/linearizability.ts";
import { uniqueRoot } from "../support/sessions.ts";

const PASSES = Number(process.env.HISTORY_PASSES ?? 4);

describe("long history of reads, writes and cas under faults (3 servers)", () => {
  let ens: ZkEnsemble | undefined;
  afterAll(async () => {
    await ens?.close();
  }, 60_000);

  it(`every call settles and every key's history is linearizable (${PASSES} passes through the faults)`, async () => {
    ens = await startEnsemble();
    const seed = Number(process.env.HISTORY_SEED ?? Date.now() % 1_000_000);
    const run = await runHistory(ens, {
      root: uniqueRoot("history-long"), keys: ["a", "b", "c"], clients: 5, lockers: ["node", "bun", "deno"], electors: ["node", "bun", "deno"], rounds: PASSES * FAULTS.length, steadyMs: 2000, stopMs: [1500, 4000, 8000], seed,
    });
    console.log(`[history-long] faults: ${run.faults.join("; ")}`);
    console.log(`[history-long] ${run.summary}`);
    console.log(`[history-long] ${run.syncLine}`);
    console.log(`[history-long] ${run.lock.line}`);
    console.log(`[history-long] ${run.election.line}`);
    assert.deepEqual(run.hangs, [], "every call settled");
    assert.equal(run.result.verdict, "linearizable", run.result.message);
    for (const kind of ["lock", "election"] as const) {
      assert.deepEqual(run[kind].problems, [], `${kind} holds exclusive, guarded writes in token order`);
      assert.ok(run[kind].holds.length > 0, `the ${kind} was held`);
      for (const p of plantHoldViolations(run[kind])) assert.ok(p.problems.length > 0, `planted ${p.what} (${kind}) not caught`);
    }
    for (const p of plantMislabels(run.history)) {
      const caught = checkLinearizable(p.history, registerModel(), { maxMs: 60_000 });
      assert.equal(caught.verdict, "violation", `planted (${p.what}) not caught`);
    }
  }, 30 * 60_000);
});
