// The model checked against a real server: public-API scenarios, identical outcome logs. The model
// plays the real server's line (the harness's server is 3.8: same feature probes, same notification
// zxids), so the comparison is like for like; every difference found is a model bug fixed in the model.
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { ZooKeeper } from "../../src/index.ts";
import { scenario, type Connect } from "./scenario.ts";
import { scenarioOps, scenarioSettings } from "./scenario-ops.ts";
import { underSim } from "./harness.ts";
import { onSession, removeRoot, ttlNodesOff, uniqueRoot } from "../support/sessions.ts";

const scenarios: Array<[string, (connect: Connect, root: string) => Promise<string[]>, number]> = [
  ["ops, watches, ordering, multi, ephemerals", scenario, 30],
  ["ACLs, 3.6+ ops, watch removal, persistent watches, recipes", scenarioOps, 40],
];

describe("model vs real server", () => {
  for (const [name, run, min] of scenarios) {
    it(`${name}: the same outcomes on both`, async () => {
      const { connectString } = await sharedServer();
      const root = uniqueRoot("sim");
      // The model has TTL nodes; a server given by ZK_CONNECT may not (the test servers do): the scenario leaves its
      // TTL create out then, on both, saying so.
      const ttlOff = await onSession(connectString, async (zk) => {
        const probe = uniqueRoot("sim-ttl");
        await zk.create(probe);
        try {
          return await ttlNodesOff(zk, probe);
        } finally {
          await removeRoot(zk, probe);
        }
      });
      scenarioSettings.ttl = ttlOff === null;
      if (ttlOff !== null) console.log(`[sim] ${name}: the scenario's TTL create is left out: ${ttlOff}`);
      const real = await run(() => ZooKeeper.connect(connectString, { sessionTimeout: 4000 }), root).finally(() =>
        onSession(connectString, (zk) => removeRoot(zk, root)), // the scenario's nodes are all below root
      );
      const line = real.includes("generation: \"3.9+\"") ? "3.9" : "3.8";
      const sim = await underSim(1, (connect) => run(() => connect(), root), 120_000, line);
      if (process.env.SIM_SHOW) console.log(real.map((r, i) => `${r === sim[i] ? "  " : "!!"} ${r}${r === sim[i] ? "" : `\n   model: ${sim[i]}`}`).join("\n"));
      assert.deepEqual(sim, real);
      assert.ok(real.length > min, `the scenario ran to its end (${real.length} outcomes)`);
    }, 120_000);
  }
});
