// Lock against a real ZooKeeper server: mutual exclusion, order, no herd, both namings on the wire,
// fencing tokens, not reentrant, nothing left behind on abort/timeout, loss on deletion and close.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, ZooKeeper, isZooKeeperError } from "../../src/index.ts";
import { LeaderElection, Lock, LockNotHeldError, LockNotReentrantError, type LockLostReason } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { nextEvent, hold, until } from "../support/wait.ts";
import { sharedServer } from "../support/servers/zk-server.ts";

const root = `/t-recipes-lock-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();
const client = (): Promise<ZooKeeper> => sessions.client();

const NAMES = {
  curator: /^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-\d{10}$/,
  kazoo: /^[0-9a-f]{32}__lock__\d{10}$/,
};

describe("Lock", () => {
  sessions.hooks(async () => removeRoot(await client(), root)); // the run's nodes are all below root

  for (const naming of ["curator", "kazoo"] as const) {
    it(`${naming}: excludes mutually through 40 acquisitions, in order, one waiter woken per release, tokens growing`, async () => {
      const path = `${root}/${naming}/mutex`;
      const locks = await Promise.all([0, 1, 2, 3].map(async (i) => new Lock(await client(), path, { id: `l${i}`, naming })));
      let inside = 0;
      let maxInside = 0;
      let wakes = 0;
      for (const l of locks) l.on("watch", () => wakes++);
      const tokens: bigint[] = [];
      const names = new Set<string>();
      await Promise.all(
        locks.map(async (l) => {
          for (let k = 0; k < 10; k++) {
            await l.run(async (signal) => {
              inside++;
              maxInside = Math.max(maxInside, inside);
              assert.ok(l.isHeld && !signal.aborted);
              tokens.push(l.token!);
              names.add(l.nodePath!.slice(path.length + 1));
              const ids = (await l.contenders()).map((c) => c.id);
              assert.equal(ids[0], l.id);
              await hold(2); // a moment inside the critical section
              inside--;
            });
            assert.equal(l.isHeld, false);
            assert.equal(l.token, undefined);
          }
        }),
      );
      assert.equal(maxInside, 1);
      assert.equal(tokens.length, 40);
      for (let i = 1; i < tokens.length; i++) assert.ok(tokens[i] > tokens[i - 1], `token ${i} did not grow`);
      for (const n of names) assert.match(n, NAMES[naming]);
      // Each release wakes at most the one waiter behind it.
      assert.ok(wakes <= 40, `${wakes} wakes for 40 releases`);
      assert.deepEqual(await locks[0].contenders(), []);
    }, 60_000);
  }

  it("orders by sequence across namings' own prefixes and ignores the other protocol's children", async () => {
    const path = `${root}/mixed`;
    const zk = await client();
    const a = new Lock(zk, path, { id: "cur" });
    await a.acquire();
    const k = new Lock(await client(), path, { id: "kaz", naming: "kazoo" });
    await k.acquire(); // a kazoo lock does not see the Curator contender: each protocol has its own path
    assert.ok(a.isHeld && k.isHeld);
    assert.deepEqual((await a.contenders()).map((c) => c.id), ["cur"]);
    assert.deepEqual((await k.contenders()).map((c) => c.id), ["kaz"]);
    await Promise.all([a.release(), k.release()]);
  }, 30_000);

  it("is not reentrant: a second acquire while held or pending rejects with LockNotReentrantError", async () => {
    const path = `${root}/reentry`;
    const a = new Lock(await client(), path);
    await a.acquire();
    await assert.rejects(a.acquire(), LockNotReentrantError);
    const b = new Lock(await client(), path);
    const pending = b.acquire();
    await assert.rejects(b.acquire(), (e) => e instanceof LockNotReentrantError && isZooKeeperError(e, ErrorCode.APIERROR));
    await a.release();
    await pending;
    assert.ok(b.isHeld);
    await b[Symbol.asyncDispose]();
    assert.deepEqual(await b.contenders(), []);
  }, 30_000);

  it("leaves nothing behind when acquire times out or is aborted", async () => {
    const path = `${root}/abort`;
    const zk = await client();
    const holder = new Lock(zk, path, { id: "holder" });
    await holder.acquire();
    const waiter = new Lock(await client(), path, { id: "waiter" });
    await assert.rejects(waiter.acquire({ timeout: 150 }), (e) => isZooKeeperError(e, ErrorCode.OPERATIONTIMEOUT));
    assert.deepEqual((await holder.contenders()).map((c) => c.id), ["holder"]);
    const ac = new AbortController();
    const aborted = waiter.acquire({ signal: ac.signal });
    await until("the waiter's znode", async () => (await holder.contenders()).length === 2);
    ac.abort(new Error("stop"));
    await assert.rejects(aborted, /stop/);
    assert.deepEqual((await holder.contenders()).map((c) => c.id), ["holder"]);
    // Abort while the create is still in flight: it is undone once its reply arrives.
    const ac2 = new AbortController();
    const racing = waiter.acquire({ signal: ac2.signal });
    ac2.abort(new Error("at once"));
    await assert.rejects(racing, /at once/);
    assert.deepEqual((await holder.contenders()).map((c) => c.id), ["holder"]);
    // The instance is usable again.
    const again = waiter.acquire();
    await holder.release();
    await again;
    assert.ok(waiter.isHeld);
    await waiter.release();
  }, 30_000);

  it("is lost when its znode is deleted (run's signal aborts) and when its session closes", async () => {
    const path = `${root}/lost`;
    const zk = await client();
    const l = new Lock(zk, path, { id: "x" });
    const other = await client();
    const lost = nextEvent<[LockLostReason]>(l, "lost", 5000);
    const result = l.run(async (signal) => {
      await other.delete(l.nodePath!);
      // Already aborted (the lock read as not held when fn started): fail on the reason below, never hang.
      if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      return signal.reason as Error;
    });
    assert.match((await result).message, /lock lost: deleted/);
    assert.deepEqual(await lost, ["deleted"]);
    assert.equal(l.isHeld, false);

    const zk2 = await ZooKeeper.connect((await sharedServer()).connectString, { sessionTimeout: 10_000 });
    const m = new Lock(zk2, path);
    await m.acquire();
    const waiter = new Lock(zk2, path, { id: "waiter" }); // same session, queued behind m
    const waiting = waiter.acquire().then(() => "acquired", (e: unknown) => e);
    await until("the waiter's znode", () => waiter.nodePath !== null, 5000);
    const told: LockLostReason[] = [];
    m.on("lost", (reason) => told.push(reason));
    const closing = zk2.close();
    // At once, before the closeSession leaves (with it the server drops m's znode and the next holder may take over).
    assert.deepEqual(told, ["closed"]);
    assert.equal(m.isHeld, false);
    await closing;
    assert.deepEqual(told, ["closed"]);
    const refused = await waiting;
    assert.ok(isZooKeeperError(refused, ErrorCode.SESSIONEXPIRED) && /close\(\) was called/.test(refused.message), String(refused));
    await assert.rejects(m.acquire(), (e) => isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)); // a closed client, as the client says it
    assert.deepEqual(await l.contenders(), []);
  }, 30_000);

  it("can be acquired again straight from the lost event (it queues behind the lost znode's cleanup)", async () => {
    const path = `${root}/again`;
    const l = new Lock(await client(), path, { id: "again" });
    await l.acquire();
    const first = l.nodePath!;
    const other = await client();
    const reacquired = new Promise<void>((resolve, reject) => l.once("lost", () => l.acquire().then(resolve, reject)));
    await other.delete(first);
    await reacquired;
    assert.ok(l.isHeld);
    assert.notEqual(l.nodePath, first);
    assert.deepEqual((await l.contenders()).map((c) => c.path), [l.nodePath]);
    await l.release();
  }, 30_000);

  for (const naming of ["curator", "kazoo"] as const) {
    it(`${naming}: transaction() commits while held, fails without applying once the lock znode is gone, refuses unsent when not held`, async () => {
      const path = `${root}/fence-${naming}`;
      const zk = await client();
      const admin = await client();
      const resource = `${path}-resource`;
      await admin.create(resource, "0", { createParents: true });
      const read = async (): Promise<string> => new TextDecoder().decode((await admin.getData(resource)).data!);
      const notHeld = (e: unknown): boolean => e instanceof LockNotHeldError && isZooKeeperError(e, ErrorCode.NOAUTH);
      const l = new Lock(zk, path, { id: "fenced", naming });
      await assert.rejects(l.transaction().setData(resource, "never").commit(), notHeld); // never acquired
      await l.acquire();
      const results = await l.transaction().setData(resource, "1").create(`${resource}/child`).commit();
      assert.deepEqual(results.map((r) => r.type), ["setData", "create"]);
      assert.equal(await read(), "1");
      // Deleted behind the Lock's back, on its own session, in the same pipeline: the lock still reads as
      // held when commit() sends, and the server's check of our znode refuses the whole multi.
      const lost = nextEvent<[LockLostReason]>(l, "lost", 5000);
      const deleted = zk.delete(l.nodePath!);
      await assert.rejects(l.transaction().setData(resource, "2").delete(`${resource}/child`).commit(), (e) => isZooKeeperError(e, ErrorCode.NONODE));
      await deleted;
      assert.deepEqual(await lost, ["deleted"]);
      assert.equal(await read(), "1");
      assert.ok(await admin.exists(`${resource}/child`), "no op of the refused multi was applied");
      await assert.rejects(l.transaction().setData(resource, "3").commit(), notHeld); // lost: refused before sending
      // Deleted by another session: whichever comes first, the watch or the commit, nothing is applied.
      await l.acquire();
      const prepared = l.transaction().setData(resource, "4");
      await admin.delete(l.nodePath!);
      await assert.rejects(prepared.commit(), (e) => notHeld(e) || isZooKeeperError(e, ErrorCode.NONODE));
      assert.equal(await read(), "1");
      // The session expired: the ephemeral znode went with it, and nothing prepared before commits.
      const { connectString } = await sharedServer();
      const zkExpire = await ZooKeeper.connect(connectString, { sessionTimeout: 4000 });
      const e = new Lock(zkExpire, `${path}-expiry`, { naming });
      await e.acquire();
      const beforeExpiry = e.transaction().setData(resource, "5");
      const lostExpiry = nextEvent<[LockLostReason]>(e, "lost", 20_000);
      const thief = await ZooKeeper.connect(connectString, { sessionId: zkExpire.sessionId, sessionPassword: zkExpire.sessionPassword, sessionTimeout: 4000 });
      await thief.close(); // a second client takes over the session and closes it
      await assert.rejects(beforeExpiry.commit(), (x) => notHeld(x) || isZooKeeperError(x, ErrorCode.NONODE));
      await lostExpiry;
      await assert.rejects(e.transaction().setData(resource, "6").commit(), notHeld);
      assert.equal(await read(), "1");
      await l.release();
      await zkExpire.close();
    }, 30_000);
  }

  it("rejects bad arguments with BADARGUMENTS", () => {
    const zk = {} as ZooKeeper;
    for (const bad of ["", "relative", "/trailing/"]) assert.throws(() => new Lock(zk, bad), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    assert.throws(() => new Lock(zk, "/x", { naming: "zk" as never }), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    assert.throws(() => new Lock(zk, "/x", { id: 5 as never }), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
  });
});

describe("LeaderElection protocols", () => {
  sessions.hooks(async () => removeRoot(await client(), root)); // the run's nodes are all below root
  const NAMES_BY_PROTOCOL = { "curator-latch": /-latch-\d{10}$/, "curator-selector": NAMES.curator, kazoo: NAMES.kazoo };
  for (const protocol of ["curator-latch", "curator-selector", "kazoo"] as const) {
    it(`${protocol}: names its candidates as the other clients do and reads their ids in order`, async () => {
      const path = `${root}/election-${protocol}`;
      const es: LeaderElection[] = [];
      for (let i = 0; i < 3; i++) {
        const e = new LeaderElection(await client(), path, { id: `e${i}`, protocol });
        await e.start();
        es.push(e);
      }
      await until("one leader", () => es.filter((e) => e.isLeader).length === 1);
      assert.ok(es[0].isLeader);
      const ps = await es[2].participants();
      assert.deepEqual(ps.map((p) => p.id), ["e0", "e1", "e2"]);
      for (const p of ps) assert.match(p.path.slice(path.length + 1), NAMES_BY_PROTOCOL[protocol]);
      // A Lock of the matching naming on the same path queues behind the election's candidates.
      if (protocol !== "curator-latch") {
        const l = new Lock(await client(), path, { id: "locker", naming: protocol === "kazoo" ? "kazoo" : "curator" });
        await assert.rejects(l.acquire({ timeout: 100 }), (e) => isZooKeeperError(e, ErrorCode.OPERATIONTIMEOUT));
      }
      await es[0].close();
      await until("handover", () => es[1].isLeader);
      assert.equal((await es[2].leader())?.id, "e1");
      await Promise.all(es.map((e) => e.close()));
    }, 30_000);
  }
  it("rejects an unknown protocol with BADARGUMENTS", () => {
    assert.throws(() => new LeaderElection({} as ZooKeeper, "/x", { id: "a", protocol: "zab" as never }), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
  });
});
