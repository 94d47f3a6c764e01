// The one listener-error policy (src/client/listeners.ts, docs/client.md "Listener errors") against a real server:
// a "state" listener, a watcher and recipe listeners ("elected", "revoked", "change", "lost") that throw
// leave the client's and the recipes' bookkeeping intact, the other listeners still run, and each error
// reaches the logger and the client's "listenerError" event (never an uncaught exception).
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ZooKeeper, type ListenerError, type Logger, type SessionState } from "../../src/index.ts";
import { GroupMember, LeaderElection, Lock } from "../../src/recipes/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { until } from "../support/wait.ts";
import { removeRoot } from "../support/sessions.ts";

const root = `/t-listener-errors-${randomUUID().slice(0, 8)}`;
let connect: string;

/** A client whose logger and "listenerError" event are recorded. */
async function client(): Promise<{ zk: ZooKeeper; reported: ListenerError[]; logged: string[] }> {
  const logged: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (m: string) => void logged.push(m) };
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000, logger });
  const reported: ListenerError[] = [];
  zk.on("listenerError", (i) => void reported.push(i));
  return { zk, reported, logged };
}

const boom = (what: string) => (): never => {
  throw new Error(what);
};

describe("listener errors: one policy for the client and the recipes", () => {
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown): void => void uncaught.push(e);
  let admin: ZooKeeper;
  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    admin = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await admin.create(root);
    process.on("uncaughtException", onUncaught);
  }, 60_000);
  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    if (admin) await removeRoot(admin, root);
    await admin?.close();
    assert.deepEqual(uncaught, []);
  });

  it("a throwing \"state\" listener: the next listener still sees the state, the error is logged and emitted", async () => {
    const { zk, reported, logged } = await client();
    const states: SessionState[] = [];
    zk.on("state", boom("state boom"));
    zk.on("state", (s) => void states.push(s));
    await zk.close();
    assert.deepEqual(states, ["closed"]);
    assert.equal(zk.state, "closed");
    assert.deepEqual(reported.map((r) => [r.source, r.event, (r.error as Error).message]), [["ZooKeeper", "state", "state boom"]]);
    assert.deepEqual(logged, ['zookeeper: a "state" listener threw: state boom']);
  }, 30_000);

  it("a throwing watcher: the other watchers fire, later watches still work, the error is reported", async () => {
    const { zk, reported } = await client();
    try {
      const p = `${root}/w`;
      await zk.create(p);
      const seen: string[] = [];
      await zk.getData(p, boom("watcher boom"));
      await zk.getData(p, (e) => void seen.push(`first ${e.path}`));
      await admin.setData(p, "1");
      await until("the second watcher", () => seen.length === 1, 5000);
      await zk.getData(p, (e) => void seen.push(`again ${e.path}`));
      await admin.setData(p, "2");
      await until("the re-armed watcher", () => seen.length === 2, 5000);
      assert.deepEqual(seen, [`first ${p}`, `again ${p}`]);
      assert.deepEqual(reported.map((r) => [r.source, r.event]), [["ZooKeeper", "watcher"]]);
    } finally {
      await zk.close();
    }
  }, 30_000);

  it("LeaderElection: throwing \"elected\"/\"revoked\" listeners leave the leadership bookkeeping right", async () => {
    const { zk, reported, logged } = await client();
    try {
      const e = new LeaderElection(zk, `${root}/election`, { id: "a" });
      const events: string[] = [];
      e.on("elected", boom("elected boom"));
      e.on("elected", () => void events.push("elected"));
      e.on("revoked", boom("revoked boom"));
      e.on("revoked", (why) => void events.push(`revoked ${why}`));
      await e.start();
      await e.waitForLeadership({ timeout: 5000 });
      assert.equal(e.isLeader, true);
      await e.transaction().create(`${root}/fenced`).commit(); // still leading as far as the server is concerned
      await e.resign();
      await e.waitForLeadership({ timeout: 5000 }); // alone: elected again
      await e.close();
      assert.equal(e.isLeader, false);
      assert.deepEqual(events, ["elected", "revoked resigned", "elected", "revoked closed"]);
      assert.equal(await admin.getChildren(`${root}/election`).then((c) => c.length), 0);
      assert.deepEqual(reported.map((r) => `${r.source} ${r.event}`), ["LeaderElection elected", "LeaderElection revoked", "LeaderElection elected", "LeaderElection revoked"]);
      assert.equal(logged[0], 'zookeeper: a "elected" listener of LeaderElection threw: elected boom');
    } finally {
      await zk.close();
    }
  }, 30_000);

  it("GroupMember and Lock: a throwing \"change\" or \"lost\" listener does not stop later events or the cleanup", async () => {
    const { zk, reported } = await client();
    try {
      const g = new GroupMember(zk, `${root}/group`, { id: "a" });
      const lists: string[][] = [];
      g.on("change", boom("change boom"));
      g.on("change", (ms) => void lists.push(ms.map((m) => m.id)));
      await g.join();
      await until("our own join", () => lists.length === 1, 5000);
      await admin.create(`${root}/group/b`);
      await until("b's join", () => lists.length === 2, 5000);
      assert.deepEqual(lists, [["a"], ["a", "b"]]);

      const lock = new Lock(zk, `${root}/lock`);
      const lost: string[] = [];
      lock.on("lost", boom("lost boom"));
      lock.on("lost", (why) => void lost.push(why));
      await lock.acquire();
      await admin.delete(lock.nodePath!); // taken away by hand: "lost", then the lock is free again
      await until("lost", () => lost.length === 1, 5000);
      assert.deepEqual(lost, ["deleted"]);
      await until("the instance freed", () => lock.nodePath === null, 5000);
      await lock.acquire({ timeout: 5000 });
      assert.equal(lock.isHeld, true);
      await lock.release();
      await g.leave();
      const bySource = reported.map((r) => `${r.source} ${r.event}`);
      assert.deepEqual(bySource, ["GroupMember change", "GroupMember change", "Lock lost"]);
    } finally {
      await zk.close();
    }
  }, 30_000);
});
