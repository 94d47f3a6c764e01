// ReadWriteLock against a real ZooKeeper server, both namings: readers share, a writer excludes, a writer is not
// starved by readers who came after it, names on the wire as Curator and kazoo write them, upgrade refused
// (LockUpgradeError), downgrade allowed, nothing left behind on timeout, and no overlap through a mixed workload.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, type ZooKeeper, isZooKeeperError } from "../../src/index.ts";
import { LockUpgradeError, ReadWriteLock } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { hold, until } from "../support/wait.ts";

const root = `/t-recipes-rwlock-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();
const client = (): Promise<ZooKeeper> => sessions.client();

const NAMES = {
  curator: { read: /^_c_[0-9a-f-]{36}-__READ__\d{10}$/, write: /^_c_[0-9a-f-]{36}-__WRIT__\d{10}$/ },
  kazoo: { read: /^[0-9a-f]{32}__rlock__\d{10}$/, write: /^[0-9a-f]{32}__lock__\d{10}$/ },
};

describe("ReadWriteLock", () => {
  sessions.hooks(async () => removeRoot(await sessions.client(), root)); // the run's nodes are all below root

  for (const naming of ["curator", "kazoo"] as const) {
    it(`${naming}: readers share, a writer waits for them, and later readers wait for that writer`, async () => {
      const path = `${root}/${naming}/share`;
      const rws = await Promise.all([0, 1, 2, 3, 4].map(async (i) => new ReadWriteLock(await client(), path, { id: `rw${i}`, naming })));
      const [r1, r2, w, r3, w2] = rws;
      await Promise.all([r1.readLock.acquire(), r2.readLock.acquire()]);
      assert.ok(r1.readLock.isHeld && r2.readLock.isHeld, "two readers at once");
      assert.match(r1.readLock.nodePath!.slice(path.length + 1), NAMES[naming].read);
      const order: string[] = [];
      const writing = w.writeLock.acquire().then(() => order.push("w"));
      await until("the writer's znode", () => w.writeLock.nodePath !== null);
      assert.match(w.writeLock.nodePath!.slice(path.length + 1), NAMES[naming].write);
      const reading = r3.readLock.acquire().then(() => order.push("r3"));
      await until("the late reader's znode", async () => (await r1.readLock.contenders()).length === 4);
      const ids = (await r1.readLock.contenders()).map((c) => c.id); // the first two readers were created concurrently
      assert.deepEqual([...ids.slice(0, 2).sort(), ...ids.slice(2)], ["rw0", "rw1", "rw2", "rw3"]);
      assert.equal(w.writeLock.isHeld, false);
      assert.equal(r3.readLock.isHeld, false);
      await r1.readLock.release();
      assert.equal(w.writeLock.isHeld, false);
      await r2.readLock.release();
      await writing;
      assert.ok(w.writeLock.isHeld && !r3.readLock.isHeld);
      const writing2 = w2.writeLock.acquire().then(() => order.push("w2"));
      await until("the second writer's znode", () => w2.writeLock.nodePath !== null);
      await w.writeLock.release();
      await reading;
      assert.ok(r3.readLock.isHeld && !w2.writeLock.isHeld, "the reader before the second writer goes first");
      await r3.readLock.release();
      await writing2;
      assert.deepEqual(order, ["w", "r3", "w2"]);
      await w2.writeLock.release();
      assert.deepEqual(await r1.readLock.contenders(), []);
    }, 30_000);

    it(`${naming}: no reader beside a writer and no two writers through a mixed workload`, async () => {
      const path = `${root}/${naming}/mixed`;
      const rws = await Promise.all([0, 1, 2, 3, 4].map(async (i) => new ReadWriteLock(await client(), path, { id: `m${i}`, naming })));
      let readers = 0;
      let writers = 0;
      let maxReaders = 0;
      const bad: string[] = [];
      await Promise.all(
        rws.map(async (rw, i) => {
          for (let k = 0; k < 8; k++) {
            const write = i < 2 ? k % 2 === 0 : k % 4 === 3; // two mostly-writers, three mostly-readers
            const lock = write ? rw.writeLock : rw.readLock;
            await lock.run(async () => {
              if (write) writers++;
              else readers++;
              maxReaders = Math.max(maxReaders, readers);
              if (writers > 1 || (writers === 1 && readers > 0)) bad.push(`writers ${writers} readers ${readers}`);
              await hold(3); // a moment inside
              if (write) writers--;
              else readers--;
            });
          }
        }),
      );
      assert.deepEqual(bad, []);
      assert.ok(maxReaders >= 2, `readers never shared (max ${maxReaders})`);
      assert.deepEqual(await rws[0].readLock.contenders(), []);
    }, 60_000);

    it(`${naming}: upgrade is refused with LockUpgradeError, downgrade is allowed, a timeout leaves nothing`, async () => {
      const path = `${root}/${naming}/grade`;
      const rw = new ReadWriteLock(await client(), path, { id: "me", naming });
      await rw.readLock.acquire();
      await assert.rejects(rw.writeLock.acquire(), (e) => e instanceof LockUpgradeError && isZooKeeperError(e, ErrorCode.APIERROR));
      assert.equal((await rw.readLock.contenders()).length, 1, "the refused writer sent nothing");
      await rw.readLock.release();
      await rw.writeLock.acquire();
      await rw.readLock.acquire(); // downgrade: our own writer does not block our reader
      const other = new ReadWriteLock(await client(), path, { id: "other", naming });
      await assert.rejects(other.readLock.acquire({ timeout: 100 }), (e) => isZooKeeperError(e, ErrorCode.OPERATIONTIMEOUT));
      await rw.writeLock.release();
      assert.ok(rw.readLock.isHeld);
      await other.readLock.acquire(); // only readers now
      await assert.rejects(other.writeLock.acquire(), LockUpgradeError);
      const third = new ReadWriteLock(await client(), path, { id: "third", naming });
      await assert.rejects(third.writeLock.acquire({ timeout: 100 }), (e) => isZooKeeperError(e, ErrorCode.OPERATIONTIMEOUT));
      assert.deepEqual((await rw.readLock.contenders()).map((c) => c.id), ["me", "other"]);
      await rw[Symbol.asyncDispose]();
      await other[Symbol.asyncDispose]();
      assert.deepEqual(await rw.readLock.contenders(), []);
    }, 30_000);
  }

  it("rejects bad arguments with BADARGUMENTS", () => {
    const zk = {} as ZooKeeper;
    assert.throws(() => new ReadWriteLock(zk, "relative"), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    assert.throws(() => new ReadWriteLock(zk, "/x", { naming: "zk" as never }), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    assert.throws(() => new ReadWriteLock(zk, "/x", { id: 5 as never }), (e) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
  });
});
