// Bad input at the public API, including what plain JavaScript callers can pass (everything is cast
// through unknown): each call fails with a clear ZooKeeperError (BADARGUMENTS, INVALIDACL, or
// SESSIONEXPIRED on a closed client) and NOTHING reaches the wire: the fault proxy's byte counters
// in front of the real server move by one sync round trip and no more (a valid call right after is
// the positive control).
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { CreateMode, ErrorCode, Op, Perms, WatcherType, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { trackUnhandled, within } from "../stress/helpers.ts";
import { never } from "../support/wait.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any -- plain-JS callers, on purpose
const js = (zk: ZooKeeper): Any => zk as unknown as Any;

const { BADARGUMENTS, INVALIDACL, CONNECTIONLOSS } = ErrorCode;
const noop = (): void => {};
const OPEN = [{ perms: Perms.ALL, id: { scheme: "world", id: "anyone" } }];

/** Runs a call that may throw synchronously or reject; returns the error (or "resolved"). */
async function failure(call: () => unknown): Promise<unknown> {
  try {
    const r = call();
    if (r && typeof (r as Promise<unknown>).then === "function") await r;
    else if (r && typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function") {
      await (r as AsyncIterable<unknown>)[Symbol.asyncIterator]().next();
    }
    return "resolved";
  } catch (e) {
    return e;
  }
}

const badPaths: unknown[] = ["", "relative", "/trailing/", "//double", "/a//b", "/a/./b", "/a/../b", "/.", "/nul\u0000", "/ctl\u0001", "/del\u007f", "/sur\ud800", "/pri\ue000", "/x\ufff0", 42, null, undefined, {}, ["/a"], Symbol("p")];

describe("bad input at the API: a clear error and nothing on the wire", () => {
  let proxy: FaultProxy;
  let zk: ZooKeeper;
  let dials = 0;
  let syncBytes: { up: number; down: number }; // what one sync("/") and its reply weigh on the wire
  const root = uniqueRoot("hostile-badinput");

  beforeAll(async () => {
    const { connectString } = await sharedServer();
    const [host, port] = connectString.split(",")[0]!.split("/")[0]!.split(":");
    proxy = await startFaultProxy(host!, Number(port), { onConnection: () => dials++ });
    // 40 s sessions: the first ping is ≥ 10 s after the last request, so no ping moves the counter.
    zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 40_000, trackEnsemble: false }); // its bytes are counted: no tracker read
    await zk.create(root);
    await zk.create(`${root}/n`, "x");
    const a = proxy.bytes();
    await zk.sync("/");
    const b = proxy.bytes();
    syncBytes = { up: b.up - a.up, down: b.down - a.down };
    assert.ok(syncBytes.up > 0 && syncBytes.down > 0, `a sync must be counted: ${JSON.stringify(syncBytes)}`);
  });

  afterAll(async () => {
    if (zk) await removeRoot(zk, root); // the run's nodes are all below root
    await zk?.close();
    await proxy?.close();
  });

  /**
   * Every case must fail with `code` and send nothing: after them, a sync round trip moves the up and
   * down byte counters by exactly one sync. The client has one send path and the server answers in
   * order, so anything a case queued would have gone out before that sync and been counted by its reply.
   */
  async function expectNothingSent(cases: [string, () => unknown, number][]): Promise<void> {
    await zk.sync("/"); // a fresh request: the link is idle and no ping is due for 10 s
    const before = proxy.bytes();
    const wrong: string[] = [];
    for (const [name, call, code] of cases) {
      const e = await failure(call);
      if (!(e instanceof ZooKeeperError)) wrong.push(`${name}: ${e === "resolved" ? "resolved" : `threw ${String(e)}`}`);
      else if (e.code !== code) wrong.push(`${name}: ${e.codeName} instead of ${ErrorCode[code === BADARGUMENTS ? "BADARGUMENTS" : code === INVALIDACL ? "INVALIDACL" : "CONNECTIONLOSS"]} (${e.message})`);
      else if (e.message.length < 12) wrong.push(`${name}: unclear message ${JSON.stringify(e.message)}`);
    }
    await zk.sync("/");
    const after = proxy.bytes();
    assert.deepEqual(wrong, [], `wrong outcomes:\n${wrong.join("\n")}`);
    const moved = { up: after.up - before.up, down: after.down - before.down };
    assert.deepEqual(moved, syncBytes, `bytes moved beyond one sync (${JSON.stringify(syncBytes)}): ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
    // Positive control: a valid call does move the counter.
    await zk.exists(root);
    assert.ok(proxy.bytes().up > after.up, "a valid call must be counted");
  }

  it("invalid paths, for every path-taking method", async () => {
    const unhandled = trackUnhandled();
    const cases: [string, () => unknown, number][] = [];
    for (const p of badPaths) {
      const z = js(zk);
      const label = typeof p === "symbol" ? "symbol" : JSON.stringify(p) ?? String(p);
      const calls: [string, () => unknown][] = [
        ["create", () => z.create(p, "d")],
        ["createWithStat", () => z.createWithStat(p)],
        ["create sequential", () => z.create(p, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL })],
        ["delete", () => z.delete(p)],
        ["exists", () => z.exists(p)],
        ["exists+watch", () => z.exists(p, noop)],
        ["getData", () => z.getData(p)],
        ["setData", () => z.setData(p, "x")],
        ["getChildren", () => z.getChildren(p, noop)],
        ["getChildrenWithStat", () => z.getChildrenWithStat(p)],
        ["getACL", () => z.getACL(p)],
        ["setACL", () => z.setACL(p, OPEN)],
        ["sync", () => z.sync(p)],
        ["addWatch", () => z.addWatch(p, 0, noop)],
        ["removeWatches", () => z.removeWatches(p, noop, WatcherType.Any)],
        ["removeAllWatches", () => z.removeAllWatches(p, WatcherType.Any)],
        ["getAllChildrenNumber", () => z.getAllChildrenNumber(p)],
        ["watch", () => z.watch(p)],
        ["multi create", () => z.multi([Op.create(p as string)])],
        ["multi check", () => z.multi([Op.check(p as string, 0)])],
        ["transaction delete", () => z.transaction().delete(p).commit()],
      ];
      // "/trailing/" is a valid prefix for a sequential create (the server appends the counter).
      // A sequential create validates the path with a digit appended (as ZooKeeper's PathUtils does),
      // so "/trailing/" and "/." are valid prefixes there.
      for (const [op, call] of calls) if (!(op === "create sequential" && (p === "/trailing/" || p === "/."))) cases.push([`${op}(${label})`, call, BADARGUMENTS]);
    }
    await expectNothingSent(cases);
    assert.deepEqual(unhandled.reasons, []);
    unhandled.stop();
  });

  it("data over the limit, wrong data types, bad versions, modes, TTLs, watchers and watch types", async () => {
    const z = js(zk);
    const n = `${root}/n`;
    const big = new Uint8Array(1024 * 1024 + 1);
    const cases: [string, () => unknown, number][] = [
      ["create 1 MB+1", () => z.create(`${root}/big`, big), BADARGUMENTS],
      ["setData 1 MB+1", () => z.setData(n, big), BADARGUMENTS],
      ["multi setData 1 MB+1", () => z.multi([Op.setData(n, big)]), BADARGUMENTS],
      ["data number", () => z.setData(n, 42), BADARGUMENTS],
      ["data object", () => z.create(`${root}/o`, { a: 1 }), BADARGUMENTS],
      ["data array", () => z.setData(n, [1, 2, 3]), BADARGUMENTS],
      ["data ArrayBuffer", () => z.setData(n, new ArrayBuffer(4)), BADARGUMENTS],
      ["data boolean", () => z.setData(n, true), BADARGUMENTS],
    ];
    for (const v of [-2, -1.5, 1.5, Number.NaN, Infinity, 2 ** 31, "1", null, 1n, {}]) {
      const l = typeof v === "bigint" ? "1n" : JSON.stringify(v) ?? String(v);
      cases.push([`delete version ${l}`, () => z.delete(n, v), BADARGUMENTS]);
      cases.push([`setData version ${l}`, () => z.setData(n, "x", v), BADARGUMENTS]);
      cases.push([`setACL version ${l}`, () => z.setACL(n, OPEN, v), BADARGUMENTS]);
      cases.push([`multi check version ${l}`, () => z.multi([Op.check(n, v as number)]), BADARGUMENTS]);
    }
    for (const mode of [-1, 7, 1.5, "ephemeral", null, Number.NaN]) {
      cases.push([`create mode ${JSON.stringify(mode)}`, () => z.create(`${root}/m`, null, { mode }), BADARGUMENTS]);
    }
    cases.push(
      ["ttl without a TTL mode", () => z.create(`${root}/t`, null, { ttl: 1000 }), BADARGUMENTS],
      ["TTL mode without ttl", () => z.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL }), BADARGUMENTS],
      ["TTL 0", () => z.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 0 }), BADARGUMENTS],
      ["TTL -5", () => z.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: -5 }), BADARGUMENTS],
      ["TTL 1.5", () => z.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 1.5 }), BADARGUMENTS],
      ["TTL string", () => z.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: "1000" }), BADARGUMENTS],
      ["TTL 2^40", () => z.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 2 ** 40 }), BADARGUMENTS],
      ["watcher string", () => z.getData(n, "cb"), BADARGUMENTS],
      ["watcher object", () => z.exists(n, {}), BADARGUMENTS],
      ["watcher null", () => z.getChildren(n, null), BADARGUMENTS],
      ["addWatch mode 2", () => z.addWatch(n, 2, noop), BADARGUMENTS],
      ["addWatch mode string", () => z.addWatch(n, "persistent", noop), BADARGUMENTS],
      ["addWatch no watcher", () => z.addWatch(n, 0), BADARGUMENTS],
      ["removeWatches type 9", () => z.removeWatches(n, noop, 9), BADARGUMENTS],
      ["removeAllWatches type string", () => z.removeAllWatches(n, "any"), BADARGUMENTS],
      ["removeWatches watcher string", () => z.removeWatches(n, "cb", WatcherType.Any), BADARGUMENTS],
      ["multi not an array", () => z.multi("ops"), BADARGUMENTS],
      ["multi null op", () => z.multi([null]), BADARGUMENTS],
      ["multi unknown op", () => z.multi([{ type: "drop", path: n }]), BADARGUMENTS],
      ["multi check without version", () => z.multi([{ type: "check", path: n }]), BADARGUMENTS],
      ["getEphemerals number", () => z.getEphemerals(42), BADARGUMENTS],
      ["getEphemerals relative", () => z.getEphemerals("e"), BADARGUMENTS],
      ["addAuthInfo scheme number", () => z.addAuthInfo(42, "x"), BADARGUMENTS],
      ["addAuthInfo empty scheme", () => z.addAuthInfo("", "x"), BADARGUMENTS],
      ["addAuthInfo auth number", () => z.addAuthInfo("digest", 42), BADARGUMENTS],
      ["addAuthInfo auth null", () => z.addAuthInfo("digest", null), BADARGUMENTS],
    );
    await expectNothingSent(cases);
  });

  it("empty and malformed ACL lists give INVALIDACL", async () => {
    const z = js(zk);
    const n = `${root}/n`;
    // (acl: null on create means "not given" and takes the default, like undefined.)
    const acls: unknown[] = [[], "world:anyone", {}, [null], [{ perms: 99, id: { scheme: "world", id: "anyone" } }], [{ perms: -1, id: { scheme: "world", id: "anyone" } }], [{ perms: 1.5, id: { scheme: "world", id: "anyone" } }], [{ perms: 31 }], [{ perms: 31, id: null }], [{ perms: 31, id: { scheme: 1, id: "anyone" } }], [{ perms: 31, id: { scheme: "world" } }], [...OPEN, "junk"]];
    const cases: [string, () => unknown, number][] = [];
    for (const acl of acls) {
      const l = JSON.stringify(acl);
      cases.push([`create acl ${l}`, () => z.create(`${root}/a`, null, { acl }), INVALIDACL]);
      cases.push([`setACL ${l}`, () => z.setACL(n, acl), INVALIDACL]);
      cases.push([`multi create acl ${l}`, () => z.multi([Op.create(`${root}/a`, null, { acl } as Any)]), INVALIDACL]);
    }
    cases.push(["setACL null", () => z.setACL(n, null), INVALIDACL]);
    await expectNothingSent(cases);
  });

  it("wrong connect options and connect strings reject BADARGUMENTS without dialling", async () => {
    const before = { dials, bytes: proxy.bytes() };
    const cs = proxy.connectString;
    const connect = ZooKeeper.connect as unknown as (c: unknown, o?: unknown) => Promise<ZooKeeper>;
    const cases: [string, () => unknown][] = [
      ["connect string number", () => connect(42)],
      ["connect string empty", () => connect("")],
      ["connect string port 0", () => connect("127.0.0.1:0")],
      ["connect string bad port", () => connect("127.0.0.1:notaport")],
      ["connect string port 70000", () => connect("127.0.0.1:70000")],
      ["connect string bad chroot", () => connect(`${cs}/bad/`)],
      ["connect string URL", () => connect(`http://${cs}`)],
      ["connect string zk:// URL", () => connect(`zk://${cs}/app`)],
      ["options null", () => connect(cs, null)],
      ["options string", () => connect(cs, "fast")],
      ["sessionTimeout string", () => connect(cs, { sessionTimeout: "30000" })],
      ["sessionTimeout negative", () => connect(cs, { sessionTimeout: -1 })],
      ["sessionTimeout NaN", () => connect(cs, { sessionTimeout: Number.NaN })],
      ["connectTimeout 0", () => connect(cs, { connectTimeout: 0 })],
      ["maxBufferSize 0", () => connect(cs, { maxBufferSize: 0 })],
      ["maxBufferSize string", () => connect(cs, { maxBufferSize: "1mb" })],
      ["auth not an array", () => connect(cs, { auth: "digest:x" })],
      ["auth entry without scheme", () => connect(cs, { auth: [{ auth: "x" }] })],
      ["auth entry with number auth", () => connect(cs, { auth: [{ scheme: "digest", auth: 42 }] })],
      ["sasl PLAIN", () => connect(cs, { sasl: { mechanism: "PLAIN", username: "u", password: "p" } })],
      ["sasl without password", () => connect(cs, { sasl: { mechanism: "DIGEST-MD5", username: "u" } })],
      ["sessionId number", () => connect(cs, { sessionId: 5, sessionPassword: new Uint8Array(16) })],
      ["sessionPassword string", () => connect(cs, { sessionId: 5n, sessionPassword: "secret" })],
    ];
    const wrong: string[] = [];
    const leaked: ZooKeeper[] = [];
    for (const [name, call] of cases) {
      const e = await failure(async () => {
        const p = call() as Promise<ZooKeeper>;
        p.then((z) => leaked.push(z), noop);
        // Bad options must fail at once; a dial attempt would take until connectTimeout.
        if ((await within(p, 3000)) === "pending") throw new Error("still pending after 3 s");
      });
      if (!(e instanceof ZooKeeperError)) wrong.push(`${name}: ${e === "resolved" ? "connected" : `threw ${String(e)}`}`);
      else if (e.code !== BADARGUMENTS) wrong.push(`${name}: ${e.codeName} (${e.message})`);
    }
    // No session to round-trip on here: a stray dial would come on its own time, so the property is a
    // quiet period in which the proxy accepts no connection.
    const stray = await never("a connection dialled after the rejections", () => dials !== before.dials, 100).catch((e: Error) => e.message);
    for (const z of leaked) await z.close();
    assert.deepEqual(wrong, [], `wrong outcomes:\n${wrong.join("\n")}`);
    assert.equal(stray, undefined);
    assert.equal(dials, before.dials, "a connection was dialled");
  });

  it("a closed client: every call rejects SESSIONEXPIRED saying it is closed, and sends nothing", async () => {
    const closedZk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 40_000, trackEnsemble: false });
    await closedZk.close();
    await closedZk.close(); // a second close is harmless
    const z = js(closedZk);
    const n = `${root}/n`;
    const calls: [string, () => unknown][] = [
      ["create", () => z.create(`${root}/c`)],
      ["createWithStat", () => z.createWithStat(`${root}/c`)],
      ["delete", () => z.delete(n)],
      ["exists", () => z.exists(n)],
      ["getData", () => z.getData(n, noop)],
      ["setData", () => z.setData(n, "y")],
      ["getChildren", () => z.getChildren(root)],
      ["getChildrenWithStat", () => z.getChildrenWithStat(root)],
      ["getACL", () => z.getACL(n)],
      ["setACL", () => z.setACL(n, OPEN)],
      ["sync", () => z.sync(n)],
      ["multi", () => z.multi([Op.check(n, 0)])],
      ["transaction", () => z.transaction().check(n, 0).commit()],
      ["addWatch", () => z.addWatch(n, 0, noop)],
      ["getEphemerals", () => z.getEphemerals()],
      ["getAllChildrenNumber", () => z.getAllChildrenNumber(root)],
      ["whoAmI", () => z.whoAmI()],
      ["addAuthInfo", () => z.addAuthInfo("digest", "u:p")],
      ["watch", () => z.watch(n)],
    ];
    const before = proxy.bytes();
    const wrong: string[] = [];
    for (const [name, call] of calls) {
      const e = await failure(call);
      if (!(e instanceof ZooKeeperError)) wrong.push(`${name}: ${e === "resolved" ? "resolved" : `threw ${String(e)}`}`);
      else if (e.code !== ErrorCode.SESSIONEXPIRED || !/: the client is closed \(close\(\) was called\); connect a new client$/.test(e.message)) wrong.push(`${name}: ${e.codeName} (${e.message})`);
    }
    // A closed client has no link to round-trip on: anything it sent would need a new dial, on its own
    // time, so the property is a quiet period with the counters still.
    const sent = await never("bytes through the proxy from a closed client", () => proxy.bytes().up !== before.up || proxy.bytes().down !== before.down, 50).catch((e: Error) => e.message);
    assert.deepEqual(wrong, [], `wrong outcomes:\n${wrong.join("\n")}`);
    assert.equal(sent, undefined, "a closed client sent bytes");
    assert.deepEqual(proxy.bytes(), before, "a closed client sent bytes");
    assert.equal(closedZk.state, "closed");
  });
});
