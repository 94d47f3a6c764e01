// Every operation of the public API (the ZooKeeper class) against a real 3.8.0 server: results, documented errors, create modes,
// TTL/container reaping, data sizes, unicode paths, chroot, multi, pipelining, and "nothing sent" for
// invalid arguments (measured with a fault proxy's byte counter).
import { describe, it, beforeAll } from "../support/bdd.ts";
import { itFrom } from "../support/servers/zk-line.ts";
import assert from "node:assert/strict";
import { SharedSessions, rejectsWith, ttlNodesOff, removeRoot, uniqueRoot } from "../support/sessions.ts";
import type { FaultProxy } from "../support/fakes/fault-proxy.ts";
import { CreateMode, Ids, Op, Perms, ZooKeeper, ZooKeeperError, digestId } from "../../src/index.ts";
import { never, until } from "../support/wait.ts";

const text = new TextDecoder();

describe("client operations (real server)", () => {
  const sessions = new SharedSessions();
  let zk: ZooKeeper;
  const root = uniqueRoot("ops");
  // Every node of the run is below root (the chroot client's too): gone after the run, also on a server of ZK_CONNECT.
  sessions.hooks(async () => removeRoot(await sessions.client(), root));
  /** Why the TTL cases are skipped (a ZK_CONNECT server without TTL nodes), or null. */
  let ttlOff: string | null = null;
  const skipTtl = (what: string): boolean => (ttlOff !== null && console.log(`[ops] ${what}: TTL cases skipped: ${ttlOff}`), ttlOff !== null);

  beforeAll(async () => {
    zk = await sessions.client();
    await zk.create(root);
    ttlOff = await ttlNodesOff(zk, root);
  });

  it("creates, reads, updates and deletes a node with matching stats", async () => {
    const p = `${root}/crud`;
    assert.equal(await zk.create(p, "hello"), p);
    const got = await zk.getData(p);
    assert.equal(text.decode(got.data!), "hello");
    assert.equal(got.stat.version, 0);
    assert.equal(got.stat.dataLength, 5);
    assert.equal(got.stat.ephemeralOwner, 0n);
    assert.equal(typeof got.stat.ctime, "number");
    assert.ok(Math.abs(got.stat.ctime - Date.now()) < 60_000);
    const st = await zk.setData(p, new Uint8Array([1, 2, 3]));
    assert.equal(st.version, 1);
    assert.ok(st.mzxid > got.stat.mzxid);
    assert.deepEqual((await zk.exists(p))?.version, 1);
    await zk.delete(p, 1);
    assert.equal(await zk.exists(p), null);
  }, 60_000);

  it("stores empty data as 0 bytes and null as null", async () => {
    await zk.create(`${root}/empty`, new Uint8Array(0));
    await zk.create(`${root}/null`, null);
    await zk.create(`${root}/undef`);
    const e = await zk.getData(`${root}/empty`);
    assert.ok(e.data instanceof Uint8Array);
    assert.equal(e.data.length, 0);
    assert.equal((await zk.getData(`${root}/null`)).data, null);
    assert.equal((await zk.getData(`${root}/undef`)).data, null);
  }, 60_000);

  it("round-trips data close to 1 MB", async () => {
    const big = new Uint8Array(1_048_575 - 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    await zk.create(`${root}/big`, big);
    const got = await zk.getData(`${root}/big`);
    assert.equal(got.stat.dataLength, big.length);
    assert.deepEqual(got.data, big);
  }, 60_000);

  it("handles unicode paths and names", async () => {
    const p = `${root}/ünïcødé-日本語-ελληνικά`;
    assert.equal(await zk.create(p, "x"), p);
    assert.deepEqual(await zk.getChildren(root).then((c) => c.filter((n) => n.startsWith("ü"))), ["ünïcødé-日本語-ελληνικά"]);
    assert.equal(text.decode((await zk.getData(p)).data!), "x");
    // ZooKeeper's PathUtils refuses U+D800..U+F8FF, so characters outside the BMP (surrogates) never reach the wire
    await rejectsWith(zk.create(`${root}/emoji-😀`), "BADARGUMENTS");
  }, 60_000);

  // Measured on 3.8.0: the server stores Long.MIN_VALUE / 0xFF..|ttl as the owner of containers and TTL
  // nodes, but DataNode.copyStat hides every non-NORMAL owner from clients, so they read 0.
  itFrom("3.5", "creates every mode with the ephemeralOwner the server reports", async () => {
    const base = `${root}/modes`;
    await zk.create(base);
    const persistent = await zk.createWithStat(`${base}/p`, "", { mode: CreateMode.PERSISTENT });
    assert.equal(persistent.stat.ephemeralOwner, 0n);
    const eph = await zk.createWithStat(`${base}/e`, "", { mode: CreateMode.EPHEMERAL });
    assert.equal(eph.stat.ephemeralOwner, zk.sessionId);
    const pseq = await zk.create(`${base}/ps-`, "", { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    assert.match(pseq, new RegExp(`^${base}/ps-\\d{10}$`));
    const eseq = await zk.createWithStat(`${base}/es-`, "", { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    assert.match(eseq.path, new RegExp(`^${base}/es-\\d{10}$`));
    assert.equal(eseq.stat.ephemeralOwner, zk.sessionId);
    const container = await zk.createWithStat(`${base}/c`, "", { mode: CreateMode.CONTAINER });
    assert.equal(container.path, `${base}/c`);
    assert.equal(container.stat.ephemeralOwner, 0n);
    assert.equal((await zk.exists(`${base}/c`))!.ephemeralOwner, 0n);
    // plain create() of a container (createContainer replies with a Create2Response) still gives the path
    assert.equal(await zk.create(`${base}/c2`, null, { mode: CreateMode.CONTAINER }), `${base}/c2`);
    if (skipTtl("every mode")) return;
    const ttl = await zk.createWithStat(`${base}/ttl`, "", { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000 });
    assert.equal(ttl.stat.ephemeralOwner, 0n);
    assert.equal((await zk.exists(`${base}/ttl`))!.ephemeralOwner, 0n);
    const sttl = await zk.create(`${base}/sttl-`, "", { mode: CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL, ttl: 60_000 });
    assert.match(sttl, new RegExp(`^${base}/sttl-\\d{10}$`));
    assert.equal(await zk.create(`${base}/t2`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000 }), `${base}/t2`);
  }, 60_000);

  itFrom("3.5", "lets the server reap an emptied container and an expired TTL node", async () => {
    const c = `${root}/reap-c`;
    await zk.create(c, null, { mode: CreateMode.CONTAINER });
    await zk.create(`${c}/child`);
    await zk.delete(`${c}/child`);
    const t = `${root}/reap-ttl`;
    if (!skipTtl("reaping")) await zk.create(t, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 300 });
    // The test servers reap every second (znode.container.checkIntervalMs=1000); a stock server every minute.
    await until("the container and the TTL node to be reaped", async () => (await zk.exists(c)) === null && (await zk.exists(t)) === null, 130_000, 50);
  }, 150_000);

  it("reports NONODE, NODEEXISTS, BADVERSION, NOTEMPTY and NOCHILDRENFOREPHEMERALS", async () => {
    const p = `${root}/errs`;
    await rejectsWith(zk.create(`${p}/no/parent`), "NONODE");
    await rejectsWith(zk.getData(`${p}`), "NONODE");
    await rejectsWith(zk.setData(`${p}`, "x"), "NONODE");
    await rejectsWith(zk.delete(`${p}`), "NONODE");
    await rejectsWith(zk.getChildren(`${p}`), "NONODE");
    await rejectsWith(zk.getACL(`${p}`), "NONODE");
    assert.equal(await zk.exists(p), null);
    await zk.create(p, "v0");
    const e = await rejectsWith(zk.create(p), "NODEEXISTS");
    assert.equal(e.path, p);
    assert.equal(e.code, -110);
    await rejectsWith(zk.setData(p, "v1", 7), "BADVERSION");
    await rejectsWith(zk.delete(p, 3), "BADVERSION");
    await rejectsWith(zk.setACL(p, [...Ids.OPEN_ACL_UNSAFE], 5), "BADVERSION");
    await zk.create(`${p}/kid`);
    await rejectsWith(zk.delete(p), "NOTEMPTY");
    await zk.create(`${p}/eph`, null, { mode: CreateMode.EPHEMERAL });
    await rejectsWith(zk.create(`${p}/eph/child`), "NOCHILDRENFOREPHEMERALS");
  }, 60_000);

  itFrom("3.6", "lists children with and without stat, counts descendants, lists ephemerals", async () => {
    const p = `${root}/kids`;
    await zk.create(p);
    for (const n of ["a", "b", "c"]) await zk.create(`${p}/${n}`);
    await zk.create(`${p}/a/x`);
    await zk.create(`${p}/e1`, null, { mode: CreateMode.EPHEMERAL });
    assert.deepEqual((await zk.getChildren(p)).sort(), ["a", "b", "c", "e1"]);
    const w = await zk.getChildrenWithStat(p);
    assert.deepEqual(w.children.sort(), ["a", "b", "c", "e1"]);
    assert.equal(w.stat.numChildren, 4);
    assert.equal(await zk.getAllChildrenNumber(p), 5);
    assert.deepEqual(await zk.getEphemerals(p), [`${p}/e1`]);
    assert.ok((await zk.getEphemerals()).includes(`${p}/e1`));
  }, 60_000);

  itFrom("3.7", "gets and sets ACLs; sync and whoAmI answer", async () => {
    const p = `${root}/acl`;
    await zk.create(p, "x", { acl: [...Ids.READ_ACL_UNSAFE, { perms: Perms.ALL, id: { scheme: "digest", id: digestId("u", "p") } }] });
    const { acl, stat } = await zk.getACL(p);
    assert.equal(acl.length, 2);
    assert.equal(stat.aversion, 0);
    assert.deepEqual(acl.find((a) => a.id.scheme === "world"), { perms: Perms.READ, id: { scheme: "world", id: "anyone" } });
    // without ADMIN the digest id comes back masked (server behaviour)
    assert.ok(acl.some((a) => a.id.scheme === "digest"));
    await rejectsWith(zk.setData(p, "y"), "NOAUTH");
    await zk.sync(p);
    const me = await zk.whoAmI();
    assert.ok(me.some((i) => i.scheme === "ip" && i.id === "127.0.0.1"), JSON.stringify(me));
    const q = `${root}/acl2`;
    await zk.create(q);
    const st = await zk.setACL(q, [...Ids.READ_ACL_UNSAFE], 0);
    assert.equal(st.aversion, 1);
    assert.deepEqual((await zk.getACL(q)).acl, [{ perms: Perms.READ, id: { scheme: "world", id: "anyone" } }]);
  }, 60_000);

  itFrom("3.5", "runs multi and transactions, with per-op results on partial failure", async () => {
    const p = `${root}/multi`;
    const res = await zk.multi([Op.create(p, "a"), Op.create(`${p}/s-`, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL }), Op.setData(p, "b", 0), Op.check(p, 1)]);
    assert.equal(res.length, 4);
    assert.deepEqual(res[0], { type: "create", path: p });
    assert.equal(res[1]!.type, "create");
    assert.match((res[1] as { path: string }).path, /\/s-\d{10}$/);
    assert.equal(res[2]!.type, "setData");
    assert.equal((res[2] as { stat: { version: number } }).stat.version, 1);
    assert.deepEqual(res[3], { type: "check" });
    const err = await rejectsWith(zk.multi([Op.setData(p, "c"), Op.create(p), Op.delete(`${p}/nope`)]), "NODEEXISTS");
    assert.deepEqual(err.results, [
      { type: "error", code: 0 },
      { type: "error", code: -110 },
      { type: "error", code: -2 },
    ]);
    assert.equal(text.decode((await zk.getData(p)).data!), "b", "a failed multi changes nothing");
    const t = await zk.transaction().create(`${p}/t`).check(p, 1).delete(`${p}/t`).commit();
    assert.deepEqual(t.map((r) => r.type), ["create", "check", "delete"]);
    assert.deepEqual(await zk.multi([]), []);
    const ttl = skipTtl("multi") ? [] : [Op.create(`${p}/ttl`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000 })];
    const c = await zk.multi([Op.create(`${p}/cont`, null, { mode: CreateMode.CONTAINER }), ...ttl]);
    assert.deepEqual(c.map((r) => r.type === "create" && r.path), [`${p}/cont`, `${p}/ttl`].slice(0, 1 + ttl.length));
  }, 60_000);

  it("pipelines many requests on one connection and matches every reply", async () => {
    const p = `${root}/pipe`;
    await zk.create(p);
    const n = 2000;
    const creates = await Promise.all(Array.from({ length: n }, (_, i) => zk.create(`${p}/n${i}`, `v${i}`)));
    assert.deepEqual(creates, Array.from({ length: n }, (_, i) => `${p}/n${i}`));
    const reads = await Promise.all(Array.from({ length: n }, (_, i) => zk.getData(`${p}/n${i}`)));
    reads.forEach((r, i) => assert.equal(text.decode(r.data!), `v${i}`));
    // 4 MB queued at once: far more than a socket buffer, so writes must wait for drain (the test
    // server runs with -Xmx64m, so this stays modest)
    const blob = new Uint8Array(40_000).fill(7);
    const sets = await Promise.all(Array.from({ length: 100 }, (_, i) => zk.setData(`${p}/n${i}`, blob)));
    assert.ok(sets.every((s) => s.dataLength === 40_000 && s.version === 1));
    await Promise.all(Array.from({ length: 100 }, (_, i) => zk.setData(`${p}/n${i}`, null)));
  }, 60_000);

  itFrom("3.6", "uses the chroot for requests and strips it from results", async () => {
    const chrootZk = await sessions.client({ chroot: root });
    assert.equal(await chrootZk.create("/inside", "c"), "/inside");
    assert.equal(text.decode((await zk.getData(`${root}/inside`)).data!), "c");
    const s = await chrootZk.create("/seq-", null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    assert.match(s, /^\/seq-\d{10}$/);
    assert.deepEqual(await chrootZk.getEphemerals(), [s]);
    const m = await chrootZk.multi([Op.create("/m1"), Op.create("/m2-", null, { mode: CreateMode.PERSISTENT_SEQUENTIAL })]);
    assert.equal((m[0] as { path: string }).path, "/m1");
    assert.match((m[1] as { path: string }).path, /^\/m2-\d{10}$/);
    assert.ok((await chrootZk.getChildren("/")).includes("inside"));
    assert.ok(await chrootZk.exists("/"));
    await chrootZk.delete("/inside");
    assert.equal(await zk.exists(`${root}/inside`), null);
  }, 60_000);

  describe("invalid arguments", () => {
    let proxy: FaultProxy;
    let viaProxy: ZooKeeper;
    beforeAll(async () => {
      proxy = await sessions.proxy();
      // No ensemble tracker: its config read, whenever it runs, would be bytes the "nothing sent" checks count.
      viaProxy = await sessions.client({ connectString: proxy.connectString, sessionTimeout: 30_000, trackEnsemble: false });
    });

    it("rejects BADARGUMENTS with nothing sent", async () => {
      await viaProxy.exists("/"); // settle the counters after the handshake
      const before = proxy.bytes().up;
      const bad = ["", "relative", "/trailing/", "/a//b", "/a/./b", "/a/../b", "/nul\u0000", "/bad\u0001"];
      for (const p of bad) {
        await rejectsWith(viaProxy.create(p), "BADARGUMENTS");
        await rejectsWith(viaProxy.getData(p), "BADARGUMENTS");
        await rejectsWith(viaProxy.exists(p), "BADARGUMENTS");
        await rejectsWith(viaProxy.delete(p), "BADARGUMENTS");
        await rejectsWith(viaProxy.setData(p, "x"), "BADARGUMENTS");
        await rejectsWith(viaProxy.getChildren(p), "BADARGUMENTS");
        await rejectsWith(viaProxy.multi([Op.create(p)]), "BADARGUMENTS");
      }
      await rejectsWith(viaProxy.multi([Op.create(`${root}/ok`), Op.delete("bad")]), "BADARGUMENTS");
      // @ts-expect-error a mode that is no CreateMode: refused by the compiler, and at run time for JavaScript callers
      await rejectsWith(viaProxy.create(`${root}/x`, null, { mode: 9 }), "BADARGUMENTS");
      await rejectsWith(viaProxy.create(`${root}/x`, null, { mode: CreateMode.PERSISTENT_WITH_TTL }), "BADARGUMENTS");
      await rejectsWith(viaProxy.setData(`${root}/x`, "x", 1.5), "BADARGUMENTS");
      await rejectsWith(viaProxy.create(`${root}/x`, null, { acl: [] }), "INVALIDACL");
      await never("a byte reaching the server for invalid arguments", () => proxy.bytes().up !== before, 200);
      assert.equal(await zk.exists(`${root}/ok`), null);
      // and the connection still works
      assert.ok(await viaProxy.exists(root));
      assert.ok(proxy.bytes().up > before);
    }, 60_000);
  });

  it("rejects a top-level error through ZooKeeperError with code and codeName", async () => {
    const e = await rejectsWith(zk.getData(`${root}/missing`), "NONODE");
    assert.ok(e instanceof ZooKeeperError);
    assert.equal(e.code, -101);
    assert.equal(e.op, "getData");
    assert.match(e.message, /NONODE/);
  }, 60_000);
});
