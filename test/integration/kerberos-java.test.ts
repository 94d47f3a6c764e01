// Interop under a sasl: ACL with the Java ZooKeeper client (Debian's 3.8.0 jar, test/support/java/
// KerberosClient.java), both logged in with Kerberos to the same real Kerberized 3.8.0 server through a
// real MIT KDC (test/support/kdc.ts): zookeeper-ts as alice (keytab) creates a node with ACL
// sasl:alice@REALM that the Java client, as alice through a JAAS Client section (Krb5LoginModule and a
// keytab), reads; the other way round; and bob gets NOAUTH from either client. The server records the
// full principal (whoAmI sasl:alice@REALM on both). Node only: the Java side is the same on any runtime.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { describe, it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure-hooks.ts";
import { ErrorCode, Perms, ZooKeeper, ZooKeeperError, type ConnectOptions } from "../../src/index.ts";
import { missingKdcTools, startKdc, type TestKdc } from "../support/kdc.ts";
import { startKerberosServer, type KerberosServer } from "../support/secure-server.ts";
import { localInstall } from "../support/zk-install.ts";

const missing = missingKdcTools();
const SOURCE = fileURLToPath(new URL("../support/java/KerberosClient.java", import.meta.url));
const ROOT = `/krb-java-${randomUUID()}`;
const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));

if (missing.length > 0) {
  describe("Kerberos interop with the Java client (real KDC, Kerberized ZooKeeper 3.8.0)", () => {
    it("needs the MIT KDC packages", () => {
      if (process.env.CI === "true") assert.fail(`MIT Kerberos tools missing: ${missing.join(", ")}; install krb5-kdc krb5-admin-server krb5-user`);
      process.stderr.write(`[kerberos-java] skipped: ${missing.join(", ")} missing (install krb5-kdc krb5-admin-server krb5-user)\n`);
    });
  });
} else {
  describe("Kerberos interop with the Java client (real KDC, Kerberized ZooKeeper 3.8.0)", () => {
    let kdc: TestKdc;
    let srv: KerberosServer;
    let alice: string;
    let bob: string;
    const keytabs: Record<string, string> = {};
    const open: ZooKeeper[] = [];
    let java: string;
    let classpath: string;

    /** The Java client as `principal` (JAAS Client: Krb5LoginModule with its keytab); one command, its stdout lines. */
    function javaClient(principal: string, ...command: string[]): Promise<string[]> {
      const jaas = join(kdc.dir, `client-${principal.split("@")[0]}.jaas`);
      writeFileSync(
        jaas,
        `Client {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab="${keytabs[principal]}"\n` +
          `  storeKey=true\n  useTicketCache=false\n  principal="${principal}";\n};\n`,
      );
      const args = [
        "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        `-Djava.security.auth.login.config=${jaas}`, `-Djava.security.krb5.conf=${kdc.krb5Conf}`,
        "-Dzookeeper.sasl.client.canonicalize.hostname=false", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp", classpath, SOURCE, `localhost:${srv.server.clientPort}`, ...command,
      ];
      return new Promise((resolve, reject) =>
        execFile(java, args, { timeout: 60_000 }, (err, stdout, stderr) =>
          err ? reject(new Error(`java KerberosClient ${command.join(" ")} failed: ${err.message}\n${stderr.slice(-2000)}`)) : resolve(stdout.split("\n").filter(Boolean)),
        ),
      );
    }

    async function tsClient(principal: string): Promise<ZooKeeper> {
      const sasl: ConnectOptions["sasl"] = { mechanism: "GSSAPI", principal, keytab: keytabs[principal], krb5Config: kdc.krb5Conf, serviceHost: "localhost" };
      const zk = await ZooKeeper.connect(srv.connectString, { connectTimeout: 10_000, sessionTimeout: 10_000, sasl });
      open.push(zk);
      return zk;
    }

    beforeAll(async () => {
      const install = await localInstall("3.8");
      java = install.java;
      classpath = install.classpath.join(":");
      kdc = await startKdc();
      alice = `alice@${kdc.realm}`;
      bob = `bob@${kdc.realm}`;
      for (const [p, f] of [[alice, "alice.keytab"], [bob, "bob.keytab"]] as const) {
        kdc.addPrincipal(p, { requiresPreauth: true });
        keytabs[p] = kdc.ktadd(p, f);
      }
      srv = await startKerberosServer({ kdc });
      const zk = await tsClient(alice);
      await zk.create(ROOT, "");
    }, 120_000);

    afterAll(async () => {
      await Promise.all(open.map((zk) => zk.close().catch(() => {})));
      await srv?.close();
      await kdc?.destroy();
    }, 60_000);

    it("both clients are sasl:alice@REALM to the server (the full principal is the ACL id)", async () => {
      assert.ok((await (await tsClient(alice)).whoAmI()).some((i) => i.scheme === "sasl" && i.id === alice));
      assert.ok((await javaClient(alice, "whoami")).includes(`WHO sasl:${alice}`));
    }, 60_000);

    it("the Java client reads what zookeeper-ts created under sasl:alice@REALM; bob (Java) gets NoAuth", async () => {
      const zk = await tsClient(alice);
      const path = `${ROOT}/from-ts`;
      await zk.create(path, "written by zookeeper-ts", { acl: [{ perms: Perms.ALL, id: { scheme: "sasl", id: alice } }] });
      assert.deepEqual((await zk.getACL(path)).acl.map((a) => `${a.id.scheme}:${a.id.id}`), [`sasl:${alice}`]);
      assert.deepEqual(await javaClient(alice, "get", path), ["DATA written by zookeeper-ts"]);
      assert.deepEqual(await javaClient(bob, "get", path), ["ERROR NOAUTH"]);
    }, 60_000);

    it("zookeeper-ts reads what the Java client created under sasl:alice@REALM; bob (zookeeper-ts) gets NOAUTH", async () => {
      const path = `${ROOT}/from-java`;
      assert.deepEqual(await javaClient(alice, "create", path, "written by Java", alice), [`CREATED ${path}`]);
      const zk = await tsClient(alice);
      assert.equal(dec((await zk.getData(path)).data), "written by Java");
      assert.deepEqual((await zk.getACL(path)).acl.map((a) => `${a.id.scheme}:${a.id.id}`), [`sasl:${alice}`]);
      const other = await tsClient(bob);
      await assert.rejects(other.getData(path), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
    }, 60_000);
  });
}
