// What the client learns about each server line and what it does with it (issue 10): the generation
// in zk.serverFeatures; on 3.4, ops the server lacks refused locally between pipelined requests
// (nothing sent, link and session kept); removal of persistent watches checked on the server with
// the 4lw `wchc`; the zxid on 3.9 events; multiRead; updateServerList moving off a dropped host.
import { describe, it, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import console from "node:console";
import { AddWatchMode, CreateMode, ErrorCode, Op, ReadOp, WatcherType, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import type { Watcher } from "../../src/index.ts";
import { SharedSessions, fourLetterWordOff, recorder, serverWatches, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { itFrom, serverAtLeast, serverLine } from "../support/servers/zk-line.ts";

const { line, version } = serverLine();
type Skip = (name: string, fn: () => unknown) => void;
// vitest and Bun have it.skip; Deno runs the files through node:test (bdd.ts), whose it takes { skip }.
const skip: Skip =
  process.env.VITEST || "Bun" in globalThis
    ? (n, f) => (it as unknown as { skip: Skip }).skip(n, f)
    : ((t: { it(n: string, o: { skip: boolean }, f: () => void): unknown }): Skip => (n, f) => void t.it(n, { skip: true }, f as () => void))(await import("node:test"));
/** A test for servers older than `max` only; skipped visibly on newer ones. */
const itBefore = (max: string, name: string, fn: () => Promise<void>, t: number): void =>
  serverAtLeast(max) ? skip(`${name} [only before ZooKeeper ${max}; server is ${version}]`, fn) : it(name, fn, t);

const GENERATION: Record<string, string> = { "3.4": "3.4", "3.8": "3.5-3.8", "3.9.3": "3.9+", "3.9": "3.9+" };

describe(`client on ZooKeeper ${version} (line ${line})`, () => {
  const sessions = new SharedSessions();
  let zk: ZooKeeper;
  let other: ZooKeeper;
  const root = uniqueRoot("lines");
  sessions.hooks(() => zk?.deleteRecursive(root)); // the run's nodes are all below root

  beforeAll(async () => {
    zk = await sessions.client();
    other = await sessions.client();
    await zk.create(root);
  });

  it("serverFeatures names the server's generation and what it can take", async () => {
    const f = zk.serverFeatures;
    assert.equal(f.generation, GENERATION[line]);
    assert.equal(f.containers, serverAtLeast("3.5"));
    assert.equal(f.persistentWatches, serverAtLeast("3.5"));
    assert.equal(f.persistentRemovalTypes, serverAtLeast("3.9"));
    assert.ok(Object.isFrozen(f));
    console.log(`[lines] ZooKeeper ${version}: serverFeatures ${JSON.stringify(f)}`);
  });

  it("events carry the change's zxid on 3.9+ and undefined before", async () => {
    const p = `${root}/zxid`;
    await zk.create(p);
    const r = recorder();
    await zk.getData(p, r.watcher);
    const stat = await other.setData(p, "x");
    await until("the event", () => r.events.length === 1);
    assert.deepEqual(r.zxids, [serverAtLeast("3.9") ? stat.mzxid : undefined]);
  }, 30_000);

  itBefore("3.5", "each op the server lacks rejects UNIMPLEMENTED locally between 40 pipelined getData calls", async () => {
    const p = `${root}/pipe`;
    await zk.create(p, "v");
    const before = await zk.getChildren(root);
    const states: string[] = [];
    zk.on("state", (s) => states.push(s));
    const sessionId = zk.sessionId;
    const w: Watcher = () => {};
    const unsupported: [string, () => Promise<unknown>][] = [
      ["addWatch", () => zk.addWatch(p, AddWatchMode.PERSISTENT, w)],
      ["createWithStat", () => zk.createWithStat(`${root}/c2`)],
      ["create", () => zk.create(`${root}/container`, null, { mode: CreateMode.CONTAINER })],
      ["create", () => zk.create(`${root}/ttl`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 1000 })],
      ["multi", () => zk.multi([Op.create(`${root}/m1`), Op.create(`${root}/mc`, null, { mode: CreateMode.CONTAINER })])],
      ["removeAllWatches", () => zk.removeAllWatches(p, WatcherType.Any)],
      ["getEphemerals", () => zk.getEphemerals("/")],
      ["getAllChildrenNumber", () => zk.getAllChildrenNumber(p)],
      ["whoAmI", () => zk.whoAmI()],
      ["multiRead", () => zk.multiRead([ReadOp.getData(p)])],
      ["getConfig", () => zk.getConfig()],
      ["reconfig", () => zk.reconfig({ leaving: ["9"] })],
    ];
    for (const [op, call] of unsupported) {
      const reads = Array.from({ length: 40 }, () => zk.getData(p));
      const all = [...reads.slice(0, 20), call(), ...reads.slice(20)];
      const settled = await Promise.allSettled(all);
      const refused = settled[20]!;
      assert.equal(refused.status, "rejected", op);
      const e = (refused as PromiseRejectedResult).reason;
      assert.ok(e instanceof ZooKeeperError && e.code === ErrorCode.UNIMPLEMENTED, `${op}: ${String(e)}`);
      assert.match(e.message, new RegExp(`${op}.* needs ZooKeeper 3\\.\\d(\\.\\d)? or later`));
      if (e.message.includes("TTL")) assert.match(e.message, /needs ZooKeeper 3\.5\.3 or later, started with -Dzookeeper\.extendedTypesEnabled=true \(the server is 3\.4\)$/);
      const ok = settled.filter((s, i) => i !== 20 && s.status === "fulfilled").length;
      assert.equal(ok, 40, `${op}: all 40 pipelined getData calls succeed`);
      console.log(`[lines] ZooKeeper ${version}: ${e.message}; ${ok}/40 pipelined getData ok`);
    }
    assert.equal(zk.state, "connected");
    assert.equal(zk.sessionId, sessionId);
    assert.deepEqual(states, [], "the link never dropped");
    assert.deepEqual(await zk.getChildren(root), before, "nothing was created");
  }, 60_000);

  itFrom("3.6", "removing persistent and recursive watches leaves none on the server (wchc)", async () => {
    const off = await fourLetterWordOff(sessions.connectString, "wchc");
    if (off !== null) return void console.log(`[lines] wchc case skipped: ${off}`);
    const c = await sessions.client();
    const p = `${root}/wchc`;
    await c.create(p);
    const a: Watcher = () => {};
    const b: Watcher = () => {};
    await c.addWatch(p, AddWatchMode.PERSISTENT_RECURSIVE, a);
    assert.deepEqual(await serverWatches(sessions.connectString, c), [p]);
    await c.removeWatches(p, a, WatcherType.PersistentRecursive);
    assert.deepEqual(await serverWatches(sessions.connectString, c), [], "recursive watch removed on the server");
    await c.addWatch(p, AddWatchMode.PERSISTENT, b);
    assert.deepEqual(await serverWatches(sessions.connectString, c), [p]);
    await c.removeAllWatches(p, WatcherType.Any);
    assert.deepEqual(await serverWatches(sessions.connectString, c), [], "persistent watch removed on the server");
    const ac = new AbortController();
    const loop = (async () => {
      for await (const _ of c.watch(p, { recursive: true, signal: ac.signal }));
    })();
    await until("the iterator's watch on the server", async () => (await serverWatches(sessions.connectString, c)).length === 1);
    ac.abort();
    await loop;
    await until("no watch left after the iterator ends", async () => (await serverWatches(sessions.connectString, c)).length === 0);
    console.log(`[lines] ZooKeeper ${version}: wchc after removing recursive, persistent and iterator watches: none left`);
  }, 60_000);

  itFrom("3.6", "multiRead reads several nodes in one request; a failed read fails alone", async () => {
    const p = `${root}/mr`;
    await zk.create(p, "d");
    await zk.create(`${p}/k`);
    const res = await zk.multiRead([ReadOp.getData(p), ReadOp.getChildren(p), ReadOp.getData(`${p}/missing`)]);
    assert.equal(res.length, 3);
    assert.equal(res[0]!.type === "getData" && new TextDecoder().decode(res[0].data!), "d");
    assert.deepEqual(res[1], { type: "getChildren", children: ["k"] });
    assert.deepEqual(res[2], { type: "error", code: ErrorCode.NONODE });
  }, 30_000);

  it("updateServerList moves the client off a host that left the list, keeping its session", async () => {
    const connect = sessions.connectString;
    const proxy = await sessions.proxy();
    const c = await sessions.client({ connectString: proxy.connectString });
    const id = c.sessionId;
    assert.equal(c.remoteAddress, proxy.connectString);
    proxy.refuse(true); // the old host is gone for good
    c.updateServerList(connect);
    await until("reconnected to the new host", () => c.state === "connected" && c.remoteAddress === connect.split(",")[0]);
    assert.equal(c.sessionId, id);
    await c.create(`${root}/moved`, null, { mode: CreateMode.EPHEMERAL });
    assert.ok(await other.exists(`${root}/moved`));
  }, 30_000);
});
