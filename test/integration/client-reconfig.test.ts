// getConfig / reconfig / updateServerList on a 3-server ensemble with dynamic membership (3.5+):
// a fourth server joins and server 1 leaves while clients run; a watcher on the config sees each
// change; a client whose only host was server 1 refreshes its host list from the new config and
// keeps its session and working after server 1 is gone.
import { afterAll, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import console from "node:console";
import { CreateMode, EventType, ZooKeeper } from "../../src/index.ts";
import type { WatchedEvent } from "../../src/index.ts";
import { ReconfigEnsemble } from "../support/servers/zk-reconfig.ts";
import { describeFrom, itFrom } from "../support/servers/zk-line.ts";
import { uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

describeFrom("3.5", "reconfig on a dynamic ensemble", () => {
  let ens: ReconfigEnsemble;
  const clients: ZooKeeper[] = [];
  const root = uniqueRoot("reconfig");

  beforeAll(async () => {
    ens = await ReconfigEnsemble.start(3);
  });

  afterAll(async () => {
    for (const c of clients) await c.close();
    await ens?.close();
  });

  itFrom("3.5", "adds a fourth server and removes one while clients run; watchers and host lists follow", async () => {
    // admin manages by hand what it tests (getConfig, reconfig): with the ensemble tracked (the default), the join
    // of server 4 rebalances it onto the new server one time in four, and a call in flight then fails CONNECTIONLOSS
    // (fresh-clone CI of a44b459: the getConfig after the join), as with the Java client's updateServerList. The
    // tracker has its own tests (ensemble-tracker.test.ts).
    const admin = await ZooKeeper.connect(ens.connectString([1, 2, 3]), { sessionTimeout: 10_000, trackEnsemble: false });
    const lone = await ZooKeeper.connect(ens.connectString([1]), { sessionTimeout: 10_000 });
    clients.push(admin, lone);
    await admin.create(root);
    await lone.create(`${root}/lone`, null, { mode: CreateMode.EPHEMERAL });
    const seen: WatchedEvent[] = [];
    const first = await admin.getConfig((e) => seen.push(e));
    assert.deepEqual(first.servers.map((s) => s.id), [1, 2, 3]);

    const fourth = await ens.addServer(4, first.servers.map((s) => ens.members.get(s.id)!.spec));
    const added = await admin.reconfig({ joining: fourth.spec, fromConfig: first.version });
    assert.deepEqual(added.servers.map((s) => s.id).sort(), [1, 2, 3, 4]);
    await until("the config watcher saw the join", () => seen.length === 1);
    assert.equal(seen[0]!.type, EventType.NodeDataChanged);
    assert.equal(seen[0]!.path, "/zookeeper/config");

    const now = await admin.getConfig((e) => seen.push(e));
    const removed = await admin.reconfig({ leaving: [1], fromConfig: now.version });
    assert.deepEqual(removed.servers.map((s) => s.id).sort(), [2, 3, 4]);
    await until("the config watcher saw the leave", () => seen.length === 2);

    // The client that only knew server 1 takes its host list from the new config. Its server may not have
    // applied the leave yet (a follower's reads can lag; seen under load: the old list came back, server 1
    // still in it, so the client never moved): sync first, as any client reading the config must.
    const id = lone.sessionId;
    await lone.sync("/zookeeper/config");
    const { connectString } = await lone.getConfig();
    assert.ok(!connectString.split(",").includes(ens.members.get(1)!.server.connectString), `server 1 has left the config lone reads: ${connectString}`);
    lone.updateServerList(connectString);
    await until("lone moved off server 1", () => lone.state === "connected" && lone.remoteAddress !== ens.members.get(1)!.server.connectString);
    await ens.members.get(1)!.server.close();
    await lone.create(`${root}/after`);
    assert.equal(lone.sessionId, id);
    assert.ok(await admin.exists(`${root}/lone`), "its ephemeral lived on");
    console.log(`[reconfig] ZooKeeper: config ${first.version?.toString(16)} -> +4 ${added.version?.toString(16)} -> -1 ${removed.version?.toString(16)}; lone client on ${lone.remoteAddress}`);
  }, 120_000);
});
