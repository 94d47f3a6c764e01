// The model checked against a real server: one public-API scenario, identical outcome logs.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "../support/bdd.ts";
import { sharedServer } from "../support/zk-server.ts";
import { ZooKeeper } from "../../src/index.ts";
import { scenario } from "./scenario.ts";
import { underSim } from "./harness.ts";

describe("model vs real server", () => {
  it("the scenario gives the same outcomes on both", async () => {
    const { connectString } = await sharedServer();
    const root = `/t-sim-${randomUUID().slice(0, 8)}`;
    const real = await scenario(() => ZooKeeper.connect(connectString, { sessionTimeout: 4000 }), root);
    const sim = await underSim(1, (connect) => scenario(() => connect(), root));
    assert.deepEqual(sim, real);
    assert.ok(real.length > 30, `the scenario ran to its end (${real.length} outcomes)`);
  }, 120_000);
});
