// A watch set before a disconnect fires for a change made while disconnected, even when the reconnect's
// link is cut after any of the server's first frames (docs/session-states.md, "Priming a new connection").
// A frame-aware proxy forwards the server's first N frames of the new link whole and cuts it; the next
// link must still catch the watch up. Frames of that link, to a server seen before: 1 ConnectResponse,
// 2-3 the feature probes' replies (one probe on 3.4), then the catch-up notifications, then the
// SetWatches reply. Before the fix, N = 2 and N = 3 lost every one-shot watch whose node had changed.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { sharedServer } from "../support/servers/zk-server.ts";
import { startFaultProxy } from "../support/fakes/fault-proxy.ts";
import { itFrom } from "../support/servers/zk-line.ts";
import { AddWatchMode, EventType, KeeperState, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { type EventShape, recorder, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

const ev = (type: EventType, path: string): EventShape => ({ type, state: KeeperState.SyncConnected, path });
const FRAMES = [1, 2, 3, 4, 5, 6];

describe("watches across a reconnect cut after the server's N-th frame (real server, frame-aware proxy)", () => {
  let connect: string;
  let other: ZooKeeper;
  const root = uniqueRoot("rewatch");

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    other = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await other.create(root);
  });

  afterAll(async () => {
    if (other) await removeRoot(other, root); // the run's nodes are all below root
    await other?.close();
  });

  /** The first reply to a call of `c` after the cut: it comes on a later link, after that link's catch-up notifications. */
  async function roundTripAfterCut(c: ZooKeeper): Promise<void> {
    for (;;) {
      try {
        await c.exists("/");
        return;
      } catch (e) {
        // sent on the link being cut, or while reconnecting: the call is not retried by the client
        if (!(e instanceof ZooKeeperError) || e.codeName !== "CONNECTIONLOSS") throw e;
        await until("connected again", () => c.state === "connected", 15_000);
      }
    }
  }

  async function scenario(n: number, persistent: boolean): Promise<void> {
    const [host, port] = connect.split(",")[0]!.split(":");
    const proxy = await startFaultProxy(host!, Number(port));
    // Connected once through the proxy: the server is now one seen before (probes in the SetWatches write).
    const c = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 10_000 });
    try {
      const base = `${root}/${persistent ? "p" : "o"}${n}`;
      await other.create(base);
      for (const name of ["data", "kids", "pers", "rec"]) await other.create(`${base}/${name}`);
      const data = recorder();
      const exist = recorder();
      const child = recorder();
      const pers = recorder();
      const rec = recorder();
      await c.getData(`${base}/data`, data.watcher);
      assert.equal(await c.exists(`${base}/new`, exist.watcher), null);
      await c.getChildren(`${base}/kids`, child.watcher);
      if (persistent) {
        await c.addWatch(`${base}/pers`, AddWatchMode.PERSISTENT, pers.watcher);
        await c.addWatch(`${base}/rec`, AddWatchMode.PERSISTENT_RECURSIVE, rec.watcher);
      }
      // Down, and kept down while another session changes every watched node.
      proxy.refuse(true);
      proxy.cut();
      await until("disconnected", () => c.state === "disconnected");
      await other.setData(`${base}/data`, "changed");
      await other.create(`${base}/new`);
      await other.create(`${base}/kids/k`);
      await other.setData(`${base}/pers`, "unseen");
      await other.create(`${base}/rec/unseen`);
      // The next link gets the server's first n frames, then is cut; the one after is left alone.
      const cut = proxy.cutAfterServerFrames(n);
      proxy.refuse(false);
      assert.equal(await cut, n, `the reconnect's link carried ${n} server frames before the cut`);
      await roundTripAfterCut(c);
      await until(`catch-up events after a cut at frame ${n}`, () => data.events.length + exist.events.length + child.events.length >= 3, 5_000).catch(() => {});
      assert.deepEqual(data.events, [ev(EventType.NodeDataChanged, `${base}/data`)], `getData watch, cut after frame ${n}`);
      assert.deepEqual(exist.events, [ev(EventType.NodeCreated, `${base}/new`)], `exists watch, cut after frame ${n}`);
      assert.deepEqual(child.events, [ev(EventType.NodeChildrenChanged, `${base}/kids`)], `getChildren watch, cut after frame ${n}`);
      if (persistent) {
        // Re-registered silently on every line (no catch-up for persistent watches): a change from now on fires them.
        await other.setData(`${base}/pers`, "seen");
        await other.create(`${base}/rec/seen`);
        await c.sync("/");
        await until("persistent events after the reconnect", () => pers.events.length >= 1 && rec.events.length >= 1, 5_000);
        assert.deepEqual(pers.events, [ev(EventType.NodeDataChanged, `${base}/pers`)], `persistent watch, cut after frame ${n}`);
        assert.deepEqual(rec.events, [ev(EventType.NodeCreated, `${base}/rec/seen`)], `persistent-recursive watch, cut after frame ${n}`);
      }
      assert.equal(c.state, "connected");
    } finally {
      await c.close();
      await proxy.close();
    }
  }

  for (const n of FRAMES) {
    it(`one-shot data, exists and child watches: cut after frame ${n}`, () => scenario(n, false), 60_000);
  }
  for (const n of FRAMES) {
    itFrom("3.6", `with persistent and persistent-recursive watches too: cut after frame ${n}`, () => scenario(n, true), 60_000);
  }
});
