// Semaphore against a real ZooKeeper server, both layouts: the znodes as Curator's InterProcessSemaphoreV2 and
// kazoo's Semaphore make them, never more leases than permits through a workload, waiters served, nothing left
// behind on timeout or abort, a lease lost (event, isHeld false) when its znode is deleted or its session is in
// doubt, and kazoo's stored max_leases checked.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, ZooKeeper, isZooKeeperError } from "../../src/index.ts";
import { Semaphore, SemaphoreTimeoutError, type LeaseLostReason } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { hold, nextEvent, until } from "../support/wait.ts";
import { sharedServer } from "../support/servers/zk-server.ts";

const root = `/t-recipes-semaphore-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();
const client = (): Promise<ZooKeeper> => sessions.client();

describe("Semaphore", () => {
  sessions.hooks(async () => removeRoot(await client(), root)); // the run's nodes are all below root

  for (const naming of ["curator", "kazoo"] as const) {
    it(`${naming}: never more leases than permits through 30 acquisitions, every waiter served, the layout on the wire`, async () => {
      const path = `${root}/${naming}/work`;
      const sems = await Promise.all([0, 1, 2, 3, 4].map(async (i) => new Semaphore(await client(), path, { permits: 2, id: `s${i}`, naming })));
      let inside = 0;
      let maxInside = 0;
      const served = new Map<string, number>();
      const admin = await client();
      const seen = new Set<string>();
      await Promise.all(
        sems.map(async (s) => {
          for (let k = 0; k < 6; k++) {
            const lease = await s.acquire({ timeout: 20_000 });
            assert.ok(lease.isHeld);
            inside++;
            maxInside = Math.max(maxInside, inside);
            served.set(s.id, (served.get(s.id) ?? 0) + 1);
            seen.add(lease.path);
            await until("a second holder beside the first", () => maxInside >= 2, 10_000); // both permits are used at least once
            await hold(3); // a moment inside
            inside--;
            await lease.release();
            assert.equal(lease.isHeld, false);
          }
        }),
      );
      assert.equal(maxInside, 2, `at most 2 at once, and 2 reached (max ${maxInside})`);
      assert.deepEqual([...served.values()], [6, 6, 6, 6, 6]);
      for (const p of seen) {
        if (naming === "curator") assert.match(p, new RegExp(`^${path}/leases/_c_[0-9a-f-]{36}-lease-\\d{10}$`));
        else assert.match(p, new RegExp(`^${path}/[0-9a-f]{32}$`));
      }
      if (naming === "curator") assert.ok(await admin.exists(`${path}/locks`), "Curator's mutex under <path>/locks");
      else {
        assert.equal(new TextDecoder().decode((await admin.getData(path)).data!), "2", "kazoo's max_leases as the path's data");
        assert.ok(await admin.exists(`${path}-__lock__`), "kazoo's mutex at <path>-__lock__");
      }
      assert.deepEqual(await sems[0].leases(), []);
    }, 60_000);

    it(`${naming}: a timeout or an abort leaves nothing behind; leases() names the holders`, async () => {
      const path = `${root}/${naming}/timeout`;
      const a = new Semaphore(await client(), path, { permits: 1, id: "a", naming });
      const b = new Semaphore(await client(), path, { permits: 1, id: "b", naming });
      const held = await a.acquire();
      await assert.rejects(b.acquire({ timeout: 150 }), (e) => e instanceof SemaphoreTimeoutError && isZooKeeperError(e, ErrorCode.OPERATIONTIMEOUT));
      assert.deepEqual(await b.leases(), ["a"]);
      const ac = new AbortController();
      const aborted = b.acquire({ signal: ac.signal });
      const admin = await client();
      const lockPath = naming === "curator" ? `${path}/locks` : `${path}-__lock__`;
      await until("b waits holding the mutex", async () => (await admin.getChildren(lockPath)).length === 1);
      ac.abort(new Error("stop"));
      await assert.rejects(aborted, /stop/);
      assert.deepEqual(await admin.getChildren(lockPath), []);
      assert.deepEqual(await b.leases(), ["a"]);
      const next = b.acquire();
      await held.release();
      const lease = await next;
      assert.deepEqual(await b.leases(), ["b"]);
      await lease[Symbol.asyncDispose]();
      assert.deepEqual(await b.leases(), []);
    }, 30_000);

    it(`${naming}: a lease is lost when its znode is deleted or its session is in doubt, and its permit goes on`, async () => {
      const path = `${root}/${naming}/lost`;
      const admin = await client();
      const a = new Semaphore(await client(), path, { permits: 1, id: "a", naming });
      const lease = await a.acquire();
      const lost = nextEvent<[LeaseLostReason]>(lease, "lost", 5000);
      await admin.delete(lease.path);
      assert.deepEqual(await lost, ["deleted"]);
      assert.equal(lease.isHeld, false);
      // A session in doubt: a second client takes over the session (the server drops our link) and closes it.
      const { connectString } = await sharedServer();
      const zk = await ZooKeeper.connect(connectString, { sessionTimeout: 4000 });
      const doubtful = await new Semaphore(zk, path, { permits: 1, id: "doubt", naming }).acquire();
      const waiter = new Semaphore(await client(), path, { permits: 1, id: "waiter", naming }).acquire();
      const lostLink = nextEvent<[LeaseLostReason]>(doubtful, "lost", 20_000);
      const thief = await ZooKeeper.connect(connectString, { sessionId: zk.sessionId, sessionPassword: zk.sessionPassword, sessionTimeout: 4000 });
      await thief.close();
      const [reason] = await lostLink;
      assert.ok(reason === "disconnected" || reason === "expired", reason);
      assert.equal(doubtful.isHeld, false);
      const next = await waiter;
      assert.ok(next.isHeld);
      assert.deepEqual(await a.leases(), ["waiter"]);
      await next.release();
      await zk.close();
    }, 40_000);
  }

  for (const naming of ["curator", "kazoo"] as const) {
    it(`${naming}: a waiter whose client closes rejects with the session's end and leaves nothing`, async () => {
      const path = `${root}/${naming}/closing`;
      const a = new Semaphore(await client(), path, { permits: 1, id: "a", naming });
      const held = await a.acquire();
      const zk = await ZooKeeper.connect((await sharedServer()).connectString, { sessionTimeout: 10_000 });
      const waiting = new Semaphore(zk, path, { permits: 1, id: "w", naming }).acquire().then(() => null, (e: unknown) => e); // handled at once (it may end before the assert)
      const lockPath = naming === "curator" ? `${path}/locks` : `${path}-__lock__`;
      const admin = await client();
      await until("the waiter holds the mutex", async () => (await admin.getChildren(lockPath)).length === 1);
      await zk.close();
      const err = await waiting;
      assert.ok(isZooKeeperError(err, ErrorCode.SESSIONEXPIRED), String(err));
      assert.deepEqual(await admin.getChildren(lockPath), []);
      assert.deepEqual(await a.leases(), ["a"]);
      await held.release();
    }, 30_000);
  }

  it("kazoo: a stored max_leases other than permits is refused with BADARGUMENTS", async () => {
    const path = `${root}/kazoo/max`;
    const admin = await client();
    await admin.create(path, "3", { createParents: true });
    const s = new Semaphore(await client(), path, { permits: 2, naming: "kazoo" });
    await assert.rejects(s.acquire(), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS) && /max_leases 3/.test((e as Error).message));
    const ok = await new Semaphore(await client(), path, { permits: 3, naming: "kazoo" }).acquire();
    await ok.release();
  }, 30_000);

  it("rejects bad arguments with BADARGUMENTS", () => {
    const zk = {} as ZooKeeper;
    const bad = (f: () => unknown): void => assert.throws(f, (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    bad(() => new Semaphore(zk, "relative", { permits: 1 }));
    for (const permits of [0, 1.5, -1, Number.NaN, "2" as never]) bad(() => new Semaphore(zk, "/x", { permits }));
    bad(() => new Semaphore(zk, "/x", undefined as never));
    bad(() => new Semaphore(zk, "/x", { permits: 1, naming: "zk" as never }));
    bad(() => new Semaphore(zk, "/x", { permits: 1, id: 5 as never }));
  });
});
