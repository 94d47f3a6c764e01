// Failures that are fast and named (real server): each error message asserted word for word. Refused or
// unresolvable hosts named at the connect timeout; a closed client's calls SESSIONEXPIRED, tried once by
// withRetry; a URL as connect string; NOAUTH naming the session's identities (never a secret); a refused
// addAuthInfo saying the client is finished; NONODE under a missing chroot saying so; WatchedEvent's typeName/stateName beside the numbers.
import { describe, it, beforeAll } from "../support/bdd.ts";
import { itFrom } from "../support/servers/zk-line.ts";
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { inspect } from "node:util";
import { SharedSessions, type SessionOptions, rejectsWith, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { AddWatchMode, EventType, KeeperState, Perms, WatcherType, ZooKeeper, ZooKeeperError, digestId, withRetry } from "../../src/index.ts";
import type { WatchedEvent } from "../../src/index.ts";

/** A local port nothing listens on (bound, then released): a dial to it is refused at once. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

const CLOSED = "the client is closed (close() was called); connect a new client";

describe("failures that are fast and named (real server)", () => {
  const sessions = new SharedSessions();
  const client = (options?: SessionOptions): Promise<ZooKeeper> => sessions.client(options);
  let admin: ZooKeeper;
  const root = uniqueRoot("err");
  // root/secret is alice's: listing it, as deleteRecursive does, needs her identity.
  sessions.hooks(async () => removeRoot(await client({ auth: [{ scheme: "digest", auth: "alice:right-pw" }] }), root));

  beforeAll(async () => {
    admin = await client();
    await admin.create(root);
  });

  // --- connect ---

  it("every host refused until connectTimeout: the error says ECONNREFUSED on every host of the connect string", async () => {
    const [a, b] = [await closedPort(), await closedPort()];
    const cs = `127.0.0.1:${a},127.0.0.1:${b}`;
    const e = await rejectsWith(ZooKeeper.connect(cs, { connectTimeout: 2500 }), "CONNECTIONLOSS");
    assert.equal(e.message, `CONNECTIONLOSS: no session established within 2500 ms: ECONNREFUSED on every host of "${cs}"; check that ZooKeeper runs and listens on those ports`);
  }, 30_000);

  it("one host refused, one name that does not resolve: each named with its code", async () => {
    const port = await closedPort();
    const cs = `127.0.0.1:${port},no-such-host.invalid:2181`;
    const e = await rejectsWith(ZooKeeper.connect(cs, { connectTimeout: 2500 }), "CONNECTIONLOSS");
    assert.match(
      e.message,
      new RegExp(`^CONNECTIONLOSS: no session established within 2500 ms: every host refused or did not resolve: 127\\.0\\.0\\.1:${port} ECONNREFUSED, no-such-host\\.invalid:2181 (ENOTFOUND|EAI_AGAIN); check the connect string and that ZooKeeper runs there$`),
    );
  }, 30_000);

  it("a host that accepts but never answers is not called refused: the last error is named instead", async () => {
    const proxy = await sessions.proxy();
    proxy.blackhole(true);
    const e = await rejectsWith(ZooKeeper.connect(proxy.connectString, { connectTimeout: 1500 }), "CONNECTIONLOSS");
    assert.match(e.message, /^CONNECTIONLOSS: no session established within 1500 ms(; last error: .+)?$/);
    assert.doesNotMatch(e.message, /every host/);
  }, 30_000);

  it("a URL as connect string is BADARGUMENTS saying to use host:port, and dials nothing", async () => {
    for (const [cs, scheme] of [["http://127.0.0.1:2181", "http"], ["zk://127.0.0.1:2181/app", "zk"], ["tcp://user:secret@10.0.0.1:2181", "tcp"], ["127.0.0.1:2181,zk://127.0.0.2:2181", "zk"]]) {
      const t0 = performance.now();
      const e = await rejectsWith(ZooKeeper.connect(cs!), "BADARGUMENTS");
      assert.ok(performance.now() - t0 < 500, "refused before any dial");
      assert.equal(e.message, `BADARGUMENTS (connect): use host:port[,host:port][/chroot], not a URL (the connect string has "${scheme}://")`);
      assert.doesNotMatch(e.message, /secret/);
    }
    const zk = await client();
    assert.throws(() => zk.updateServerList("http://127.0.0.1:2181"), (e: unknown) => e instanceof ZooKeeperError && e.message === 'BADARGUMENTS (updateServerList): use host:port[,host:port][/chroot], not a URL (the connect string has "http://")');
  }, 30_000);

  // --- close ---

  it("after close() every call rejects SESSIONEXPIRED saying the client is closed; withRetry makes exactly one attempt", async () => {
    const zk = await client();
    await zk.close();
    const e = await rejectsWith(zk.getData(root), "SESSIONEXPIRED");
    assert.equal(e.message, `SESSIONEXPIRED (getData ${root}): ${CLOSED}`);
    let attempts = 0;
    const r = await rejectsWith(
      withRetry(() => {
        attempts++;
        return zk.exists(root);
      }),
      "SESSIONEXPIRED",
    );
    assert.equal(attempts, 1, "withRetry must not retry a closed client's call");
    assert.equal(r.message, `SESSIONEXPIRED (exists ${root}): ${CLOSED}`);
  }, 30_000);

  it("a call queued while disconnected when close() comes rejects SESSIONEXPIRED, tried once by withRetry", async () => {
    const proxy = await sessions.proxy();
    const zk = await client({ connectString: proxy.connectString });
    proxy.refuse(true);
    proxy.cut();
    await until("disconnected", () => zk.state === "disconnected");
    let attempts = 0;
    const queued = withRetry(() => {
      attempts++;
      return zk.getData(root);
    }).then(
      () => assert.fail("resolved"),
      (err: unknown) => err,
    );
    // The attempt calls getData right after counting itself, and a call made while disconnected is queued
    // for the next connection in that same turn: once the count reads 1, the call waits in the queue.
    await until("withRetry's first attempt", () => attempts === 1);
    await zk.close();
    const e = await queued;
    assert.ok(e instanceof ZooKeeperError);
    assert.equal(e.message, `SESSIONEXPIRED (getData ${root}): ${CLOSED}`);
    assert.equal(attempts, 1);
  }, 30_000);

  // --- chroot ---

  it("NONODE under a chroot that does not exist says so; once the chroot exists, a NONODE is the node's", async () => {
    const chroot = `${root}/no-such-chroot`;
    const zk = await client({ chroot });
    const chrootMissing = `the chroot ${chroot} of the connect string does not exist: create it (from a client without the chroot), or fix the connect string`;
    const c = await rejectsWith(zk.create("/a", "x"), "NONODE");
    assert.equal(c.message, `NONODE (create /a): ${chrootMissing}`);
    assert.equal(c.path, "/a");
    const g = await rejectsWith(zk.getData("/"), "NONODE");
    assert.equal(g.message, `NONODE (getData /): ${chrootMissing}`);
    assert.equal(await zk.exists("/a"), null);
    await admin.create(chroot);
    const after = await rejectsWith(zk.getData("/a"), "NONODE");
    assert.equal(after.message, "NONODE (getData /a)");
    assert.equal(await zk.create("/a", "x"), "/a");
  }, 30_000);

  // --- auth ---

  it("NOAUTH names the identities the session holds: no one, or the digest user (never the password)", async () => {
    const p = `${root}/secret`;
    await admin.create(p, "s", { acl: [{ perms: Perms.ALL, id: { scheme: "digest", id: digestId("alice", "right-pw") } }] });
    const guest = await client();
    const g = await rejectsWith(guest.getData(p), "NOAUTH");
    assert.equal(g.message, `NOAUTH (getData ${p}): not authorized; this session authenticated as: no one (world:anyone); authenticate as an identity the node's ACL grants (connect's auth option, or addAuthInfo)`);

    const wrong = await client({ auth: [{ scheme: "digest", auth: "alice:wrong-pw" }] });
    const w = await rejectsWith(wrong.setData(p, "x"), "NOAUTH");
    assert.equal(w.message, `NOAUTH (setData ${p}): not authorized; this session authenticated as: digest user "alice" (a wrong digest password is not refused: it gives an identity no ACL names); authenticate as an identity the node's ACL grants (connect's auth option, or addAuthInfo)`);
    await wrong.addAuthInfo("digest", new TextEncoder().encode("bob:bob-pw"));
    const two = await rejectsWith(wrong.getData(p), "NOAUTH");
    assert.equal(two.message, `NOAUTH (getData ${p}): not authorized; this session authenticated as: digest user "alice", digest user "bob" (a wrong digest password is not refused: it gives an identity no ACL names); authenticate as an identity the node's ACL grants (connect's auth option, or addAuthInfo)`);
    assert.doesNotMatch(two.message, /pw/);

    const right = await client({ auth: [{ scheme: "digest", auth: "alice:right-pw" }] });
    assert.equal(new TextDecoder().decode((await right.getData(p)).data!), "s");
  }, 30_000);

  it("addAuthInfo refused: the error says the client is finished; later calls say so too", async () => {
    const zk = await client();
    const e = await rejectsWith(zk.addAuthInfo("no-such-scheme", "x"), "AUTHFAILED");
    assert.equal(
      e.message,
      "AUTHFAILED (addAuthInfo): the server refused the no-such-scheme credentials; the session has ended (authFailed) and the client is finished: every call now fails AUTHFAILED, connect a new client",
    );
    assert.equal(zk.state, "authFailed");
    const later = await rejectsWith(zk.exists("/"), "AUTHFAILED");
    assert.equal(later.message, "AUTHFAILED (exists /): authentication failed; the client is finished");
  }, 30_000);

  // --- events ---

  itFrom("3.6", "WatchedEvent carries typeName and stateName matching the numbers, and prints them", async () => {
    const p = `${root}/ev`;
    await admin.create(p, "0");
    const zk = await client();
    const seen: WatchedEvent[] = [];
    const record = (): ((e: WatchedEvent) => void) => (e) => void seen.push(e); // one function per watch
    const persistent = record();
    await zk.getData(p, record());
    await zk.getChildren(p, record());
    await zk.exists(`${p}/kid`, record());
    await zk.addWatch(p, AddWatchMode.PERSISTENT, persistent);
    await admin.setData(p, "1");
    await admin.create(`${p}/kid`);
    await until("five events", () => seen.length >= 5);
    await zk.removeWatches(p, persistent, WatcherType.Any);
    await until("the persistent watch's removal", () => seen.some((e) => e.type === EventType.PersistentWatchRemoved));
    await zk.close(); // nothing left registered: no session event
    const names = seen.map((e) => `${e.typeName}/${e.stateName}`).sort();
    assert.deepEqual(names, [
      "NodeChildrenChanged/SyncConnected",
      "NodeChildrenChanged/SyncConnected",
      "NodeCreated/SyncConnected",
      "NodeDataChanged/SyncConnected",
      "NodeDataChanged/SyncConnected",
      "PersistentWatchRemoved/SyncConnected",
    ]);
    for (const e of seen) {
      assert.equal(EventType[e.typeName], e.type);
      assert.equal(KeeperState[e.stateName], e.state);
    }
    const data = seen.find((e) => e.type === EventType.NodeDataChanged)!;
    assert.match(inspect(data), new RegExp(`typeName: ['"]NodeDataChanged['"],\\s+state: 3,\\s+stateName: ['"]SyncConnected['"],\\s+path: ['"]${p}['"]`));
    assert.match(JSON.stringify({ ...data, zxid: undefined }), /"typeName":"NodeDataChanged".*"stateName":"SyncConnected"/);

    // Session events: "None" with the session's state.
    const other = await client();
    const session: WatchedEvent[] = [];
    await other.exists(`${p}/never`, (e) => session.push(e));
    await other.close();
    assert.deepEqual(session, [{ type: EventType.None, typeName: "None", state: KeeperState.Closed, stateName: "Closed", path: null, zxid: undefined }]);
  }, 30_000);
});
