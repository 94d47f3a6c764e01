// 500 sessions in one process against one real server (maxClientCnxns=0), each with a data watch on
// the same node: one change fires all 500; all close cleanly and the server sees them go.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { EventType, ZooKeeper, type WatchedEvent } from "../../src/index.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { memory, until } from "./helpers.ts";

const N = 500;

async function connectionCount(server: ZkServer): Promise<number> {
  const m = /Connections:\s*(\d+)/.exec(await server.fourLetter("srvr"));
  return m ? Number(m[1]) : -1;
}

describe(`${N} sessions in one process`, () => {
  let server: ZkServer;
  const clients: ZooKeeper[] = [];

  beforeAll(async () => {
    // The harness already sets maxClientCnxns=0; restated because this test depends on it.
    server = await startStandalone({ config: { maxClientCnxns: "0" }, jvmArgs: ["-Xmx256m"] });
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await server?.close();
  });

  it("each with a watch: one change fires all of them; all close cleanly", async () => {
    const before = memory("sessions: before");
    const setup = await ZooKeeper.connect(server.connectString);
    await setup.create("/shared", "v0");
    const t0 = performance.now();
    // Connect in waves so a 2-core machine's server is not handed 500 handshakes at once.
    for (let from = 0; from < N; from += 50) {
      clients.push(...(await Promise.all(Array.from({ length: 50 }, () => ZooKeeper.connect(server.connectString, { sessionTimeout: 30_000 })))));
    }
    const connectMs = performance.now() - t0;
    assert.equal(new Set(clients.map((c) => c.sessionId)).size, N, "distinct sessions");
    const events: WatchedEvent[][] = clients.map(() => []);
    await Promise.all(clients.map((c, i) => c.getData("/shared", (e) => events[i]!.push(e))));
    const open = memory(`sessions: ${N} connected in ${connectMs.toFixed(0)} ms, each with a watch`);
    process.stdout.write(`sessions: ≈${((open.rssMB - before.rssMB) * 1024 / N).toFixed(0)} KB RSS per session\n`);
    assert.ok((await connectionCount(server)) >= N, "the server counts every connection");

    await setup.setData("/shared", "v1");
    await until(`all ${N} watches fired`, () => events.every((e) => e.length > 0), 30_000, 50);
    for (const e of events) assert.deepEqual(e, [{ type: EventType.NodeDataChanged, typeName: "NodeDataChanged", state: 3, stateName: "SyncConnected", path: "/shared", zxid: undefined }]);

    // Everyone still works after the storm.
    const reads = await Promise.all(clients.map((c) => c.getData("/shared")));
    assert.ok(reads.every((r) => new TextDecoder().decode(r.data!) === "v1"));

    const t1 = performance.now();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await setup.close();
    process.stdout.write(`sessions: ${N} closed in ${(performance.now() - t1).toFixed(0)} ms\n`);
    await until("the server sees them go", async () => (await connectionCount(server)) <= 1, 20_000, 200);
    memory("sessions: after close");
  }, 300_000);
});
