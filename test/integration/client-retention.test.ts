// A closed client is garbage: once close() has resolved and the caller drops its references, nothing
// the client set up (socket, ping and read timers, watch tables, listeners, an abandoned watch
// iterator, requests cut off by the close) keeps it reachable. Checked with a WeakRef to the client
// and a FinalizationRegistry callback, forcing full collections with gc(): vitest's worker runs
// without --expose-gc, so the test turns the flag on at run time (v8.setFlagsFromString) and takes
// gc from a fresh vm context, where V8 installs it. A control client kept referenced must survive
// the same collections, so the check can tell reachable from collected. Node only (vitest).
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { AddWatchMode, CreateMode, ZooKeeper, type WatchedEvent } from "../../src/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { onSession, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

function forceGc(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("a closed client can be garbage-collected", () => {
  let connect: string;
  const root = uniqueRoot("retention");

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    await onSession(connect, (zk) => zk.create(root));
  });

  afterAll(async () => {
    if (connect) await onSession(connect, (zk) => removeRoot(zk, root)); // the run's nodes are all below root
  });

  /** Connects, works with every kind of watch, closes; returns only weak handles to the client. */
  async function useAndClose(k: number, collected: Set<string>, registry: FinalizationRegistry<string>): Promise<{ ref: WeakRef<ZooKeeper>; events: number }> {
    const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    registry.register(zk, `client-${k}`);
    let events = 0;
    const watcher = () => (_e: WatchedEvent) => void events++; // a new function per watch: one call each
    zk.on("state", () => {});
    const base = await zk.create(`${root}/${k}`);
    const node = await zk.create(`${base}/n`, "v0");
    await zk.create(`${base}/e`, "e", { mode: CreateMode.EPHEMERAL });
    await zk.getData(node, watcher());
    await zk.exists(`${base}/missing`, watcher());
    await zk.getChildren(base, watcher());
    await zk.addWatch(base, AddWatchMode.PERSISTENT_RECURSIVE, watcher());
    const iterator = zk.watch(node)[Symbol.asyncIterator]();
    const next = iterator.next(); // left pending: close() must end it
    await zk.setData(node, "v1"); // fires the data watch, the recursive watch and the iterator
    await until("the watches fired", () => events >= 2);
    await next;
    void iterator.next().catch(() => {}); // pending again when close() comes
    const inFlight = Array.from({ length: 20 }, () => zk.getData(node).catch(() => null));
    await zk.close();
    await Promise.all(inFlight);
    assert.equal(zk.state, "closed");
    collected.delete(`client-${k}`);
    return { ref: new WeakRef(zk), events };
  }

  it("WeakRef and FinalizationRegistry see a closed client collected, a referenced one kept", async () => {
    const gc = forceGc();
    const collected = new Set<string>();
    const registry = new FinalizationRegistry<string>((name) => collected.add(name));
    const kept = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    registry.register(kept, "kept");
    const keptRef = new WeakRef(kept);
    try {
      const closed = [await useAndClose(1, collected, registry), await useAndClose(2, collected, registry)];
      assert.ok(closed.every((c) => c.events >= 2));
      // Finalization callbacks run in a later task: in until's pause between two checks.
      await until("both closed clients collected and finalized", () => {
        gc();
        return closed.every((c) => c.ref.deref() === undefined) && collected.has("client-1") && collected.has("client-2");
      }, 20_000);
      assert.ok(keptRef.deref(), "the control client, still referenced, was collected");
      assert.ok(!collected.has("kept"));
      await kept.exists("/"); // and it still works
    } finally {
      await kept.close();
    }
  });
});
