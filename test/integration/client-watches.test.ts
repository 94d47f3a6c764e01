// Watches against a real server: one-shot watches fire exactly once with the right type and path;
// persistent and recursive watches fire for every change; removeWatches stops them; the async
// iterator; chroot in events; throwing watchers; re-registration after a reconnect (fault proxy).
import { describe, it, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { SharedSessions, type EventShape, recorder, rejectsWith, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { itFrom } from "../support/servers/zk-line.ts";
import { AddWatchMode, CreateMode, EventType, KeeperState, WatcherType, ZooKeeper } from "../../src/index.ts";
import type { WatchedEvent } from "../../src/index.ts";

const ev = (type: EventType, path: string): EventShape => ({ type, state: KeeperState.SyncConnected, path });

describe("client watches (real server)", () => {
  const sessions = new SharedSessions();
  let zk: ZooKeeper;
  let other: ZooKeeper;
  const root = uniqueRoot("watch");
  sessions.hooks(async () => removeRoot(await sessions.client(), root)); // the run's nodes are all below root (the chroot client's too)

  beforeAll(async () => {
    zk = await sessions.client();
    other = await sessions.client();
    await zk.create(root);
  });

  // A sync through the watching client: every notification for earlier changes precedes its reply.
  const settle = async (): Promise<void> => {
    await zk.sync("/");
    await zk.exists("/");
  };

  it("getData watch fires NodeDataChanged exactly once", async () => {
    const p = `${root}/data`;
    await zk.create(p, "a");
    const r = recorder();
    await zk.getData(p, r.watcher);
    await other.setData(p, "b");
    await other.setData(p, "c");
    await settle();
    assert.deepEqual(r.events, [ev(EventType.NodeDataChanged, p)]);
  }, 60_000);

  it("exists watch on a missing node fires NodeCreated once; on a node, NodeDeleted", async () => {
    const p = `${root}/later`;
    const r = recorder();
    assert.equal(await zk.exists(p, r.watcher), null);
    await other.create(p);
    await other.setData(p, "x");
    await settle();
    assert.deepEqual(r.events, [ev(EventType.NodeCreated, p)]);
    const r2 = recorder();
    assert.ok(await zk.exists(p, r2.watcher));
    await other.delete(p);
    await settle();
    assert.deepEqual(r2.events, [ev(EventType.NodeDeleted, p)]);
  }, 60_000);

  it("child watch fires NodeChildrenChanged once; a deleted parent fires NodeDeleted", async () => {
    const p = `${root}/kids`;
    await zk.create(p);
    const r = recorder();
    assert.deepEqual(await zk.getChildren(p, r.watcher), []);
    await other.create(`${p}/a`);
    await other.create(`${p}/b`);
    await settle();
    assert.deepEqual(r.events, [ev(EventType.NodeChildrenChanged, p)]);
    const r2 = recorder();
    const d = recorder();
    await zk.getChildrenWithStat(p, r2.watcher);
    await zk.getData(p, d.watcher);
    await other.delete(`${p}/a`);
    await settle();
    assert.deepEqual(r2.events, [ev(EventType.NodeChildrenChanged, p)]);
    const r3 = recorder();
    await zk.getChildren(p, r3.watcher);
    await other.delete(`${p}/b`);
    await settle();
    const r4 = recorder();
    await zk.getChildren(p, r4.watcher);
    await other.delete(p);
    await settle();
    assert.deepEqual(r4.events, [ev(EventType.NodeDeleted, p)]);
    assert.deepEqual(d.events, [ev(EventType.NodeDeleted, p)]);
  }, 60_000);

  it("one watcher registered twice on a path is called once per event", async () => {
    const p = `${root}/twice`;
    await zk.create(p);
    const r = recorder();
    await zk.getData(p, r.watcher);
    await zk.exists(p, r.watcher);
    await other.setData(p, "x");
    await settle();
    assert.deepEqual(r.events, [ev(EventType.NodeDataChanged, p)]);
  }, 60_000);

  itFrom("3.6", "persistent watch fires for every data and child change until removed", async () => {
    const p = `${root}/pers`;
    await zk.create(p);
    const r = recorder();
    await zk.addWatch(p, AddWatchMode.PERSISTENT, r.watcher);
    await other.setData(p, "1");
    await other.setData(p, "2");
    await other.create(`${p}/c`);
    await other.create(`${p}/c/deep`); // not a child of p: no event
    await settle();
    assert.deepEqual(r.events, [ev(EventType.NodeDataChanged, p), ev(EventType.NodeDataChanged, p), ev(EventType.NodeChildrenChanged, p)]);
    await zk.removeWatches(p, r.watcher, WatcherType.Any);
    await settle();
    assert.deepEqual(r.events.at(-1), ev(EventType.PersistentWatchRemoved, p));
    const n = r.events.length;
    await other.setData(p, "3");
    await settle();
    assert.equal(r.events.length, n, "no events after removeWatches");
  }, 60_000);

  itFrom("3.6", "persistent-recursive watch fires for the node and every descendant, never NodeChildrenChanged", async () => {
    const p = `${root}/rec`;
    await zk.create(p);
    const r = recorder();
    await zk.addWatch(p, AddWatchMode.PERSISTENT_RECURSIVE, r.watcher);
    await other.create(`${p}/a`);
    await other.create(`${p}/a/b`);
    await other.setData(`${p}/a/b`, "x");
    await other.delete(`${p}/a/b`);
    await other.setData(p, "y");
    await settle();
    assert.deepEqual(r.events, [
      ev(EventType.NodeCreated, `${p}/a`),
      ev(EventType.NodeCreated, `${p}/a/b`),
      ev(EventType.NodeDataChanged, `${p}/a/b`),
      ev(EventType.NodeDeleted, `${p}/a/b`),
      ev(EventType.NodeDataChanged, p),
    ]);
    await zk.removeAllWatches(p, WatcherType.Any);
    await other.create(`${p}/after`);
    await settle();
    assert.equal(r.events.filter((e) => e.type !== EventType.PersistentWatchRemoved).length, 5, "no events after removeAllWatches");
  }, 60_000);

  itFrom("3.5", "removeWatches of a one-shot watcher stops it and reports DataWatchRemoved / ChildWatchRemoved", async () => {
    const p = `${root}/rm`;
    await zk.create(p);
    const d = recorder();
    const c = recorder();
    const keep = recorder();
    await zk.getData(p, d.watcher);
    await zk.getData(p, keep.watcher);
    await zk.getChildren(p, c.watcher);
    await zk.removeWatches(p, d.watcher, WatcherType.Data);
    await zk.removeWatches(p, c.watcher, WatcherType.Children);
    await rejectsWith(zk.removeWatches(p, d.watcher, WatcherType.Data), "NOWATCHER");
    await other.setData(p, "x");
    await other.create(`${p}/k`);
    await settle();
    assert.deepEqual(d.events, [ev(EventType.DataWatchRemoved, p)]);
    assert.deepEqual(c.events, [ev(EventType.ChildWatchRemoved, p)]);
    assert.deepEqual(keep.events, [ev(EventType.NodeDataChanged, p)], "the other watcher on the path still fires");
    await rejectsWith(zk.removeAllWatches(`${root}/none`, WatcherType.Any), "NOWATCHER");
  }, 60_000);

  itFrom("3.6", "watch() iterates over a persistent watch and removes it when the loop ends", async () => {
    const p = `${root}/iter`;
    await zk.create(p);
    const seen: WatchedEvent[] = [];
    const loop = (async () => {
      for await (const e of zk.watch(p, { recursive: true })) {
        seen.push(e);
        if (seen.length === 3) break;
      }
    })();
    await zk.exists(p); // the loop's addWatch went out first on this session, and replies come in order
    await other.create(`${p}/x`);
    await other.setData(`${p}/x`, "1");
    await other.delete(`${p}/x`);
    await loop;
    assert.deepEqual(seen.map((e) => e.type), [EventType.NodeCreated, EventType.NodeDataChanged, EventType.NodeDeleted]);
    assert.deepEqual(seen.map((e) => e.path), [`${p}/x`, `${p}/x`, `${p}/x`]);
    // ended loop removed the watch: removing it again finds nothing
    await rejectsWith(zk.removeAllWatches(p, WatcherType.Any), "NOWATCHER");
  }, 60_000);

  itFrom("3.6", "watch() stops when its signal aborts", async () => {
    const p = `${root}/abort`;
    await zk.create(p);
    const ac = new AbortController();
    const seen: WatchedEvent[] = [];
    const loop = (async () => {
      for await (const e of zk.watch(p, { signal: ac.signal })) seen.push(e);
    })();
    await zk.exists(p); // the loop's addWatch went out first on this session, and replies come in order
    await other.setData(p, "1");
    await until("one event", () => seen.length === 1);
    ac.abort();
    await loop;
    await other.setData(p, "2");
    await settle();
    assert.equal(seen.length, 1);
  }, 60_000);

  itFrom("3.6", "strips the chroot from event paths", async () => {
    const c = await sessions.client({ chroot: root });
    await c.create("/cr");
    const r = recorder();
    const rc = recorder();
    await c.getData("/cr", r.watcher);
    await c.addWatch("/", AddWatchMode.PERSISTENT_RECURSIVE, rc.watcher);
    await other.setData(`${root}/cr`, "x");
    await c.sync("/");
    await until("events", () => r.events.length === 1 && rc.events.length === 1);
    assert.deepEqual(r.events, [ev(EventType.NodeDataChanged, "/cr")]);
    assert.deepEqual(rc.events, [ev(EventType.NodeDataChanged, "/cr")]);
  }, 60_000);

  it("a watcher or state listener that throws does not break the client", async () => {
    const p = `${root}/throw`;
    await zk.create(p);
    const after = recorder();
    await zk.getData(p, () => {
      throw new Error("watcher boom");
    });
    await zk.getData(p, after.watcher);
    const unhandled: unknown[] = [];
    const onErr = (e: unknown): void => void unhandled.push(e);
    process.on("uncaughtException", onErr);
    try {
      await other.setData(p, "x");
      await settle();
      assert.deepEqual(after.events, [ev(EventType.NodeDataChanged, p)]);
      assert.ok(await zk.exists(p));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off("uncaughtException", onErr);
    }
  }, 60_000);

  it("close() gives every remaining watcher a Closed event", async () => {
    const c = await ZooKeeper.connect(sessions.connectString, { sessionTimeout: 10_000 });
    const r = recorder();
    await c.exists(`${root}/never`, r.watcher);
    await c.close();
    await until("the Closed event", () => r.events.length > 0);
    assert.deepEqual(r.events, [{ type: EventType.None, state: KeeperState.Closed, path: null }]);
  }, 60_000);

  itFrom("3.6", "re-registers every kind of watch after a reconnect; changes made meanwhile still fire", async () => {
    const proxy = await sessions.proxy();
    const c = await sessions.client({ connectString: proxy.connectString });
    const p = `${root}/re`;
    await other.create(p);
    await other.create(`${p}/gone`);
    const data = recorder();
    const exist = recorder();
    const child = recorder();
    const gone = recorder();
    const pers = recorder();
    const rec = recorder();
    const quiet = recorder();
    await c.getData(p, data.watcher);
    await c.exists(`${p}/new`, exist.watcher);
    await c.getChildren(p, child.watcher);
    await c.getData(`${p}/gone`, gone.watcher);
    await c.addWatch(p, AddWatchMode.PERSISTENT, pers.watcher);
    await c.addWatch(p, AddWatchMode.PERSISTENT_RECURSIVE, rec.watcher);
    await other.create(`${p}/quiet`);
    await c.getData(`${p}/quiet`, quiet.watcher);
    const states: string[] = [];
    c.on("state", (s) => states.push(s));
    proxy.refuse(true);
    proxy.cut();
    await until("disconnected", () => c.state === "disconnected");
    await other.setData(p, "changed");
    await other.create(`${p}/new`);
    await other.delete(`${p}/gone`);
    proxy.refuse(false);
    await until("reconnected", () => c.state === "connected", 15_000);
    await c.sync("/");
    await until("catch-up events", () => data.events.length === 1 && exist.events.length === 1 && child.events.length === 1 && gone.events.length === 1);
    assert.deepEqual(data.events, [ev(EventType.NodeDataChanged, p)]);
    assert.deepEqual(exist.events, [ev(EventType.NodeCreated, `${p}/new`)]);
    assert.deepEqual(child.events, [ev(EventType.NodeChildrenChanged, p)]);
    assert.deepEqual(gone.events, [ev(EventType.NodeDeleted, `${p}/gone`)]);
    assert.deepEqual(quiet.events, [], "an unchanged node's watch is re-registered silently");
    // Persistent watches are re-registered silently; like the Java client's watch manager, the
    // catch-up notifications for p (from the one-shot watches) also reach p's persistent watcher.
    await other.setData(p, "again");
    await other.setData(`${p}/quiet`, "q");
    await c.sync("/");
    await until("persistent events after reconnect", () => pers.events.length >= 3 && rec.events.some((e) => e.path === `${p}/quiet`));
    // ZooKeeper orders a reconnect's catch-up events only before later changes, not among
    // themselves (3.8 sends p's data change first, 3.9 its child change: ZOOKEEPER-4466).
    assert.equal(pers.events.length, 3);
    const byType = (a: EventShape, b: EventShape): number => a.type - b.type;
    assert.deepEqual(pers.events.slice(0, 2).sort(byType), [ev(EventType.NodeDataChanged, p), ev(EventType.NodeChildrenChanged, p)].sort(byType));
    assert.deepEqual(pers.events[2], ev(EventType.NodeDataChanged, p), "the change made after the reconnect comes last");
    assert.deepEqual(quiet.events, [ev(EventType.NodeDataChanged, `${p}/quiet`)]);
    assert.deepEqual(states, ["disconnected", "connected"]);
  }, 60_000);
  it("re-registers more than 128 K chars of watches (several SetWatches batches) after a reconnect", async () => {
    const proxy = await sessions.proxy();
    const c = await sessions.client({ connectString: proxy.connectString });
    const base = `${root}/many`;
    await other.create(base);
    const name = (i: number): string => `${base}/${String(i).padStart(5, "0")}-${"w".repeat(180)}`;
    const n = 1500; // about 300 K path chars: three batches
    await Promise.all(Array.from({ length: n }, (_, i) => other.create(name(i))));
    const fired = new Set<string>();
    await Promise.all(Array.from({ length: n }, (_, i) => c.getData(name(i), (e) => fired.add(e.path!))));
    proxy.refuse(true);
    proxy.cut();
    await until("disconnected", () => c.state === "disconnected");
    await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 === 0 ? other.setData(name(i), "x") : Promise.resolve())));
    proxy.refuse(false);
    await until("reconnected", () => c.state === "connected", 15_000);
    await until("catch-up events for every changed node", () => fired.size === n / 2, 15_000);
    // the unchanged half was re-registered: changing them now fires too
    await Promise.all(Array.from({ length: n }, (_, i) => (i % 2 === 1 ? other.setData(name(i), "y") : Promise.resolve())));
    await until("events for the other half", () => fired.size === n, 15_000);
  }, 60_000);
});
