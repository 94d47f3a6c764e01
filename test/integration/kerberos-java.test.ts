// Interop under a sasl: ACL with the Java ZooKeeper client (Debian's 3.8.0 jar, test/support/secure/java/
// KerberosClient.java), both logged in with Kerberos to the same real Kerberized 3.8.0 server through a
// real MIT KDC (startRealm, test/support/secure/kdc.ts): zookeeper-ts as alice (keytab) creates a node with ACL
// sasl:alice@REALM that the Java client, as alice through a JAAS Client section (Krb5LoginModule and a
// keytab), reads; the other way round; and bob gets NOAUTH from either client. The server records the
// full principal (whoAmI sasl:alice@REALM on both). Node only: the Java side is the same on any runtime.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure/secure-hooks.ts";
import { ErrorCode, Perms, ZooKeeper, ZooKeeperError, type ConnectOptions, type SaslGssapiOptions } from "../../src/index.ts";
import { describeWithKdc, javaKerberosClient, refusal, startRealm, type Realm } from "../support/secure/kdc.ts";
import { localInstall } from "../support/servers/zk-install.ts";

const ROOT = `/krb-java-${randomUUID()}`;
const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));

describeWithKdc("Kerberos interop with the Java client (real KDC, Kerberized ZooKeeper 3.8.0)", "kerberos-java", () => {
  let realm: Realm;
  let java: string;
  let classpath: string;
  /** Each principal's keytab. */
  const keytab = (principal: string): string => (principal === realm.alice ? realm.aliceKeytab : realm.bobKeytab);

  /** The Java client as `principal` (JAAS Client: Krb5LoginModule with its keytab); one command, its stdout lines. */
  function javaClient(principal: string, ...command: string[]): Promise<string[]> {
    return javaOn({ connect: `localhost:${realm.srv.server.clientPort}`, props: ["-Dzookeeper.sasl.client.canonicalize.hostname=false"] }, principal, ...command);
  }

  /** The Java client on connect string `connect` with the system properties `props` (-Dname=value). */
  async function javaOn(o: { connect: string; props: readonly string[] }, principal: string, ...command: string[]): Promise<string[]> {
    const run = { java, classpath, dir: realm.kdc.dir, principal, keytab: keytab(principal), krb5Conf: realm.kdc.krb5Conf, ...o };
    return (await javaKerberosClient(run, ...command)).lines;
  }

  async function tsClient(principal: string): Promise<ZooKeeper> {
    const sasl: ConnectOptions["sasl"] = { mechanism: "GSSAPI", principal, keytab: keytab(principal), krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost" };
    return realm.track(await ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, sessionTimeout: 10_000, sasl }));
  }

  beforeAll(async () => {
    const install = await localInstall("3.8");
    java = install.java;
    classpath = install.classpath.join(":");
    realm = await startRealm();
    const zk = await tsClient(realm.alice);
    await zk.create(ROOT, "");
  }, 120_000);

  afterAll(() => realm?.close(), 60_000);

  it("both clients are sasl:alice@REALM to the server (the full principal is the ACL id)", async () => {
    assert.ok((await (await tsClient(realm.alice)).whoAmI()).some((i) => i.scheme === "sasl" && i.id === realm.alice));
    assert.ok((await javaClient(realm.alice, "whoami")).includes(`WHO sasl:${realm.alice}`));
  }, 60_000);

  it("the Java client reads what zookeeper-ts created under sasl:alice@REALM; bob (Java) gets NoAuth", async () => {
    const zk = await tsClient(realm.alice);
    const path = `${ROOT}/from-ts`;
    await zk.create(path, "written by zookeeper-ts", { acl: [{ perms: Perms.ALL, id: { scheme: "sasl", id: realm.alice } }] });
    assert.deepEqual((await zk.getACL(path)).acl.map((a) => `${a.id.scheme}:${a.id.id}`), [`sasl:${realm.alice}`]);
    assert.deepEqual(await javaClient(realm.alice, "get", path), ["DATA written by zookeeper-ts"]);
    assert.deepEqual(await javaClient(realm.bob, "get", path), ["ERROR NOAUTH"]);
  }, 60_000);

  it("zookeeper-ts reads what the Java client created under sasl:alice@REALM; bob (zookeeper-ts) gets NOAUTH", async () => {
    const path = `${ROOT}/from-java`;
    assert.deepEqual(await javaClient(realm.alice, "create", path, "written by Java", realm.alice), [`CREATED ${path}`]);
    const zk = await tsClient(realm.alice);
    assert.equal(dec((await zk.getData(path)).data), "written by Java");
    assert.deepEqual((await zk.getACL(path)).acl.map((a) => `${a.id.scheme}:${a.id.id}`), [`sasl:${realm.alice}`]);
    const other = await tsClient(realm.bob);
    await assert.rejects(other.getData(path), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
  }, 60_000);

  // The server's principal per host (issue 40 item 2): the same setups with both clients; the server is
  // zookeeper/localhost@REALM. Java reads zookeeper.sasl.client.canonicalize.hostname and zookeeper.server.principal.
  const table: Array<{ setup: string; host: string; props: string[]; sasl: Partial<SaslGssapiOptions>; java: "ok" | "AUTHFAILED"; ours: "ok" | RegExp }> = [
    { setup: "127.0.0.1, canonicalization on (default)", host: "127.0.0.1", props: [], sasl: {}, java: "ok", ours: "ok" },
    { setup: "localhost, canonicalization on (default)", host: "localhost", props: [], sasl: {}, java: "ok", ours: "ok" },
    // Java resolves an IP literal of the connect string to an address without a name, whose getHostName() is a
    // reverse lookup: it still asks for zookeeper/localhost. zookeeper-ts, told not to canonicalize, asks for the IP.
    { setup: "127.0.0.1, canonicalization off", host: "127.0.0.1", props: ["-Dzookeeper.sasl.client.canonicalize.hostname=false"], sasl: { canonicalizeHostname: false }, java: "ok", ours: "ok" },
    { setup: "localhost, canonicalization off", host: "localhost", props: ["-Dzookeeper.sasl.client.canonicalize.hostname=false"], sasl: { canonicalizeHostname: false }, java: "ok", ours: "ok" },
    { setup: "127.0.0.1, server principal zookeeper/localhost@REALM", host: "127.0.0.1", props: ["-Dzookeeper.server.principal=zookeeper/localhost@ZKTS.TEST"], sasl: { serverPrincipal: "zookeeper/localhost@ZKTS.TEST" }, java: "ok", ours: "ok" },
    // Java does not substitute _HOST in zookeeper.server.principal; zookeeper-ts does.
    { setup: "127.0.0.1, server principal zookeeper/_HOST@REALM", host: "127.0.0.1", props: ["-Dzookeeper.server.principal=zookeeper/_HOST@ZKTS.TEST"], sasl: { serverPrincipal: "zookeeper/_HOST@ZKTS.TEST" }, java: "AUTHFAILED", ours: "ok" },
  ];
  for (const row of table) {
    it(`${row.setup}: Java ${row.java}, zookeeper-ts ${row.ours === "ok" ? "ok" : "AUTHFAILED"}`, async () => {
      const connect = `${row.host}:${realm.srv.server.clientPort}`;
      const java = await javaOn({ connect, props: row.props }, realm.alice, "whoami");
      if (row.java === "ok") assert.ok(java.includes(`WHO sasl:${realm.alice}`), `Java: ${java.join(" | ")}`);
      else assert.deepEqual(java, ["AUTHFAILED"], `Java: ${java.join(" | ")}`);
      const sasl: ConnectOptions["sasl"] = { mechanism: "GSSAPI", principal: realm.alice, keytab: realm.aliceKeytab, krb5Config: realm.kdc.krb5Conf, ...row.sasl };
      const connecting = ZooKeeper.connect(connect, { connectTimeout: 10_000, sessionTimeout: 10_000, sasl });
      if (row.ours === "ok") {
        const zk = realm.track(await connecting);
        assert.ok((await zk.whoAmI()).some((i) => i.scheme === "sasl" && i.id === realm.alice));
      } else {
        const e = await refusal("kerberos-java", connecting, row.setup);
        assert.equal(e.code, ErrorCode.AUTHFAILED);
        assert.match(e.message, row.ours);
      }
    }, 90_000);
  }
});
