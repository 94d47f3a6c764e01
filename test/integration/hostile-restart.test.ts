// The server process dies (kill -9) with thousands of requests in flight and comes back within the
// session timeout: every request settles (CONNECTIONLOSS or its result, never a hang), the client
// resumes the same session on the restarted server, and its ephemeral node and watches are intact.
//
// The client reaches the server through a fault proxy that refuses connections (accepts and closes at
// once) from the kill until the restarted server answers `ruok` and `srvr` shows its mode. A restarting
// server listens on its client port before its database is loaded, and a connection it closes in that
// window can throw in the server's close path and never be closed (ZOOKEEPER-5051): the client then waits
// its whole per-host connect timeout (the 20 s session timeout, as the Java client does) on a dead link,
// and the session expires. Seen under Bun, whose reconnects landed in that window about 1 run in 7.
// The session timeout is the server's maximum (40 s at tickTime 2000): on a loaded machine the JVM took
// more than the 26.7 s a 20 s session allows (4/3 of it, client-side expiry) from kill to serving.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { CreateMode, EventType, ZooKeeper, ZooKeeperError, type WatchedEvent } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { settle, trackUnhandled, until } from "../stress/helpers.ts";

describe("server killed and restarted under load", () => {
  let server: ZkServer;
  let proxy: FaultProxy;
  const root = `/hostile-restart-${randomUUID()}`;

  beforeAll(async () => {
    server = await startStandalone();
    proxy = await startFaultProxy("127.0.0.1", server.clientPort);
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  it("kill -9 with 5,000 requests in flight, restart: all settle, same session, ephemeral and watch intact", async () => {
    const unhandled = trackUnhandled();
    const zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 40_000 });
    try {
      await zk.create(root);
      const eph = await zk.create(`${root}/eph`, "e", { mode: CreateMode.EPHEMERAL });
      const watched = await zk.create(`${root}/watched`, "v0");
      const events: WatchedEvent[] = [];
      await zk.getData(watched, (e) => events.push(e));
      const sessionId = zk.sessionId;

      let done = 0;
      const calls = Array.from({ length: 5000 }, (_, i) => {
        const p: Promise<unknown> = i % 2 ? zk.getData(eph) : zk.create(`${root}/s-`, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
        return settle(p.finally(() => done++));
      });
      // Kill mid-stream: some replies have arrived, most requests are still in flight.
      await until("the first replies", () => done >= 100, 30_000, 1);
      proxy.refuse(true); // no reconnect reaches the server until it serves again
      await server.kill("SIGKILL");
      const t0 = performance.now();
      const killedAt = t0;
      const outcomes = await Promise.all(calls);
      const settledMs = performance.now() - t0;
      const lost = outcomes.filter((o) => !o.ok);
      for (const o of lost) {
        const e = (o as { error: unknown }).error;
        assert.ok(e instanceof ZooKeeperError && e.codeName === "CONNECTIONLOSS", String(e));
      }
      process.stdout.write(`restart: ${outcomes.length - lost.length} resolved, ${lost.length} CONNECTIONLOSS, all settled ${settledMs.toFixed(0)} ms after the kill\n`);
      assert.ok(lost.length > 0, "the kill should catch requests in flight");

      await server.start();
      const ruok = () => server.fourLetter("ruok").catch(() => "");
      await until("the restarted server serving (ruok, srvr)", async () => (await ruok()) === "imok" && (await server.mode()) !== null, 30_000, 100);
      proxy.refuse(false);
      const servingMs = performance.now() - killedAt;
      await until("reconnected to the restarted server", () => zk.state === "connected", 30_000).catch((e: Error) => {
        throw new Error(`${e.message} (client state ${zk.state}; kill to serving ${servingMs.toFixed(0)} ms); server log:\n${server.logTail(30)}`);
      });
      process.stdout.write(`restart: kill to serving ${servingMs.toFixed(0)} ms, reconnected ${(performance.now() - killedAt).toFixed(0)} ms after the kill\n`);
      assert.equal(zk.sessionId, sessionId, "the restarted server restored the session from its log");
      const stat = await zk.exists(eph);
      assert.ok(stat, "ephemeral kept");
      assert.equal(stat.ephemeralOwner, sessionId);
      // Every create that resolved is there; those that failed may or may not have been applied.
      const created = new Set(outcomes.filter((o, i) => o.ok && i % 2 === 0).map((o) => (o as { value: unknown }).value as string));
      const children = new Set((await zk.getChildren(root)).map((c) => `${root}/${c}`));
      for (const p of created) assert.ok(children.has(p), `${p} resolved but is missing after the restart`);

      const other = await ZooKeeper.connect(server.connectString);
      await other.setData(watched, "v1");
      await other.close();
      await until("the watch set before the kill fired", () => events.length > 0, 10_000);
      assert.deepEqual(events.map((e) => e.type), [EventType.NodeDataChanged]);
      assert.deepEqual(unhandled.reasons, []);
    } finally {
      await zk.close();
      unhandled.stop();
    }
  }, 180_000);
});
