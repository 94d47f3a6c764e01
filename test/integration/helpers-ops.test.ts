// The client helpers against a real server: create({ createParents }) (concurrent creators),
// deleteRecursive (many multi batches under a small maxBufferSize, nodes appearing meanwhile, NONODE
// only for a root that never existed), withRetry across real connection cuts (a fault proxy), and
// { signal } (rejects with the reason; nothing sent when aborted early; no watcher left behind).
import { describe, it, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ErrorCode, ZooKeeper, ZooKeeperError, withRetry, type SessionState } from "../../src/index.ts";
import { OpCode } from "../../src/protocol/constants.ts";
import { SharedSessions, rejectsWith, removeRoot, uniqueRoot } from "../support/sessions.ts";
import type { FaultProxy } from "../support/fakes/fault-proxy.ts";

const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));

function nextState(zk: ZooKeeper, wanted: SessionState): Promise<void> {
  return new Promise((resolve) => {
    const on = (s: SessionState): void => {
      if (s === wanted) (zk.off("state", on), resolve());
    };
    zk.on("state", on);
  });
}

describe("client helpers (real server, fault proxy)", () => {
  const sessions = new SharedSessions();
  let zk: ZooKeeper;
  let proxy: FaultProxy;
  let viaProxy: ZooKeeper;
  const root = uniqueRoot("helpers");
  sessions.hooks(async () => removeRoot(await sessions.client(), root));

  beforeAll(async () => {
    zk = await sessions.client();
    await zk.create(root);
    proxy = await sessions.proxy();
    viaProxy = await sessions.client({ connectString: proxy.connectString, trackEnsemble: false }); // its bytes are counted: no tracker read
  });

  it("create with createParents makes the missing ancestors; concurrent creators race safely", async () => {
    const base = `${root}/cp/x/y`;
    assert.equal(await zk.create(`${base}/leaf`, "v", { createParents: true }), `${base}/leaf`);
    assert.equal(dec((await zk.getData(`${base}/leaf`)).data), "v");
    const others = await Promise.all([0, 1, 2].map(() => sessions.client()));
    const paths = others.flatMap((c, i) => [0, 1, 2].map((j) => c.create(`${root}/race/a/b/n${i}-${j}`, null, { createParents: true })));
    assert.equal((await Promise.all(paths)).length, 9);
    assert.equal((await zk.getChildren(`${root}/race/a/b`)).length, 9);
    await rejectsWith(zk.create(`${root}/cp/x/y/leaf`, "again", { createParents: true }), "NODEEXISTS");
    await rejectsWith(zk.create(`${root}/plain/missing/leaf`), "NONODE"); // without the option nothing changes
  }, 60_000);

  it("deleteRecursive removes a tree in several bounded multi batches; NONODE only for a root that never was", async () => {
    const small = await sessions.client({ maxBufferSize: 4096 });
    const t = `${root}/tree`;
    await zk.create(t);
    const made: Promise<string>[] = [];
    for (let i = 0; i < 20; i++) for (let j = 0; j < 10; j++) made.push(zk.create(`${t}/branch-${i}/leaf-${j}`, null, { createParents: true }));
    await Promise.all(made);
    // 221 delete ops of ~60 bytes: one multi would be ~13 KB, three times the 4 KB limit.
    await small.deleteRecursive(t);
    assert.equal(await zk.exists(t), null);
    await rejectsWith(small.deleteRecursive(`${root}/never`), "NONODE");
    await rejectsWith(small.deleteRecursive("/"), "BADARGUMENTS");
  }, 60_000);

  it("deleteRecursive tolerates nodes created and deleted while it runs", async () => {
    const t = `${root}/busy`;
    for (let i = 0; i < 30; i++) await zk.create(`${t}/d${i % 5}/n${i}`, null, { createParents: true });
    const other = await sessions.client();
    let churn = true;
    const churner = (async () => {
      // Adds and removes nodes inside the tree until the deletion is over (failures once it is gone are expected).
      for (let i = 0; churn && i < 500; i++) {
        await other.create(`${t}/d${i % 5}/late${i}`).catch(() => {});
        await other.delete(`${t}/d${(i + 2) % 5}/n${(i * 7) % 30}`).catch(() => {});
      }
    })();
    try {
      await zk.deleteRecursive(t);
    } finally {
      churn = false;
      await churner;
    }
    assert.equal(await zk.exists(t), null);
  }, 60_000);

  it("deleteRecursive with a signal on 1,000 children (and nested): one listener on the signal, no MaxListenersExceededWarning", async () => {
    const t = `${root}/wide`;
    await zk.create(t);
    await zk.create(`${t}/flat`);
    const made = Array.from({ length: 1000 }, (_, i) => zk.create(`${t}/flat/c${i}`));
    for (let i = 0; i < 20; i++) for (let j = 0; j < 50; j++) made.push(zk.create(`${t}/deep/b${i}/l${j}`, null, { createParents: true }));
    await Promise.all(made);
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", onWarning);
    try {
      // Aborted while its first reads are in flight: rejects with the reason, the tree is still there.
      const early = new AbortController();
      const reason = new Error("stop");
      const stopped = zk.deleteRecursive(t, { signal: early.signal });
      early.abort(reason);
      await assert.rejects(stopped, (e) => e === reason);
      assert.notEqual(await zk.exists(`${t}/flat`), null);
      await zk.deleteRecursive(t, { signal: new AbortController().signal });
    } finally {
      process.off("warning", onWarning);
    }
    assert.equal(await zk.exists(t), null);
    assert.deepEqual(warnings, []);
  }, 60_000);

  it("withRetry retries a call cut by CONNECTIONLOSS and returns its result", async () => {
    const p = `${root}/retry`;
    await zk.create(p, "payload");
    const cut = proxy.cutAfterRequest(OpCode.getData, { forward: false });
    const codes: number[] = [];
    const got = await withRetry(async ({ attempt }) => {
      try {
        return await viaProxy.getData(p);
      } catch (e) {
        codes.push((e as ZooKeeperError).code);
        assert.equal(attempt, codes.length - 1);
        throw e;
      }
    }, { baseDelay: 50 });
    assert.ok((await cut).fired);
    assert.deepEqual(codes, [ErrorCode.CONNECTIONLOSS]);
    assert.equal(dec(got.data), "payload");
  }, 60_000);

  it("withRetry gives up after `retries`, never retries SESSIONEXPIRED or other errors, and stops on abort", async () => {
    let calls = 0;
    const loss = new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "cut");
    await assert.rejects(withRetry(async () => (calls++, Promise.reject(loss)), { retries: 2, baseDelay: 1 }), (e) => e === loss);
    assert.equal(calls, 3);
    for (const code of [ErrorCode.SESSIONEXPIRED, ErrorCode.NONODE]) {
      calls = 0;
      await assert.rejects(withRetry(async () => (calls++, Promise.reject(new ZooKeeperError(code)))), (e) => (e as ZooKeeperError).code === code);
      assert.equal(calls, 1);
    }
    const ac = new AbortController();
    const reason = new Error("stop");
    calls = 0;
    const running = withRetry(async () => (calls++ === 0 && setTimeout(() => ac.abort(reason), 10), Promise.reject(loss)), { baseDelay: 60_000, maxDelay: 60_000, signal: ac.signal });
    await assert.rejects(running, (e) => e === reason);
    await assert.rejects(withRetry(async () => 1, { retries: -1 }), /retries must be a non-negative number/);
  }, 30_000);

  it("{ signal }: an aborted signal rejects with its reason and sends nothing", async () => {
    const ac = new AbortController();
    const reason = new Error("cancelled");
    ac.abort(reason);
    const before = proxy.bytes().up;
    await assert.rejects(viaProxy.getData(`${root}/x`, undefined, { signal: ac.signal }), (e) => e === reason);
    await assert.rejects(viaProxy.create(`${root}/never-made`, null, { signal: ac.signal }), (e) => e === reason);
    await assert.rejects(viaProxy.multi([], { signal: ac.signal }), (e) => e === reason);
    assert.equal(proxy.bytes().up, before);
    await rejectsWith(viaProxy.exists("/", undefined, { signal: "soon" as unknown as AbortSignal }), "BADARGUMENTS");
    assert.equal(await viaProxy.exists(`${root}/never-made`), null);
  }, 30_000);

  it("{ signal }: a request waiting for a connection is dropped unsent when aborted", async () => {
    const p = `${root}/queued`;
    await zk.create(p, "before");
    proxy.refuse(true);
    const down = nextState(viaProxy, "disconnected");
    proxy.cut();
    await down;
    const ac = new AbortController();
    const pending = viaProxy.setData(p, "after", undefined, { signal: ac.signal });
    ac.abort(new Error("gave up"));
    await assert.rejects(pending, /gave up/);
    const up = nextState(viaProxy, "connected");
    proxy.refuse(false);
    await up;
    await viaProxy.sync(p); // a request queued before this one would have gone first
    assert.equal(dec((await zk.getData(p)).data), "before");
  }, 60_000);

  it("{ signal }: aborted before its reply, a getData or addWatch leaves no watcher behind", async () => {
    const p = `${root}/watched`;
    await zk.create(p, "0");
    const fired: string[] = [];
    proxy.delay(300);
    const ac = new AbortController();
    const read = viaProxy.getData(p, () => fired.push("aborted getData"), { signal: ac.signal });
    const persistent = viaProxy.addWatch(p, 0, () => fired.push("aborted addWatch"), { signal: ac.signal });
    ac.abort(new Error("no longer needed"));
    await assert.rejects(read, /no longer needed/);
    await assert.rejects(persistent, /no longer needed/);
    proxy.delay(0);
    await viaProxy.sync(p); // both late replies have arrived (one connection, replies in order)
    const control: string[] = [];
    await viaProxy.exists(p, () => control.push("control"));
    await zk.setData(p, "1");
    await zk.setData(p, "2");
    await viaProxy.sync(p); // notifications come before the reply to a later request
    await viaProxy.getData(p);
    assert.deepEqual(control, ["control"]);
    assert.deepEqual(fired, []);
  }, 60_000);
});
