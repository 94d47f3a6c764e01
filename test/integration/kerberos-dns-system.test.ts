// Kerberos with the system's resolver against a real DNS server (dnsmasq, test/support/servers/dns-server.ts), no
// resolver injected: each client runs in a mount namespace whose /etc/resolv.conf names dnsmasq (search
// zk.test) and whose /etc/hosts names localhost only. The krb5.conf lists no KDC for the realm, so the KDC
// (a real MIT KDC, test/support/secure/kdc.ts) is found by the SRV records _kerberos._udp/_tcp.ZKTS.TEST; the
// Kerberized 3.8.0 server is zookeeper/zk.zk.test@ZKTS.TEST, and the connect string names it by a CNAME
// alias, by its address (PTR) or by a short name (the search domain). On each setup the Java client
// (3.8.0, test/support/secure/java/KerberosClient.java) runs in the same kind of namespace with the same krb5.conf,
// and zookeeper-ts must log in wherever Java does; MIT's kinit and kvno are the reference for the KDC
// discovery and the CNAME. A round-robin name, multi.zk.test, has A records for 127.0.0.4 and 127.0.0.5, whose
// PTRs name two more Kerberized servers, zookeeper/zka.zk.test and zookeeper/zkb.zk.test (each address a TCP
// proxy, test/support/fakes/fault-proxy.ts, to its own server): with one of them refusing, both clients must log in
// to the other, each attempt asking for the principal of the address it dials. The test file runs under Node; our client runs in the namespace under Node, Bun and
// Deno (each runtime's own resolver and sockets), beside the one Java run.
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { DnsServer, dnsProblem, type WrapOptions } from "../support/servers/dns-server.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { describeWithKdc, startKdc, type TestKdc } from "../support/secure/kdc.ts";
import { LineProcess, REPO_DIR, runtimeCommand, type Runtime } from "../support/processes/line-process.ts";
import { startKerberosServer, type KerberosServer } from "../support/secure/secure-server.ts";
import { localInstall } from "../support/servers/zk-install.ts";

const problem = dnsProblem();
const SOURCE = fileURLToPath(new URL("../support/secure/java/KerberosClient.java", import.meta.url));
const ZK_ADDRESS = "127.0.0.3"; // zk.zk.test (A and PTR); the server listens on every address
const MULTI = { "127.0.0.4": "zka.zk.test", "127.0.0.5": "zkb.zk.test" } as const; // multi.zk.test's addresses and their PTRs
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
    const multi: { address: keyof typeof MULTI; srv: KerberosServer; proxy: FaultProxy }[] = [];
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
      // multi.zk.test: one port on two addresses, each a proxy to its own server (principal: its address's PTR name).
      for (const [address, name] of Object.entries(MULTI) as [keyof typeof MULTI, string][]) {
        const s = await startKerberosServer({ kdc, serviceHost: name });
        const proxy = await startFaultProxy("127.0.0.1", s.server.clientPort, { listenHost: address, port: multi[0]?.proxy.port ?? 0 });
        multi.push({ address, srv: s, proxy });
      }
      dnsd = new DnsServer();
      await dnsd.serve({
        srv: { [`_kerberos._udp.${kdc.realm}`]: [{ target: "kdc.zk.test", port: kdc.udpPort }], [`_kerberos._tcp.${kdc.realm}`]: [{ target: "kdc.zk.test", port: kdc.port }] },
        a: { "zk.zk.test": ZK_ADDRESS, "kdc.zk.test": "127.0.0.1", ...Object.fromEntries(Object.entries(MULTI).map(([address, name]) => [name, address])) },
        aka: Object.fromEntries(Object.values(MULTI).map((name) => [name, ["multi.zk.test"]])),
        cname: { "alias.zk.test": "zk.zk.test" },
      });
    }, 120_000);

    afterAll(async () => {
      if (results.length > 0) console.log(`Kerberos through dnsmasq (setup -> Java 3.8.0 | zookeeper-ts):\n  ${results.join("\n  ")}`);
      await dnsd?.close();
      for (const m of multi) {
        await m.proxy.close();
        await m.srv.close();
      }
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
      return (await oursSession(connect, canonicalize, runtime)).who;
    }

    /** oursLogin's, and the address:port the session went to (its first UP line). */
    async function oursSession(connect: string, canonicalize: boolean, runtime: Runtime): Promise<{ who: string; remote?: string }> {
      const sasl = { mechanism: "GSSAPI", principal: alice, keytab, krb5Config: krb5Conf, canonicalizeHostname: canonicalize };
      const [rt, rtArgs] = runtimeCommand(runtime, `${REPO_DIR}test/support/processes/dns-client.ts`);
      const [cmd, args] = dnsd.wrap(rt, [...rtArgs, connect, "", JSON.stringify(sasl)], NAMESPACE);
      const client = new LineProcess("kerberos-dns-client", spawn(cmd, args, { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] }));
      try {
        const up = await client.waitFor((l) => l.kind === "UP" || l.kind === "ERROR", 40_000);
        if (up.kind === "ERROR") return { who: up.line };
        const first = await client.waitFor((l) => l.kind === "WHO" || l.kind === "ERROR", 20_000);
        const who = first.kind === "WHO" ? (first.args[0] === `sasl:${alice}` ? "ok" : first.line) : first.line;
        return { who, remote: up.args[1] };
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

    // A round-robin name (as estates name an ensemble): each attempt picks one address (at random, as the Java
    // client's StaticHostProvider does; Java may pick the refusing one several times over) and asks for the principal
    // of that address's PTR name. With one server refusing
    // (its proxy accepts and closes), a client logs in to the other only if that attempt's principal is the other's.
    for (const serving of Object.keys(MULTI) as (keyof typeof MULTI)[]) {
      it(`multi.zk.test (A 127.0.0.4 -> zka, 127.0.0.5 -> zkb), only ${serving} (${MULTI[serving]}) serving: Java and zookeeper-ts log in there`, async () => {
        for (const m of multi) m.proxy.refuse(m.address !== serving);
        const port = multi[0]!.proxy.port;
        const connect = `multi.zk.test:${port}`;
        const javaResult = await javaLogin(connect, true);
        // Ours picks at random but not the same address twice before each has had its turn: the second attempt at the latest.
        const ours = { node: await oursSession(connect, true, "node"), bun: await oursSession(connect, true, "bun"), deno: await oursSession(connect, true, "deno") };
        const seen = Object.entries(ours).map(([rt, o]) => `${rt} ${o.who === "ok" ? `ok at ${o.remote}` : o.who}`).join("; ");
        results.push(`${`multi.zk.test, only ${serving} (${MULTI[serving]})`.padEnd(44)} -> Java ${javaResult} | ours ${seen}`);
        assert.equal(javaResult, "ok", `Java: ${javaResult}`);
        for (const [rt, o] of Object.entries(ours)) {
          assert.equal(o.who, "ok", `${rt}: ${o.who}`);
          assert.equal(o.remote, `${serving}:${port}`, `${rt} went to ${o.remote}`);
        }
      }, 300_000);
    }
  });
}
