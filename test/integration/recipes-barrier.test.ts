// Barrier and DoubleBarrier against a real server: several clients wait on one barrier and are released by its
// removal (also when it is removed and set again while a waiter is cut off); a double barrier of size N lets
// nobody in before N have entered and nobody out before all have left, on both layouts.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, isZooKeeperError } from "../../src/index.ts";
import { Barrier, BarrierTimeoutError, DoubleBarrier, RecipeStateError } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { until, untilState } from "../support/wait.ts";

const root = `/t-recipes-barrier-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();

describe("Barrier", () => {
  sessions.hooks(async () => removeRoot(await sessions.client(), root));

  it("waiters on several clients are released by the removal, not before", async () => {
    const path = `${root}/b1`;
    const owner = new Barrier(await sessions.client(), path);
    await owner.set();
    await owner.set(); // raising it twice is harmless
    assert.equal(await owner.isSet(), true);
    const released: number[] = [];
    const waiters = await Promise.all([0, 1, 2, 3].map(async () => new Barrier(await sessions.client(), path)));
    const waits = waiters.map((b, i) => b.wait().then(() => void released.push(i)));
    await sessions.settled(); // every waiter's watch is in place and nothing fired
    assert.deepEqual(released, []);
    await owner.remove();
    await Promise.all(waits);
    assert.equal(released.length, 4);
    await owner.remove(); // lowering it twice is harmless
    await new Barrier(await sessions.client(), path).wait(); // already down: resolves at once
  }, 30_000);

  it("a wait times out with BarrierTimeoutError, aborts with the signal's reason, ends with SESSIONEXPIRED when its client closes", async () => {
    const path = `${root}/b2`;
    const zk = await sessions.client();
    const b = new Barrier(zk, path);
    await b.set();
    await assert.rejects(b.wait({ timeout: 200 }), (e: unknown) => e instanceof BarrierTimeoutError && e.code === ErrorCode.OPERATIONTIMEOUT && e.timeout === 200);
    const ac = new AbortController();
    const w = b.wait({ signal: ac.signal });
    ac.abort(new Error("stop"));
    await assert.rejects(w, /stop/);
    await assert.rejects(b.wait({ timeout: -1 }), (e: unknown) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    assert.throws(() => new Barrier(zk, "relative"), (e: unknown) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    const closing = await sessions.client();
    const ended = new Barrier(closing, path).wait();
    await closing.sync("/");
    await closing.close();
    await assert.rejects(ended, (e: unknown) => isZooKeeperError(e, ErrorCode.SESSIONEXPIRED));
    await b.remove();
  }, 30_000);

  it("a removal and a new set() while the waiter is cut off still end its wait", async () => {
    const path = `${root}/b3`;
    const proxy = await sessions.proxy();
    const cutOff = await sessions.client({ connectString: proxy.connectString });
    const owner = new Barrier(await sessions.client(), path);
    await owner.set();
    const before = (await (await sessions.client()).exists(path))!.czxid;
    let done = false;
    const w = new Barrier(cutOff, path).wait().then(() => void (done = true));
    await cutOff.sync("/"); // the wait's exists (and its watch) went before this
    proxy.blackhole(true); // its reconnect attempts hang until the blackhole ends
    proxy.cut();
    await untilState(cutOff, "disconnected");
    await owner.remove();
    await owner.set(); // up again by the time the waiter is back: only the deletion it missed can release it
    assert.notEqual((await (await sessions.client()).exists(path))!.czxid, before);
    assert.equal(done, false);
    proxy.blackhole(false);
    await w;
    assert.equal(cutOff.state, "connected");
    await owner.remove();
  }, 30_000);
});

describe("DoubleBarrier", () => {
  for (const naming of ["curator", "kazoo"] as const) {
    it(`size 4 (${naming}): nobody is in before the 4th enters, nobody out before all have left`, async () => {
      const path = `${root}/double-${naming}`;
      const size = 4;
      const log: string[] = [];
      const members = await Promise.all(Array.from({ length: size + 1 }, async (_, i) => new DoubleBarrier(await sessions.client(), path, { size, id: `m${i}`, naming })));
      const admin = await sessions.client();
      // Three enter and wait.
      const entering = members.slice(0, 3).map((m, i) => m.enter().then(() => log.push(`in ${i}`)));
      await until("three participants", async () => (await admin.getChildren(path).catch(() => [])).length === 3);
      await sessions.settled();
      assert.deepEqual(log, [], "nobody may be in with 3 of 4");
      const names = (await admin.getChildren(path)).sort();
      const pattern = naming === "curator" ? /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/ : /^[0-9a-f]{32}$/;
      assert.ok(names.every((n) => pattern.test(n)), names.join(","));
      assert.deepEqual(new Set(await Promise.all(names.map(async (n) => new TextDecoder().decode((await admin.getData(`${path}/${n}`)).data!)))), new Set(["m0", "m1", "m2"]));
      await members[3]!.enter();
      await Promise.all(entering);
      assert.equal(log.length, 3);
      assert.ok((await admin.exists(`${path}/ready`)) !== null);
      await assert.rejects(members[0]!.enter(), (e: unknown) => e instanceof RecipeStateError);
      // A fifth one comes late: size is a threshold, it is in at once.
      await members[4]!.enter();
      // Four leave; the fifth stays, so none of their leaves may end.
      let left = 0;
      const leaving = members.slice(0, 4).map((m) => m.leave().then(() => left++));
      await until("only the fifth participant left", async () => (await admin.getChildren(path)).filter((c) => c !== "ready").length === 1);
      await sessions.settled();
      assert.equal(left, 0, "nobody may be out while a participant is in");
      await members[4]!.leave();
      await Promise.all(leaving);
      assert.deepEqual(await admin.getChildren(path), [], "participants and ready are gone");
      await assert.rejects(members[0]!.leave(), (e: unknown) => e instanceof RecipeStateError);
    }, 30_000);
  }

  it("an enter that times out leaves no participant behind", async () => {
    const path = `${root}/double-timeout`;
    const zk = await sessions.client();
    const m = new DoubleBarrier(zk, path, { size: 2 });
    await assert.rejects(m.enter({ timeout: 200 }), (e: unknown) => e instanceof BarrierTimeoutError && e.op === "enter");
    assert.deepEqual(await zk.getChildren(path), []);
    assert.equal(m.nodePath, null);
    assert.throws(() => new DoubleBarrier(zk, path, { size: 0 }), (e: unknown) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
  }, 30_000);
});
