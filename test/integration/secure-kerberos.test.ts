// SASL GSSAPI (Kerberos) through ZooKeeper.connect against a real Kerberized ZooKeeper server (3.8.0; ZK_SERVER=3.4 or 3.9 for the others)
// (JAAS Server: Krb5LoginModule with a keytab for zookeeper/localhost@REALM) and a real MIT KDC
// (test/support/secure/kdc.ts: a realm in a temporary directory, nothing in /etc): a keytab login, a kinit
// ccache login, sasl: ACLs (NOAUTH for another principal), an unknown service principal, the KDC down,
// a link cut then the same session re-authenticated, and a server with sessionRequireClientSASLAuth=true.
// Under CI=true a missing KDC package fails the file instead of skipping it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import process from "node:process";
import { it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure/secure-hooks.ts";
import { CreateMode, ErrorCode, Perms, ZooKeeper, ZooKeeperError, type ConnectOptions, type SessionState } from "../../src/index.ts";
import { startFaultProxy } from "../support/fakes/fault-proxy.ts";
import { describeWithKdc, freePort, refusal, reportFailure, startRealm, type Realm } from "../support/secure/kdc.ts";
import { startKerberosServer, type KerberosServer } from "../support/secure/secure-server.ts";
import { untilState } from "../support/wait.ts";
import { describeFrom, serverAtLeast, serverLine } from "../support/servers/zk-line.ts";

const ROOT = `/krb-${randomUUID()}`;
const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));
const VERSION = serverLine().version;

/**
 * The session is sasl:`who`: whoAmI on 3.7 and later; before (3.4.13 has no whoAmI), a node whose ACL lets
 * only sasl:`who` read is created and read back (NOAUTH for anyone else).
 */
async function assertSasl(zk: ZooKeeper, who: string): Promise<void> {
  if (serverAtLeast("3.7.0")) {
    const ids = await zk.whoAmI();
    assert.ok(ids.some((i) => i.scheme === "sasl" && i.id === who), `not sasl:${who}: ${JSON.stringify(ids)}`);
    return;
  }
  const path = await zk.create(`/krb-who-${randomUUID()}`, who, { mode: CreateMode.EPHEMERAL, acl: [{ perms: Perms.READ, id: { scheme: "sasl", id: who } }] });
  const got = await zk.getData(path).then((r) => dec(r.data), (e: unknown) => e);
  assert.equal(got, who, `not sasl:${who}: ${String(got)}`);
}

const failure = (p: Promise<ZooKeeper>, what: string): Promise<ZooKeeperError> => refusal("secure-kerberos", p, what);

describeWithKdc(`SASL GSSAPI (real Kerberized ZooKeeper ${VERSION})`, "secure-kerberos", () => {
  let realm: Realm;
  const gssapi = (o: Partial<Extract<NonNullable<ConnectOptions["sasl"]>, { mechanism: "GSSAPI" }>>): ConnectOptions["sasl"] => ({
    mechanism: "GSSAPI",
    krb5Config: realm.kdc.krb5Conf,
    serviceHost: "localhost",
    ...o,
  });
  async function connect(connectString: string, options: ConnectOptions): Promise<ZooKeeper> {
    return realm.track(await ZooKeeper.connect(connectString, { connectTimeout: 10_000, sessionTimeout: 10_000, ...options }));
  }

  beforeAll(async () => {
    realm = await startRealm();
  }, 120_000);

  afterAll(() => realm?.close(), 60_000);

  it("a keytab login: the session is sasl:alice@REALM (whoAmI; before 3.7 an ACL only alice can read), a node under a sasl: ACL is created and read", async () => {
    const zk = await connect(realm.srv.connectString, { sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab }) });
    assert.equal(zk.state, "connected");
    await assertSasl(zk, realm.alice);
    await zk.create(ROOT, "root", { acl: [{ perms: Perms.ALL, id: { scheme: "sasl", id: realm.alice } }] });
    assert.equal(dec((await zk.getData(ROOT)).data), "root");
  }, 30_000);

  it("a keytab given as bytes, the principal taken from it", async () => {
    const zk = await connect(realm.srv.connectString, { sasl: gssapi({ keytab: realm.kdc.keytabBytes("alice.keytab") }) });
    await assertSasl(zk, realm.alice);
    assert.equal(dec((await zk.getData(ROOT)).data), "root");
  }, 30_000);

  it("a kinit ccache login (kinit -k -t into a FILE ccache, given as KRB5CCNAME's FILE: form)", async () => {
    const ccache = realm.kdc.kinit(realm.alice, realm.aliceKeytab, "alice.cc");
    const zk = await connect(realm.srv.connectString, { sasl: gssapi({ ccache: `FILE:${ccache}` }) });
    await assertSasl(zk, realm.alice);
    assert.equal(dec((await zk.getData(ROOT)).data), "root");
  }, 30_000);

  it("the defaults: $KRB5_CONFIG and $KRB5CCNAME (a plain path), nothing but the mechanism and serviceHost given", async () => {
    const ccache = realm.kdc.kinit(realm.alice, realm.aliceKeytab, "alice-env.cc");
    const saved = { config: process.env.KRB5_CONFIG, ccname: process.env.KRB5CCNAME };
    process.env.KRB5_CONFIG = realm.kdc.krb5Conf;
    process.env.KRB5CCNAME = ccache;
    try {
      const zk = await connect(realm.srv.connectString, { sasl: { mechanism: "GSSAPI", serviceHost: "localhost" } });
      await assertSasl(zk, realm.alice);
    } finally {
      for (const [k, v] of [["KRB5_CONFIG", saved.config], ["KRB5CCNAME", saved.ccname]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }, 30_000);

  it("a sasl: ACL another principal cannot read: NOAUTH for bob", async () => {
    const zk = await connect(realm.srv.connectString, { sasl: gssapi({ principal: realm.bob, keytab: realm.bobKeytab }) });
    await assertSasl(zk, realm.bob);
    await assert.rejects(zk.getData(ROOT), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
  }, 30_000);

  it("an unknown service principal rejects connect() with AUTHFAILED naming zookeeper/host@REALM, quickly", async () => {
    const started = performance.now();
    const e = await failure(ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, sasl: gssapi({ keytab: realm.aliceKeytab, serviceHost: "nohost" }) }), "unknown service principal");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, new RegExp(`zookeeper/nohost@${realm.kdc.realm.replace(/\./g, "\\.")}`));
    assert.ok(performance.now() - started < 5000, "a refused login must not wait for connectTimeout");
  }, 30_000);

  it("a ccache without a TGT rejects connect() with AUTHFAILED saying to run kinit", async () => {
    const e = await failure(ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, sasl: gssapi({ ccache: `${realm.kdc.dir}/no-such.cc` }) }), "no ccache");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, /no-such\.cc/);
  }, 30_000);

  it("a stale keytab (an old key version) and an unknown client principal: AUTHFAILED naming them", async () => {
    const dave = `dave@${realm.kdc.realm}`;
    realm.kdc.addPrincipal(dave, { requiresPreauth: true });
    const old = realm.kdc.ktadd(dave, "dave-old.keytab");
    realm.kdc.ktadd(dave, "dave-new.keytab"); // a new key version at the KDC
    const stale = await failure(ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, sasl: gssapi({ principal: dave, keytab: old }) }), "stale keytab");
    assert.equal(stale.code, ErrorCode.AUTHFAILED);
    assert.match(stale.message, /dave@/);
    const unknown = await failure(
      ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, sasl: gssapi({ principal: `carol@${realm.kdc.realm}`, keytab: realm.kdc.keytabBytes("dave-new.keytab") }) }),
      "principal not in the keytab",
    );
    assert.equal(unknown.code, ErrorCode.AUTHFAILED);
    assert.match(unknown.message, /carol@/);
  }, 30_000);

  it("the KDC down: connect() rejects within the connect timeout, naming the KDC's host:port", async () => {
    const deadPort = await freePort();
    const conf = realm.kdc.writeKrb5Conf("dead-kdc.conf", {}, [`127.0.0.1:${deadPort}`]);
    const started = performance.now();
    const e = await failure(ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 3000, sasl: gssapi({ keytab: realm.aliceKeytab, krb5Config: conf }) }), "KDC down");
    const took = performance.now() - started;
    assert.equal(e.code, ErrorCode.CONNECTIONLOSS);
    assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${deadPort}`));
    assert.match(e.message, /KDC/);
    assert.ok(took < 4500, `took ${took} ms`);
  }, 30_000);

  it("after the link is cut, the same session is re-authenticated before anything queued goes out", async () => {
    const proxy = await startFaultProxy("127.0.0.1", realm.srv.server.clientPort);
    try {
      const zk = await connect(proxy.connectString, { sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab }) });
      const session = zk.sessionId;
      proxy.cut();
      await untilState(zk, "disconnected");
      const read = zk.getData(ROOT); // needs sasl:alice on the new connection
      await untilState(zk, "connected");
      assert.equal(dec((await read).data), "root");
      await assertSasl(zk, realm.alice);
      assert.equal(zk.sessionId, session);
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it("the KDC unreachable after the login: a reconnect re-authenticates with the service ticket in hand", async () => {
    const kdcProxy = await startFaultProxy("127.0.0.1", realm.kdc.port);
    const zkProxy = await startFaultProxy("127.0.0.1", realm.srv.server.clientPort);
    try {
      const conf = realm.kdc.writeKrb5Conf("via-proxy.conf", {}, [`tcp/127.0.0.1:${kdcProxy.port}`]);
      const zk = await connect(zkProxy.connectString, { sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab, krb5Config: conf }) });
      await assertSasl(zk, realm.alice);
      const session = zk.sessionId;
      kdcProxy.refuse(true);
      zkProxy.cut();
      await untilState(zk, "disconnected");
      await untilState(zk, "connected");
      await assertSasl(zk, realm.alice);
      assert.equal(dec((await zk.getData(ROOT)).data), "root");
      assert.equal(zk.sessionId, session);
    } finally {
      await zkProxy.close();
      await kdcProxy.close();
    }
  }, 30_000);

  it("connect() times: none, keytab (a fresh login each: AS + TGS), median of 5", async () => {
    const median = async (options: ConnectOptions): Promise<number> => {
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const zk = await ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, ...options });
        times.push(performance.now() - t);
        await zk.close();
      }
      return times.sort((a, b) => a - b)[2] ?? 0;
    };
    const none = await median({});
    const keytab = await median({ sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab }) });
    process.stderr.write(`[secure-kerberos] connect() median of 5: no SASL ${none.toFixed(1)} ms, GSSAPI keytab ${keytab.toFixed(1)} ms\n`);
    assert.ok(keytab > 0 && none > 0);
  }, 60_000);

  it("a server whose keytab is stale (the KDC has a newer key): connect() fails within its timeout, AUTHFAILED on 3.8 and later", async () => {
    const stale = await startKerberosServer({ kdc: realm.kdc, serviceHost: "stale.test" });
    try {
      realm.kdc.kadmin(`ktadd -k ${realm.kdc.dir}/rotated.keytab ${stale.principal}`); // a new key version the server does not have
      const started = performance.now();
      const e = await failure(
        ZooKeeper.connect(stale.connectString, { connectTimeout: 4000, sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab, serviceHost: "stale.test" }) }),
        `token refused by the server (${VERSION})`,
      );
      const took = performance.now() - started;
      process.stderr.write(`[secure-kerberos] token refused by the server (${VERSION}): connect() rejected after ${Math.round(took)} ms\n`);
      // 3.4.13 closes the connection without answering the refused token: the client sees lost links until the timeout.
      if (serverAtLeast("3.8.0")) {
        assert.equal(e.code, ErrorCode.AUTHFAILED);
        assert.ok(took < 3500, `took ${took} ms`);
      } else {
        assert.equal(e.code, ErrorCode.CONNECTIONLOSS);
        assert.ok(took < 6000, `took ${took} ms`);
      }
    } finally {
      await stale.close();
    }
  }, 90_000);

  // 3.4.13 has no sessionRequireClientSASLAuth, and answers a refused SASL token by closing the connection
  // without a reply (ZooKeeperServer.processSasl): to a client that is a lost link, not a refusal.
  describeFrom("3.6.0", "a server with sessionRequireClientSASLAuth=true", () => {
    let required: KerberosServer;
    beforeAll(async () => {
      required = await startKerberosServer({ kdc: realm.kdc, required: true });
    }, 120_000);
    afterAll(async () => {
      await required?.close();
    }, 60_000);

    it("a keytab login is served; a session without SASL is not", async () => {
      const zk = await connect(required.connectString, { sasl: gssapi({ principal: realm.bob, keytab: realm.bobKeytab }) });
      await assertSasl(zk, realm.bob);
      await zk.exists("/");
      const plain = await ZooKeeper.connect(required.connectString, { connectTimeout: 3000 }).then(
        async (z) => {
          realm.track(z);
          return z.exists("/").then(() => null, (err: unknown) => err);
        },
        (err: unknown) => err,
      );
      assert.ok(plain instanceof ZooKeeperError, `a session without SASL must fail, got ${String(plain)}`);
    }, 30_000);

    // Last: it changes the server's key (a new kvno only in the restarted server's keytab).
    it("a reconnect whose login the server refuses (its key changed) ends the session in state authFailed", async () => {
      const zk = await connect(required.connectString, { sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab }) });
      const states: SessionState[] = [];
      zk.on("state", (s) => states.push(s));
      await required.server.kill();
      rmSync(required.keytab, { force: true });
      realm.kdc.kadmin(`ktadd -k ${required.keytab} ${required.principal}`); // new random key: the client's cached ticket is for the old one
      await required.server.start();
      await untilState(zk, "authFailed", 50_000);
      assert.equal(zk.state, "authFailed");
      assert.deepEqual(states, ["disconnected", "authFailed"]);
      const e = await zk.exists("/").then(() => null, (err: unknown) => err);
      assert.ok(e instanceof ZooKeeperError && e.code === ErrorCode.AUTHFAILED, String(e));
      reportFailure("secure-kerberos", "reconnect refused by the server", e);
      // A new client gets a ticket for the new key and is served.
      const again = await connect(required.connectString, { sasl: gssapi({ principal: realm.alice, keytab: realm.aliceKeytab }) });
      await assertSasl(again, realm.alice);
    }, 60_000);
  });
});
