// SharedCount against a real server: the two layouts on the wire, compare-and-set under contention (the final
// value is the number of sets that reported success), "change" events, and a set whose reply is lost (the
// fault proxy cuts the link at the setData frame): read back as applied-or-unknown, never as a failure.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, OutcomeUnknownError, type ZooKeeperError, isZooKeeperError } from "../../src/index.ts";
import { OpCode } from "../../src/protocol/constants.ts";
import { SharedCount, type VersionedCount } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { until, untilState } from "../support/wait.ts";

const root = `/t-recipes-count-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();

describe("SharedCount", () => {
  sessions.hooks(async () => removeRoot(await sessions.client(), root));

  it("stores a 4-byte big-endian int (curator) or decimal text (kazoo); an empty znode reads as the initial value", async () => {
    const admin = await sessions.client();
    const c = new SharedCount(await sessions.client(), `${root}/curator`, { initial: 7 });
    assert.deepEqual(await c.get(), { value: 7, version: 0 });
    assert.deepEqual([...(await admin.getData(`${root}/curator`)).data!], [0, 0, 0, 7]);
    assert.equal(await c.trySet(-2, 0), true);
    assert.deepEqual([...(await admin.getData(`${root}/curator`)).data!], [0xff, 0xff, 0xff, 0xfe]);
    assert.equal(await c.trySet(5, 0), false, "version 0 is gone");
    assert.deepEqual(await c.get(), { value: -2, version: 1 });
    await assert.rejects(c.trySet(2 ** 31, 1), (e: unknown) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
    await assert.rejects(c.trySet(1, -1), (e: unknown) => isZooKeeperError(e, ErrorCode.BADARGUMENTS), "-1 would be unconditional");

    await admin.create(`${root}/kazoo`, null); // what kazoo's ensure_path leaves
    const k = new SharedCount(await sessions.client(), `${root}/kazoo`, { naming: "kazoo" });
    assert.deepEqual(await k.get(), { value: 0, version: 0 });
    assert.deepEqual(await k.increment(5), { value: 5, version: 1 });
    assert.equal(new TextDecoder().decode((await admin.getData(`${root}/kazoo`)).data!), "5");
    await admin.setData(`${root}/kazoo`, "5.5");
    await assert.rejects(k.get(), (e: unknown) => isZooKeeperError(e, ErrorCode.MARSHALLINGERROR));
  }, 30_000);

  for (const naming of ["curator", "kazoo"] as const) {
    it(`CAS under contention (${naming}): the final value is the number of successful sets`, async () => {
      const path = `${root}/contended-${naming}`;
      const counts = await Promise.all([0, 1, 2, 3, 4].map(async () => new SharedCount(await sessions.client(), path, { naming })));
      let won = 0;
      let lost = 0;
      await Promise.all(
        counts.map(async (c) => {
          for (let i = 0; i < 30; i++) {
            const now = await c.get();
            if (await c.trySet(now.value + 1, now.version)) won++;
            else lost++;
          }
        }),
      );
      console.log(`${naming}: 150 tries, ${won} sets landed, ${lost} lost to another write`);
      assert.deepEqual(await counts[0]!.get(), { value: won, version: won });
      await Promise.all(counts.map(async (c) => { for (let i = 0; i < 10; i++) await c.increment(); }));
      assert.equal((await counts[1]!.get()).value, won + 50);
    }, 60_000);
  }

  it("change events follow the writes of other clients, also across a cut link", async () => {
    const path = `${root}/watched`;
    const proxy = await sessions.proxy();
    const watcherZk = await sessions.client({ connectString: proxy.connectString });
    const watcher = new SharedCount(watcherZk, path);
    const writer = new SharedCount(await sessions.client(), path);
    const seen: VersionedCount[] = [];
    await writer.get();
    watcher.on("change", (c) => seen.push(c));
    await until("first read", () => seen.length === 1);
    assert.equal(await writer.trySet(1, 0), true);
    await until("set to 1", () => seen.at(-1)?.value === 1);
    proxy.refuse(true);
    proxy.cut();
    await untilState(watcherZk, "disconnected");
    await writer.increment(); // while the watcher is cut off
    proxy.refuse(false);
    await until("set to 2 seen after the reconnect", () => seen.at(-1)?.value === 2);
    assert.deepEqual(seen, [{ value: 0, version: 0 }, { value: 1, version: 1 }, { value: 2, version: 2 }]);
    watcher.close();
    await writer.increment();
    await sessions.settled();
    assert.equal(seen.length, 3, "closed: no more events");
  }, 30_000);

  it("a set whose reply is lost after the server applied it is reported unknown, not failed", async () => {
    const path = `${root}/lost-reply`;
    const proxy = await sessions.proxy();
    const c = new SharedCount(await sessions.client({ connectString: proxy.connectString }), path);
    const now = await c.get();
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: true });
    const outcome = c.trySet(41, now.version).then((ok) => ok, (e: unknown) => e);
    const fired = await cut;
    assert.equal(fired.serverErr, 0, "the server applied the set; only its reply was lost");
    const e = await outcome;
    // Sent again, refused BADVERSION by its own first attempt, judged by the client: 41 at the next version may be
    // another incrementer's 41 as well as ours, so it is unknown (never false).
    assert.ok(e instanceof OutcomeUnknownError, String(e));
    assert.equal(e.code, ErrorCode.CONNECTIONLOSS);
    assert.equal((e.attempts[0] as ZooKeeperError).sent, true);
    assert.equal((e.attempts[1] as ZooKeeperError).code, ErrorCode.BADVERSION);
    assert.deepEqual(await c.get(), { value: 41, version: now.version + 1 });
  }, 30_000);

  it("a set lost before the server saw it is read back as not applied and sent again", async () => {
    const path = `${root}/lost-request`;
    const proxy = await sessions.proxy();
    const c = new SharedCount(await sessions.client({ connectString: proxy.connectString }), path);
    const now = await c.get();
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: false });
    const ok = c.trySet(42, now.version);
    assert.equal((await cut).fired, true);
    assert.equal(await ok, true);
    assert.deepEqual(await c.get(), { value: 42, version: now.version + 1 });
  }, 30_000);

  it("a lost reply when another client wrote the next version is a definite failure", async () => {
    const path = `${root}/lost-race`;
    const proxy = await sessions.proxy();
    const c = new SharedCount(await sessions.client({ connectString: proxy.connectString }), path);
    const other = new SharedCount(await sessions.client(), path);
    const now = await c.get();
    proxy.refuse(true); // the link in use works; a reconnect is turned away until refuse(false)
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: false });
    const outcome = c.trySet(43, now.version);
    assert.equal((await cut).fired, true); // the set never reached the server
    assert.equal(await other.trySet(99, now.version), true); // another write takes the version meanwhile
    proxy.refuse(false);
    assert.equal(await outcome, false);
    assert.deepEqual(await c.get(), { value: 99, version: now.version + 1 });
  }, 30_000);
});
