// SASL DIGEST-MD5 against a real ZooKeeper 3.8.0 server that requires it (JAAS users, the SASL
// auth provider, sessionRequireClientSASLAuth=true): identity, sasl: ACLs, wrong passwords, and
// authentication redone on every new connection (a fault proxy cuts the link; the server restarts).
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure/secure-hooks.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { ErrorCode, Perms, ZooKeeper, ZooKeeperError, type ConnectOptions, type SessionState } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { saslJaas } from "../support/secure/secure.ts";
import { startSaslServer, type SaslServer } from "../support/secure/secure-server.ts";

const ROOT = `/sasl-${randomUUID()}`;
const USERS = { alice: "alice-Pa55", bob: "bob-Pa55" };
let srv: SaslServer;
const open: ZooKeeper[] = [];
const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));

const as = (username: string, password: string): ConnectOptions["sasl"] => ({ mechanism: "DIGEST-MD5", username, password });

async function connect(connectString: string, options: ConnectOptions): Promise<ZooKeeper> {
  const zk = await ZooKeeper.connect(connectString, { connectTimeout: 10_000, sessionTimeout: 10_000, ...options });
  open.push(zk);
  return zk;
}

function nextState(zk: ZooKeeper, wanted: SessionState): Promise<void> {
  return new Promise((resolve) => {
    const on = (s: SessionState): void => {
      if (s !== wanted) return;
      zk.off("state", on);
      resolve();
    };
    zk.on("state", on);
  });
}

const hasSasl = (ids: { scheme: string; id: string }[], user: string): boolean => ids.some((i) => i.scheme === "sasl" && i.id === user);

describe("SASL DIGEST-MD5 (real ZooKeeper 3.8.0, SASL required)", () => {
  beforeAll(async () => {
    srv = await startSaslServer({ users: USERS });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(open.map((zk) => zk.close().catch(() => {})));
    await srv?.close();
  }, 60_000);

  it("the right password authenticates: whoAmI shows sasl:alice and requests are served", async () => {
    const zk = await connect(srv.connectString, { sasl: as("alice", USERS.alice) });
    assert.equal(zk.state, "connected");
    assert.ok(hasSasl(await zk.whoAmI(), "alice"));
    await zk.create(ROOT, "root");
    assert.equal(dec((await zk.getData(ROOT)).data), "root");
  }, 30_000);

  it("a wrong password rejects connect() with AUTHFAILED and a clear message, quickly", async () => {
    const started = performance.now();
    const err = await ZooKeeper.connect(srv.connectString, { sasl: as("alice", "not-her-password"), connectTimeout: 10_000 }).then(
      async (zk) => (await zk.close(), null),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ZooKeeperError, `expected a ZooKeeperError, got ${String(err)}`);
    assert.equal(err.code, ErrorCode.AUTHFAILED);
    assert.match(err.message, /SASL/);
    assert.ok(performance.now() - started < 2000, "a refused password must not wait for connectTimeout");
  }, 30_000);

  it("an unknown user is refused the same way", async () => {
    await assert.rejects(
      ZooKeeper.connect(srv.connectString, { sasl: as("mallory", "whatever"), connectTimeout: 10_000 }),
      (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.AUTHFAILED,
    );
  }, 30_000);

  it("sasl: ACLs are enforced: alice reads her node, bob gets NOAUTH", async () => {
    const alice = await connect(srv.connectString, { sasl: as("alice", USERS.alice) });
    const path = `${ROOT}/alice-only`;
    await alice.create(path, "for alice", { acl: [{ perms: Perms.ALL, id: { scheme: "sasl", id: "alice" } }] });
    assert.equal(dec((await alice.getData(path)).data), "for alice");
    const bob = await connect(srv.connectString, { sasl: as("bob", USERS.bob) });
    assert.ok(hasSasl(await bob.whoAmI(), "bob"));
    await assert.rejects(bob.getData(path), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
    await assert.rejects(bob.setData(path, "mine now"), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
  }, 30_000);

  it("SASL and digest auth together: both identities, SASL first so the server accepts the auth packet", async () => {
    const zk = await connect(srv.connectString, { sasl: as("bob", USERS.bob), auth: [{ scheme: "digest", auth: "carol:carol-pw" }] });
    const ids = await zk.whoAmI();
    assert.ok(hasSasl(ids, "bob"), JSON.stringify(ids));
    assert.ok(ids.some((i) => i.scheme === "digest" && i.id.split(":")[0] === "carol"), JSON.stringify(ids));
  }, 30_000);

  it("after the link is cut, SASL is redone before anything queued goes out", async () => {
    const proxy: FaultProxy = await startFaultProxy("127.0.0.1", srv.server.clientPort);
    try {
      const zk = await connect(proxy.connectString, { sasl: as("alice", USERS.alice) });
      const path = `${ROOT}/alice-only`;
      const session = zk.sessionId;
      const down = nextState(zk, "disconnected");
      const up = nextState(zk, "connected");
      proxy.cut();
      await down;
      // Sent while disconnected: the server would answer -124 and close if it came before SASL.
      const read = zk.getData(path);
      await up;
      assert.equal(dec((await read).data), "for alice");
      assert.ok(hasSasl(await zk.whoAmI(), "alice"));
      assert.equal(zk.sessionId, session);
    } finally {
      await proxy.close();
    }
  }, 30_000);

  // Last: it restarts the server with a JAAS file where alice's password changed.
  it("a reconnect whose SASL is refused ends the session in state authFailed", async () => {
    const zk = await connect(srv.connectString, { sasl: as("alice", USERS.alice) });
    const states: SessionState[] = [];
    zk.on("state", (s) => states.push(s));
    const failed = nextState(zk, "authFailed");
    await srv.server.kill();
    writeFileSync(srv.jaasPath, saslJaas({ users: { ...USERS, alice: "changed-by-admin" } }));
    await srv.server.start();
    await failed;
    assert.equal(zk.state, "authFailed");
    assert.deepEqual(states, ["disconnected", "authFailed"]);
    await assert.rejects(zk.exists("/"), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.AUTHFAILED);
    // The server is fine: bob still gets in.
    const bob = await connect(srv.connectString, { sasl: as("bob", USERS.bob) });
    assert.ok(hasSasl(await bob.whoAmI(), "bob"));
  }, 60_000);
});
