// Kerberos with the system's resolver against a real DNS server (dnsmasq, test/support/servers/dns-server.ts), no
// resolver injected: each client runs in a mount namespace whose /etc/resolv.conf names dnsmasq (search
// zk.test) and whose /etc/hosts names localhost only. The krb5.conf lists no KDC for the realm, so the KDC
// (a real MIT KDC, test/support/secure/kdc.ts) is found by the SRV records _kerberos._udp/_tcp.ZKTS.TEST; the
// Kerberized 3.8.0 server is zookeeper/zk.zk.test@ZKTS.TEST, and the connect string names it by a CNAME
// alias, by its address (PTR) or by a short name (the search domain). On each setup the Java client
// (3.8.0, test/support/secure/java/KerberosClient.java) runs in the same kind of namespace with the same krb5.conf,
// and zookeeper-ts must log in wherever Java does; MIT's kinit and kvno are the reference for the KDC
// discovery and the CNAME. The test file runs under Node; our client runs in the namespace under Node, Bun and
// Deno (each runtime's own resolver and sockets), beside the one Java run.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { DnsServer, dnsProblem, type WrapOptions } from "../support/servers/dns-server.ts";
import { describeWithKdc, startKdc, type TestKdc } from "../support/secure/kdc.ts";
import { LineProcess, REPO_DIR, runtimeCommand, type Runtime } from "../support/processes/line-process.ts";
import { startKerberosServer, type KerberosServer } from "../support/secure/secure-server.ts";
import { localInstall } from "../support/servers/zk-install.ts";

const problem = dnsProblem();
const SOURCE = fileURLToPath(new URL("../support/secure/java/KerberosClient.java", import.meta.url));
const ZK_ADDRESS = "127.0.0.3"; // zk.zk.test (A and PTR); the server listens on every address
const NAMESPACE: WrapOptions = { search: "zk.test", hosts: `127.0.0.1 localhost ${hostname()}\n::1 localhost\n` };

/** One setup: the connect string's host, canonicalization on or off, and what both clients must do. */
interface Setup {
  readonly setup: string;
  readonly host: string;
  readonly canonicalize: boolean;
  readonly expect: "ok" | RegExp;
}

const SETUPS: readonly Setup[] = [
  { setup: "zk.zk.test (A, PTR), canonicalization on", host: "zk.zk.test", canonicalize: true, expect: "ok" },
  { setup: "alias.zk.test (CNAME zk.zk.test), on", host: "alias.zk.test", canonicalize: true, expect: "ok" },
  { setup: "127.0.0.3 (PTR zk.zk.test), on", host: ZK_ADDRESS, canonicalize: true, expect: "ok" },
  { setup: "zk (search zk.test), on", host: "zk", canonicalize: true, expect: "ok" },
  { setup: "alias.zk.test, canonicalization off", host: "alias.zk.test", canonicalize: false, expect: /zookeeper\/alias\.zk\.test@ZKTS\.TEST .*KDC_ERR_S_PRINCIPAL_UNKNOWN/ },
  // Java's Kerberos library (not ZooKeeper's flag) expands a short name that its canonical name only lengthens.
  { setup: "zk, canonicalization off", host: "zk", canonicalize: false, expect: "ok" },
];

/** stdout of `cmd args` (it must exit 0 within 60 s), with its stderr's tail in the error. */
function run(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<string[]> {
  return new Promise((resolve, reject) =>
    execFile(cmd, [...args], { timeout: 60_000, env }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} failed: ${err.message}\n${stderr.slice(-2000)}`)) : resolve(stdout.split("\n").filter(Boolean)),
    ),
  );
}

if (problem !== null) {
  describe("Kerberos with the system resolver against a real DNS server (dnsmasq)", () => {
    it("needs root, unshare and dnsmasq", () => {
      if (process.env.CI === "true") assert.fail(`cannot run a DNS server here: ${problem}`);
      process.stderr.write(`[kerberos-dns-system] skipped: ${problem}\n`);
    });
  });
} else {
  describeWithKdc("Kerberos with the system resolver against a real DNS server (dnsmasq)", "kerberos-dns-system", () => {
    let kdc: TestKdc;
    let srv: KerberosServer;
    let dnsd: DnsServer;
    let krb5Conf: string; // the realm lists no kdc: DNS SRV only
    let keytab: string;
    let java: string;
    let classpath: string;
    const alice = "alice@ZKTS.TEST";
    const results: string[] = [];

    beforeAll(async () => {
      const install = await localInstall("3.8");
      java = install.java;
      classpath = install.classpath.join(":");
      kdc = await startKdc();
      kdc.addPrincipal(alice, { requiresPreauth: true });
      keytab = kdc.ktadd(alice, "alice.keytab");
      krb5Conf = kdc.writeKrb5Conf("dns-krb5.conf", { dns_lookup_kdc: "true" }, []);
      srv = await startKerberosServer({ kdc, serviceHost: "zk.zk.test", config: { clientPortAddress: "0.0.0.0" } });
      dnsd = new DnsServer();
      await dnsd.serve({
        srv: { [`_kerberos._udp.${kdc.realm}`]: [{ target: "kdc.zk.test", port: kdc.udpPort }], [`_kerberos._tcp.${kdc.realm}`]: [{ target: "kdc.zk.test", port: kdc.port }] },
        a: { "zk.zk.test": ZK_ADDRESS, "kdc.zk.test": "127.0.0.1" },
        cname: { "alias.zk.test": "zk.zk.test" },
      });
    }, 120_000);

    afterAll(async () => {
      if (results.length > 0) console.log(`Kerberos through dnsmasq (setup -> Java 3.8.0 | zookeeper-ts):\n  ${results.join("\n  ")}`);
      await dnsd?.close();
      await srv?.close();
      await kdc?.destroy();
    }, 60_000);

    /** The Java client in the namespace, as alice (JAAS Client: Krb5LoginModule, keytab): "ok" (whoami sasl:alice) or its output. */
    async function javaLogin(connect: string, canonicalize: boolean): Promise<string> {
      const jaas = join(kdc.dir, "client-alice.jaas");
      writeFileSync(jaas, `Client {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab="${keytab}"\n  storeKey=true\n  useTicketCache=false\n  principal="${alice}";\n};\n`);
      const [cmd, args] = dnsd.wrap(java, [
        "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", `-Djava.security.auth.login.config=${jaas}`, `-Djava.security.krb5.conf=${krb5Conf}`,
        `-Dzookeeper.sasl.client.canonicalize.hostname=${canonicalize}`, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp", classpath, SOURCE, connect, "whoami",
      ], NAMESPACE);
      const out = await run(cmd, args);
      return out.includes(`WHO sasl:${alice}`) ? "ok" : out.join(" | ");
    }

    /** zookeeper-ts in the namespace (test/support/processes/dns-client.ts), as alice with her keytab: "ok" (whoAmI sasl:alice) or its ERROR line. */
    async function oursLogin(connect: string, canonicalize: boolean, runtime: Runtime): Promise<string> {
      const sasl = { mechanism: "GSSAPI", principal: alice, keytab, krb5Config: krb5Conf, canonicalizeHostname: canonicalize };
      const [rt, rtArgs] = runtimeCommand(runtime, `${REPO_DIR}test/support/processes/dns-client.ts`);
      const [cmd, args] = dnsd.wrap(rt, [...rtArgs, connect, "", JSON.stringify(sasl)], NAMESPACE);
      const client = new LineProcess("kerberos-dns-client", spawn(cmd, args, { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] }));
      try {
        const first = await client.waitFor((l) => l.kind === "WHO" || l.kind === "ERROR", 40_000);
        return first.kind === "WHO" ? (first.args[0] === `sasl:${alice}` ? "ok" : first.line) : first.line;
      } finally {
        await client.close();
      }
    }

    it("MIT's kinit finds the KDC by the SRV records; kvno canonicalizes alias.zk.test to zookeeper/zk.zk.test", async () => {
      const ccache = join(kdc.dir, "mit-ccache");
      const script = `kinit -k -t "$0" -c "FILE:$1" ${alice} && kvno -c "FILE:$1" -S zookeeper alias.zk.test`;
      const [cmd, args] = dnsd.wrap("sh", ["-c", script, keytab, ccache], NAMESPACE);
      const out = await run(cmd, args, { ...process.env, KRB5_CONFIG: krb5Conf, KRB5_TRACE: "/dev/stderr" });
      // MIT names the ticket by the referral (empty) realm: no [domain_realm] entry maps zk.test.
      assert.match(out.join("\n"), /^zookeeper\/zk\.zk\.test@(ZKTS\.TEST)?: kvno = \d+$/m);
      results.push(`MIT kinit (SRV) + kvno -S zookeeper alias.zk.test -> ${out.join(" ")}`);
    }, 60_000);

    for (const s of SETUPS) {
      it(`${s.setup}: Java and zookeeper-ts ${s.expect === "ok" ? "log in" : "are refused"}`, async () => {
        const connect = `${s.host}:${srv.server.clientPort}`;
        const javaResult = await javaLogin(connect, s.canonicalize);
        // Ours under each runtime, each in the same namespace: the system resolver of Node, Bun and Deno alike.
        const ours = await oursLogin(connect, s.canonicalize, "node");
        const others = { bun: await oursLogin(connect, s.canonicalize, "bun"), deno: await oursLogin(connect, s.canonicalize, "deno") };
        const same = Object.values(others).every((o) => o === ours) ? "" : ` (bun: ${others.bun}; deno: ${others.deno})`;
        results.push(`${s.setup.padEnd(44)} -> Java ${javaResult === "ok" ? "ok" : javaResult.padEnd(10)} | ours (node, bun, deno) ${ours}${same}`);
        for (const o of [ours, others.bun, others.deno]) {
          if (javaResult === "ok") assert.equal(o, "ok", "zookeeper-ts logs in wherever Java does, on each runtime");
          if (s.expect !== "ok") {
            assert.match(o, /^ERROR AUTHFAILED/);
            assert.match(o, s.expect);
          }
        }
        if (s.expect === "ok") assert.equal(javaResult, "ok", `Java: ${javaResult}`);
        else assert.equal(javaResult, "AUTHFAILED", `Java: ${javaResult}`);
      }, 120_000);
    }
  });
}
