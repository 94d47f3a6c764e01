// Never a false "failed": writes whose replies are dropped (the fault proxy forwards the request to the real
// server and cuts the client's link before the reply), then sent again through withRetry. A write that happened
// resolves as the success it was; one that did not stays the refusal it is; one nobody can judge is
// OutcomeUnknownError; never BADVERSION or NODEEXISTS for a write that happened. A call never written to a link
// rejects with `sent: false` and is retried whatever it is.
import { describe, it, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { CreateMode, ErrorCode, OutcomeUnknownError, type Transport, ZooKeeper, ZooKeeperError, defaultTransport, withRetry } from "../../src/index.ts";
import { OpCode } from "../../src/protocol/constants.ts";
import { SharedSessions, rejectsWith, removeRoot, uniqueRoot } from "../support/sessions.ts";
import type { FaultProxy } from "../support/fakes/fault-proxy.ts";
import { untilState, until } from "../support/wait.ts";

const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));

/** Runs `fn` through withRetry, recording each attempt's error. */
async function retried<T>(fn: () => Promise<T>): Promise<{ value?: T; error?: unknown; attempts: unknown[] }> {
  const attempts: unknown[] = [];
  try {
    const value = await withRetry(async () => {
      try {
        return await fn();
      } catch (e) {
        attempts.push(e);
        throw e;
      }
    }, { baseDelay: 20, maxDelay: 200 });
    return { value, attempts };
  } catch (error) {
    return { error, attempts };
  }
}

describe("unknown outcomes (real server, replies dropped by the fault proxy)", () => {
  const sessions = new SharedSessions();
  let zk: ZooKeeper;
  let proxy: FaultProxy;
  let viaProxy: ZooKeeper;
  const root = uniqueRoot("outcomes");
  sessions.hooks(async () => removeRoot(await sessions.client(), root));

  beforeAll(async () => {
    zk = await sessions.client();
    await zk.create(root);
    proxy = await sessions.proxy();
    viaProxy = await sessions.client({ connectString: proxy.connectString });
  });

  it("a versioned setData of unique bytes applied but its reply lost resolves as the success it was, five times in five", async () => {
    const p = `${root}/cas`;
    await zk.create(p, "v0");
    for (let i = 1; i <= 5; i++) {
      const { stat } = await viaProxy.getData(p);
      const cut = proxy.cutAfterRequest(OpCode.setData, { forward: true });
      const out = await retried(() => viaProxy.setData(p, `v${i}`, stat.version, { uniqueData: true }));
      const seen = await cut;
      assert.equal(seen.serverErr, ErrorCode.OK, "the server applied the first attempt");
      assert.equal(out.error, undefined, `attempt errors: ${out.attempts.map(String).join(" | ")}`);
      // The first attempt lost its reply (sent); the retry was refused BADVERSION by the first's own write, then judged.
      assert.equal((out.attempts[0] as ZooKeeperError).code, ErrorCode.CONNECTIONLOSS);
      assert.equal((out.attempts[0] as ZooKeeperError).sent, true);
      assert.equal(out.value!.version, stat.version + 1);
      const now = await zk.getData(p);
      assert.equal(dec(now.data), `v${i}`);
      assert.equal(now.stat.version, stat.version + 1);
    }
  }, 90_000);

  it("the same, without uniqueData: OutcomeUnknownError (another client could have written the same bytes), never BADVERSION", async () => {
    const p = `${root}/cas-shared`;
    await zk.create(p, "5");
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: true });
    const out = await retried(() => viaProxy.setData(p, "6", 0)); // a counter moved from 5 to 6: others may write "6" too
    assert.equal((await cut).serverErr, ErrorCode.OK);
    assert.ok(out.error instanceof OutcomeUnknownError, String(out.error));
    assert.equal((out.error.attempts[1] as ZooKeeperError).code, ErrorCode.BADVERSION);
    assert.match(out.error.message, /another client may have written the very same bytes/);
    assert.equal(dec((await zk.getData(p)).data), "6");
  }, 60_000);

  it("a versioned setData that never reached the server is sent again and succeeds", async () => {
    const p = `${root}/cas-unsent`;
    await zk.create(p, "a");
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: false });
    const out = await retried(() => viaProxy.setData(p, "b", 0));
    assert.ok((await cut).fired);
    assert.equal(out.error, undefined);
    assert.equal((out.attempts[0] as ZooKeeperError).sent, true); // written to the link: the client cannot know the proxy held it
    assert.equal(out.value!.version, 1);
    assert.equal(dec((await zk.getData(p)).data), "b");
  }, 60_000);

  it("a lost setData that did not apply, with another writer moving the version meanwhile, is a true BADVERSION", async () => {
    const p = `${root}/cas-other`;
    await zk.create(p, "a");
    // A compare-and-set reads first: the read's zxid tells the client the node predates its write (judge()'s bound).
    assert.equal((await viaProxy.getData(p)).stat.version, 0);
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: false });
    const first = rejectsWith(viaProxy.setData(p, "mine", 0), "CONNECTIONLOSS");
    await cut;
    const e1 = await first;
    assert.equal(e1.sent, true);
    await zk.setData(p, "theirs", 0);
    await untilState(viaProxy, "connected");
    const e2 = await rejectsWith(viaProxy.setData(p, "mine", 0), "BADVERSION");
    assert.ok(!(e2 instanceof OutcomeUnknownError));
    assert.equal(dec((await zk.getData(p)).data), "theirs");
  }, 60_000);

  it("a lost setData that applied and was then overwritten is OutcomeUnknownError carrying both attempts", async () => {
    const p = `${root}/cas-hidden`;
    await zk.create(p, "a");
    const cut = proxy.cutAfterRequest(OpCode.setData, { forward: true });
    const first = rejectsWith(viaProxy.setData(p, "mine", 0, { uniqueData: true }), "CONNECTIONLOSS");
    assert.equal((await cut).serverErr, ErrorCode.OK);
    const e1 = await first;
    await zk.setData(p, "later", 1); // hides whether "mine" was ever there
    await untilState(viaProxy, "connected");
    const e2 = await viaProxy.setData(p, "mine", 0, { uniqueData: true }).catch((e: unknown) => e);
    assert.ok(e2 instanceof OutcomeUnknownError, String(e2));
    assert.equal(e2.code, ErrorCode.CONNECTIONLOSS);
    assert.equal(e2.attempts[0], e1);
    assert.equal((e2.attempts[1] as ZooKeeperError).code, ErrorCode.BADVERSION);
    assert.match(e2.message, /the outcome is unknown: .*BADVERSION.*version 2/);
  }, 60_000);

  it("a lost create (ephemeral and persistent) that applied resolves as created; someone else's node stays NODEEXISTS", async () => {
    for (const mode of [CreateMode.EPHEMERAL, CreateMode.PERSISTENT]) {
      const p = `${root}/made-${mode}`;
      const cut = proxy.cutAfterRequest(OpCode.create, { forward: true });
      const out = await retried(() => viaProxy.create(p, "data", { mode, uniqueData: true }));
      assert.equal((await cut).serverErr, ErrorCode.OK);
      assert.equal(out.error, undefined, `attempt errors: ${out.attempts.map(String).join(" | ")}`);
      assert.equal(out.value, p);
      if (mode === CreateMode.EPHEMERAL) assert.equal((await zk.exists(p))!.ephemeralOwner, viaProxy.sessionId);
    }
    await zk.create(`${root}/taken`, "theirs");
    await rejectsWith(withRetry(() => viaProxy.create(`${root}/taken`, "data", { uniqueData: true })), "NODEEXISTS");
  }, 60_000);

  it("a lost sequential create is not sent again: OutcomeUnknownError at once", async () => {
    const cut = proxy.cutAfterRequest(OpCode.create, { forward: true });
    const out = await retried(() => viaProxy.create(`${root}/seq-`, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL }));
    assert.equal((await cut).serverErr, ErrorCode.OK);
    assert.ok(out.error instanceof OutcomeUnknownError, String(out.error));
    assert.equal(out.attempts.length, 1);
    assert.equal((await zk.getChildren(root)).filter((c) => c.startsWith("seq-")).length, 1); // made once, not twice
  }, 60_000);

  it("calls never written to a link reject with sent: false, and withRetry sends them again whatever they are", async () => {
    // A transport over the default one whose link can be made to take no more bytes (write() false, and the
    // bytes dropped), then dropped: the frame that met the full link was handed to it (sent, as far as the
    // client can know); the frames queued behind it never were.
    let full = false;
    let heldWrites = 0;
    let drop: (() => void) | null = null;
    const transport: Transport = {
      async connect(target, handlers, options) {
        const link = await defaultTransport.connect(target, handlers, options);
        drop = () => (link.close(), handlers.onClose(new Error("dropped by the test")));
        return { remote: link.remote, close: () => link.close(), write: (bytes) => (full ? (heldWrites++, false) : link.write(bytes)) };
      },
    };
    const c = await sessions.client({ transport });
    full = true;
    const read = c.getData(root).then(() => assert.fail("answered"), (e: unknown) => e as ZooKeeperError);
    await until("the read's frame handed to the full link", () => heldWrites === 1);
    const attempts: ZooKeeperError[] = [];
    // A sequential create, which is never sent again once it may have been applied: this one never left the client.
    const made = withRetry(async () => {
      try {
        return await c.create(`${root}/queued-`, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
      } catch (e) {
        attempts.push(e as ZooKeeperError);
        throw e;
      }
    }, { baseDelay: 1 });
    full = false;
    drop!();
    const path = await made;
    assert.ok(path.startsWith(`${root}/queued-`));
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0]!.code, ErrorCode.CONNECTIONLOSS);
    assert.equal(attempts[0]!.sent, false);
    assert.match(attempts[0]!.message, /\(not sent\)$/);
    const lostRead = await read;
    assert.equal(lostRead.code, ErrorCode.CONNECTIONLOSS);
    assert.equal(lostRead.sent, true);
    assert.match(lostRead.message, /\(sent: it may have been applied\)$/);
    assert.equal((await zk.getChildren(root)).filter((n) => n.startsWith("queued-")).length, 1);
    // After close(), calls are refused unsent.
    await c.close();
    const closed = await rejectsWith(c.getData(root), "SESSIONEXPIRED");
    assert.equal(closed.sent, false);
  }, 60_000);
});
