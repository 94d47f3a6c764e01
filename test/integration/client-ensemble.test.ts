// Failover in a real 3-server ensemble: kill -9 (and SIGSTOP) the server the client is connected
// to. The client must move to another server within its session, keep its ephemeral nodes, and a
// watch set before the failure must fire for a change another client made while it was moving.
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { startEnsemble, type ZkEnsemble, type ZkServer } from "../support/servers/zk-server.ts";
import { CreateMode, EventType, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { recorder } from "../support/sessions.ts";
import { hold, until } from "../support/wait.ts";

describe("client failover in an ensemble (real servers)", () => {
  let ensemble: ZkEnsemble;
  let starting: Promise<ZkEnsemble> | undefined;
  // Started by the first test rather than in beforeAll: Bun's node:test ignores hook timeouts (5 s cap).
  const ready = async (): Promise<void> => {
    ensemble = await (starting ??= startEnsemble());
  };

  afterAll(async () => {
    await ensemble?.close();
  }, 60_000);

  /** The server the client is connected to, found from its remote address. */
  const serverOf = (zk: ZooKeeper): ZkServer => {
    const remote = zk.remoteAddress;
    const s = ensemble.servers.find((x) => remote === `${x.host}:${x.clientPort}`);
    assert.ok(s, `no server matches ${remote}`);
    return s;
  };

  /** Retries a write through a client that may itself be caught in the election. */
  const retry = async <T>(fn: () => Promise<T>): Promise<T> => {
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (e) {
        if (!(e instanceof ZooKeeperError) || e.codeName !== "CONNECTIONLOSS" || i > 50) throw e;
        await hold(200);
      }
    }
  };

  const failover = async (how: "kill" | "pause", sessionTimeout: number): Promise<void> => {
    await ready();
    const zk = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout });
    const victim = serverOf(zk);
    const rest = ensemble.servers.filter((s) => s !== victim);
    const other = await ZooKeeper.connect(rest.map((s) => s.connectString).join(","), { sessionTimeout: 10_000 });
    try {
      const tag = `/${how}-${Date.now()}`;
      await zk.create(tag, "0");
      const eph = await zk.create(`${tag}-eph`, null, { mode: CreateMode.EPHEMERAL });
      const w = recorder();
      await zk.getData(tag, w.watcher);
      const id = zk.sessionId;
      const states: string[] = [];
      zk.on("state", (s) => states.push(s));
      const t0 = performance.now();
      if (how === "kill") await victim.kill("SIGKILL");
      else await victim.pause();
      // changed by another client while ours is moving
      await retry(() => other.setData(tag, "1"));
      await until("the client to notice", () => states.includes("disconnected"), 30_000);
      await until("the client to reconnect elsewhere", () => zk.state === "connected" && zk.remoteAddress !== null, 30_000);
      const moved = Math.round(performance.now() - t0);
      assert.notEqual(serverOf(zk), victim);
      assert.equal(zk.sessionId, id, "same session");
      assert.deepEqual(states, ["disconnected", "connected"]);
      await zk.sync("/");
      await until("the watch to fire", () => w.events.length > 0, 5000);
      assert.deepEqual(w.events, [{ type: EventType.NodeDataChanged, state: 3, path: tag }]);
      const owner = await retry(() => other.exists(eph));
      assert.equal(owner?.ephemeralOwner, id, "the ephemeral node survived the failover");
      assert.equal(new TextDecoder().decode((await zk.getData(tag)).data!), "1");
      process.stdout.write(`[client-ensemble] ${how}: moved from ${victim.connectString} to ${zk.remoteAddress} in ${moved} ms\n`);
    } finally {
      await zk.close();
      await other.close();
      if (how === "pause") await victim.resume();
      else await victim.start();
      await ensemble.waitForQuorum();
    }
  };

  it("kill -9 of the connected server: moves within the session, ephemerals survive, a watch fires", async () => {
    await failover("kill", 10_000);
  }, 120_000);

  it("SIGSTOP of the connected server: the read timeout moves the client, same guarantees", async () => {
    await failover("pause", 8000);
  }, 120_000);

  it("kill -9 of the leader specifically, while requests are in flight, none hangs", async () => {
    await ready();
    const leader = await ensemble.leader();
    const zk = await ZooKeeper.connect(leader.connectString + "," + ensemble.connectString, { sessionTimeout: 10_000 });
    try {
      // with the leader first in the list the client may still land elsewhere (hosts are shuffled): fine either way
      const calls = Array.from({ length: 300 }, (_, i) => zk.create(`/burst-${i}`).then(() => "ok", (e: ZooKeeperError) => e.codeName));
      await leader.kill("SIGKILL");
      const results = await Promise.all(calls);
      assert.ok(results.every((r) => r === "ok" || r === "CONNECTIONLOSS"), JSON.stringify([...new Set(results)]));
      await until("connected again", () => zk.state === "connected", 30_000);
      const created = await retry(() => zk.getChildren("/"));
      const okCount = results.filter((r) => r === "ok").length;
      assert.ok(created.filter((c) => c.startsWith("burst-")).length >= okCount, "every acknowledged create exists");
    } finally {
      await zk.close();
      await leader.start();
      await ensemble.waitForQuorum();
    }
  }, 120_000);
});
