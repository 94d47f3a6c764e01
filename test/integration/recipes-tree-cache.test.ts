// TreeCache against a real ZooKeeper server: snapshot, then events that replay onto it; after a
// random workload (and link cuts through a proxy) the cache equals a fresh read; 10,000 nodes load
// with bounded reads in flight; both watch modes; a parent's Stat follows its children; expiry and rebuild.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CreateMode, Op, ZooKeeper } from "../../src/index.ts";
import { TreeCache } from "../../src/recipes/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { diff, dump, freshRead, randomWorkload, replayer } from "../support/tree-workload.ts";
import { nextEvent, until, untilState } from "../support/wait.ts";
import { removeRoot } from "../support/sessions.ts";

const root = `/t-tree-cache-${randomUUID().slice(0, 8)}`;

describe("TreeCache", () => {
  let connectString = "";
  let writer: ZooKeeper;
  const clients: ZooKeeper[] = [];
  const proxies: FaultProxy[] = [];
  const connect = async (cs = connectString, sessionTimeout = 10_000): Promise<ZooKeeper> => {
    const zk = await ZooKeeper.connect(cs, { sessionTimeout });
    clients.push(zk);
    return zk;
  };
  beforeAll(async () => {
    connectString = (await sharedServer()).connectString;
    writer = await connect();
    await writer.create(root, null);
  }, 60_000);
  afterAll(async () => {
    if (connectString) await removeRoot(await connect(), root); // the run's nodes are all below root
    await Promise.all(clients.map((zk) => zk.close().catch(() => {})));
    await Promise.all(proxies.map((p) => p.close()));
  }, 30_000);

  for (const watchMode of ["persistent", "oneShot"] as const) {
    it(`${watchMode}: events replay onto the snapshot and the cache equals a fresh read after workloads and link cuts`, async () => {
      const base = `${root}/${watchMode}`;
      await writer.create(base, "root");
      await randomWorkload(writer, base, 200, 1);
      const [host, port] = connectString.split(",")[0].split(":");
      const proxy = await startFaultProxy(host, Number(port));
      proxies.push(proxy);
      const zk = await connect(proxy.connectString);
      let drops = 0;
      zk.on("state", (s) => void (s === "disconnected" && drops++));
      const cache = new TreeCache(zk, base, { watchMode });
      await cache.start();
      assert.equal(cache.mode, watchMode === "persistent" ? "persistentRecursive" : "oneShot");
      assert.deepEqual(diff(dump(cache), await freshRead(writer, base)), []);
      const replay = replayer(cache, dump(cache));
      for (let round = 0; round < 4; round++) {
        const work = randomWorkload(writer, base, 250, 100 + round);
        if (round % 2 === 1) {
          const seen = replay.events;
          await until("the round's first change at the cache", () => replay.events > seen); // cut mid-workload
          proxy.cut(); // the client reconnects through the proxy within its session
        }
        await work;
        await untilState(zk, "connected");
        await zk.sync(base); // every notification for the writes is in before the sync's reply
        await cache.settled();
        const fresh = await freshRead(writer, base);
        assert.deepEqual(diff(dump(cache), fresh), [], `round ${round}: cache vs fresh`);
        assert.deepEqual(diff(replay.tree, fresh), [], `round ${round}: replay vs fresh`);
      }
      assert.ok(replay.events > 200, `${replay.events} events`);
      assert.equal(drops, 2, "each cut dropped the link once");
      assert.deepEqual(cache.children(base), (await writer.getChildren(base)).sort());
      await cache.close();
    }, 90_000);
  }

  for (const watchMode of ["persistent", "oneShot"] as const) {
    it(`${watchMode}: a parent's numChildren, cversion and pzxid follow its children's creations and deletions, without "changed"`, async () => {
      const base = `${root}/parent-stat-${watchMode}`;
      await writer.create(base, "p");
      await writer.create(`${base}/old`, "o");
      const zk = await connect();
      const cache = new TreeCache(zk, base, { watchMode });
      await cache.start();
      const changed: string[] = [];
      cache.on("changed", (p) => changed.push(p));
      const check = async (what: string): Promise<void> => {
        await zk.sync(base); // every notification for the writes is in before the sync's reply
        await cache.settled();
        for (const p of [base, `${base}/a`]) {
          const cached = cache.get(p)?.stat;
          const actual = await zk.exists(p);
          assert.ok(cached && actual, `${what}: ${p} cached and present`);
          const fields = (s: typeof actual): unknown[] => [s!.numChildren, s!.cversion, s!.pzxid, s!.mzxid];
          assert.deepEqual(fields(cached), fields(actual), `${what}: ${p} [numChildren, cversion, pzxid, mzxid]`);
        }
      };
      await writer.create(`${base}/a`, "a");
      await writer.create(`${base}/b`, "b");
      await check("after two creations");
      await writer.create(`${base}/a/x`, "x"); // a grandchild: a's Stat moves, not base's
      await writer.delete(`${base}/old`);
      await check("after a creation below and a deletion");
      await writer.delete(`${base}/b`);
      await writer.create(`${base}/c`, null, { mode: CreateMode.EPHEMERAL });
      await check("after a deletion and an ephemeral creation");
      assert.equal(cache.get(base)!.stat.numChildren, 2);
      assert.deepEqual(cache.children(base), ["a", "c"]);
      assert.deepEqual(changed, [], "a child's creation or deletion is not a change of its parent");
      await writer.setData(base, "p2");
      await check("after the parent's own change");
      assert.deepEqual(changed, [base]);
      await cache.close();
      if (watchMode === "persistent") {
        // At the depth limit the children are not cached, yet their parent's Stat follows them.
        const shallow = new TreeCache(zk, base, { watchMode, depth: 0 });
        await shallow.start();
        await writer.create(`${base}/d`, null);
        await writer.delete(`${base}/c`);
        await zk.sync(base);
        await shallow.settled();
        const actual = (await zk.exists(base))!;
        const cached = shallow.get(base)!.stat;
        assert.deepEqual([cached.numChildren, cached.cversion, cached.pzxid], [actual.numChildren, actual.cversion, actual.pzxid], "depth 0");
        assert.deepEqual(shallow.paths(), [base]);
        await shallow.close();
      }
    }, 60_000);
  }

  it("loads 10,000 nodes with at most maxInFlight reads at once, and honours depth", async () => {
    const base = `${root}/big`;
    await writer.create(base, null);
    for (let a = 0; a < 10; a++) {
      await writer.create(`${base}/a${a}`, null);
      for (let chunk = 0; chunk < 1000; chunk += 250) {
        await writer.multi(Array.from({ length: 250 }, (_, i) => Op.create(`${base}/a${a}/b${chunk + i}`, `v${i}`, { mode: CreateMode.PERSISTENT })));
      }
    }
    const zk = await connect();
    const cache = new TreeCache(zk, base, { maxInFlight: 16 });
    let most = 0;
    let sampling = true;
    const sample = (): void => {
      most = Math.max(most, cache.inFlight);
      if (sampling) setImmediate(sample);
    };
    sample();
    await cache.start();
    sampling = false;
    assert.equal(cache.paths().length, 1 + 10 + 10_000);
    assert.ok(most >= 1 && most <= 16, `at most ${most} in flight`);
    assert.equal(cache.children(`${base}/a3`)?.length, 1000);
    assert.equal(new TextDecoder().decode(cache.get(`${base}/a3/b7`)!.data!), "v7");
    await cache.close();
    const shallow = new TreeCache(zk, base, { depth: 1 });
    await shallow.start();
    assert.equal(shallow.paths().length, 11);
    await shallow.close();
  }, 120_000);

  it("reports expiry, keeps its contents, and rebuilds on a new session only when asked", async () => {
    const base = `${root}/expiry`;
    await writer.create(base, "x");
    await writer.create(`${base}/k`, "1");
    const zk = await connect(connectString, 4000);
    const cache = new TreeCache(zk, base);
    await cache.start();
    const expired = nextEvent(cache, "expired", 20_000);
    // Expire it: a second client takes over the session and closes it.
    const thief = await ZooKeeper.connect(connectString, { sessionId: zk.sessionId, sessionPassword: zk.sessionPassword, sessionTimeout: 4000 });
    await thief.close();
    await expired;
    assert.equal(cache.get(`${base}/k`)?.data?.length, 1);
    await writer.setData(`${base}/k`, "22");
    await writer.create(`${base}/j`, "new");
    const seen: string[] = [];
    cache.on("changed", (p) => seen.push(`changed ${p}`));
    cache.on("added", (p) => seen.push(`added ${p}`));
    await cache.rebuild(await connect());
    assert.deepEqual(seen.sort(), [`added ${base}/j`, `changed ${base}/k`]);
    assert.deepEqual(diff(dump(cache), await freshRead(writer, base)), []);
    await cache.close();
  }, 60_000);
});

