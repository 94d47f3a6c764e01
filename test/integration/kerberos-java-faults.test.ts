// The Java client (3.8.0, test/support/secure/java/KerberosClient.java, as kerberos-java runs it) beside zookeeper-ts on
// the same KDC faults (issue 40 items 4, 6 and 9), against one real MIT realm and one Kerberized ZooKeeper 3.8.0
// (startRealm, test/support/secure/kdc.ts), each client logged in as its own principal with its keytab:
//   (1) the first kdc dead (nothing listens), the second good;
//   (2) the first kdc a fake answering KDC_ERR_SVC_UNAVAILABLE (startErrorKdc), the second good;
//   (3) the first kdc a replica answering KDC_ERR_PREAUTH_FAILED (as after a key change it has not seen yet), primary_kdc good;
//   (4) a TCP-only KDC (a TCP relay to the KDC, nothing on UDP): udp_preference_limit = 1, and the default (UDP refused);
//   (6) the only KDC slow (a relay answering 3.5 s late), with kdc_timeout = 10000 in krb5.conf;
//   (5) transient faults on a live session, both clients on the same fault proxy to the server at once: the ccache
//       truncated during a reconnect then restored (both on a kinit ccache), and the KDC down during a reconnect that
//       needs new tickets (principals of 15 s tickets, past their life) then up again; each client's state sequence.
// Every krb5.conf here has kdc_timeout = 3000 and max_retries = 1 (the Java client's defaults, 30 s and 3 tries, would
// spend 90 s on a dead KDC), but (6)'s 10000; zookeeper-ts reads them as Java does. Asserted: zookeeper-ts logs in wherever Java does, and never
// ends in authFailed on a transient fault. Java's results are recorded as they come and printed beside ours in one table.
// Node only: the Java side is the same whatever runs the test.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import process from "node:process";
import { it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure/secure-hooks.ts";
import { ZooKeeper, ZooKeeperError, type ConnectOptions } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import {
  ClientTrace, describeWithKdc, freePort, javaKerberosClient, javaKerberosWatcher, startErrorKdc, startRealm, startSlowKdc,
  type ErrorKdc, type JavaKerberosRun, type Realm,
} from "../support/secure/kdc.ts";
import type { LineEvent, LineProcess } from "../support/processes/line-process.ts";
import { localInstall } from "../support/servers/zk-install.ts";
import { until, untilState } from "../support/wait.ts";

const TAG = "kerberos-java-faults";
/** What both clients read in every krb5.conf here. */
const TIMEOUTS = { kdc_timeout: "3000", max_retries: "1" };

interface KdcRow {
  readonly setup: string;
  /** The client krb5.conf of the row and the fake KDC it lists, if any. */
  readonly conf: () => Promise<{ krb5Conf: string; fake?: ErrorKdc }>;
}

describeWithKdc("The Java client beside zookeeper-ts on KDC faults (real KDC, Kerberized ZooKeeper 3.8.0)", TAG, () => {
  let realm: Realm;
  let java = "";
  let classpath = "";
  /** Between the clients and the server, for the transient cases. */
  let proxy: FaultProxy;
  /** A TCP relay to the KDC's TCP port: nothing listens on UDP there. */
  let tcpRelay: FaultProxy;
  const table: string[] = [];
  const fakes: ErrorKdc[] = [];
  const watchers: LineProcess[] = [];

  /** How the Java client runs as `principal` on `krb5Conf` (the server's principal given, as its host is an IP). */
  const javaRun = (principal: string, krb5Conf: string, credentials: { keytab: string } | { ticketCache: string }, connect: string): JavaKerberosRun => ({
    java, classpath, dir: realm.kdc.dir, principal, krb5Conf, connect, ...credentials,
    props: ["-Dzookeeper.sasl.client.canonicalize.hostname=false", `-Dzookeeper.server.principal=zookeeper/localhost@${realm.kdc.realm}`],
  });

  const gssapi = (krb5Config: string, credentials: { principal: string; keytab: string } | { ccache: string }): ConnectOptions["sasl"] => ({
    mechanism: "GSSAPI", krb5Config, serviceHost: "localhost", ...credentials,
  });

  beforeAll(async () => {
    const install = await localInstall("3.8");
    java = install.java;
    classpath = install.classpath.join(":");
    realm = await startRealm();
    proxy = await startFaultProxy("127.0.0.1", realm.srv.server.clientPort);
    tcpRelay = await startFaultProxy("127.0.0.1", realm.kdc.port);
  }, 120_000);

  afterAll(async () => {
    if (table.length > 0) process.stderr.write(`[${TAG}] setup | Java 3.8.0 | zookeeper-ts\n${table.join("\n")}\n`);
    await Promise.all(watchers.map((w) => w.close(5000)));
    for (const f of fakes) f.close();
    await tcpRelay?.close();
    await proxy?.close();
    await realm?.close();
  }, 60_000);

  const conf = (name: string, kdcs: readonly string[], libdefaults: Record<string, string> = {}, relations: Record<string, string> = {}): string =>
    realm.kdc.writeKrb5Conf(name, { ...TIMEOUTS, ...libdefaults }, kdcs, relations);
  const fake = async (code: number, o?: { host: string; tgsTo: number }): Promise<ErrorKdc> => {
    const f = await startErrorKdc(realm.kdc.realm, code, o);
    fakes.push(f);
    return f;
  };
  const good = (): string => `127.0.0.1:${realm.kdc.port}`;

  const ROWS: readonly KdcRow[] = [
    { setup: "(1) first kdc dead (nothing listens), second good", conf: async () => ({ krb5Conf: conf("dead-first.conf", [`127.0.0.1:${await freePort()}`, good()]) }) },
    {
      setup: "(2) first kdc answers KDC_ERR_SVC_UNAVAILABLE, second good",
      conf: async () => {
        const f = await fake(29);
        return { krb5Conf: conf("busy-first.conf", [`127.0.0.1:${f.port}`, good()]), fake: f };
      },
    },
    {
      // The replica on 127.0.0.2 (MIT tells the primary by its address): it refuses the AS (the client's key it has is
      // the old one) and passes TGS-REQs to the real KDC, as a replica with the realm's krbtgt key answers them.
      setup: "(3) first kdc a replica answering KDC_ERR_PREAUTH_FAILED, primary_kdc good",
      conf: async () => {
        const f = await fake(24, { host: "127.0.0.2", tgsTo: realm.kdc.port });
        return { krb5Conf: conf("replica.conf", [`127.0.0.2:${f.port}`, good()], {}, { primary_kdc: good() }), fake: f };
      },
    },
    { setup: "(4a) TCP-only KDC, udp_preference_limit = 1", conf: async () => ({ krb5Conf: conf("tcp-only.conf", [`127.0.0.1:${tcpRelay.port}`], { udp_preference_limit: "1" }) }) },
    { setup: "(4b) TCP-only KDC, default preference (UDP refused)", conf: async () => ({ krb5Conf: conf("udp-refused.conf", [`127.0.0.1:${tcpRelay.port}`]) }) },
    {
      // Past the client's own bound (at most 3 s an attempt) and Java's kdc_timeout here: only krb5.conf's longer
      // kdc_timeout, read by both clients, lets either log in.
      setup: "(6) the only KDC answers 3.5 s late, kdc_timeout = 10000",
      conf: async () => {
        const f = await startSlowKdc(realm.kdc.port, 3500);
        fakes.push(f);
        return { krb5Conf: conf("slow.conf", [`127.0.0.1:${f.port}`], { kdc_timeout: "10000" }), fake: f };
      },
    },
  ];

  for (const row of ROWS) {
    it(`${row.setup}: zookeeper-ts logs in wherever the Java client does`, async () => {
      const { krb5Conf, fake: f } = await row.conf();
      // Java: a new JVM, so a new login (AS, then TGS) through this krb5.conf.
      const before = f?.requests() ?? 0;
      const j = await javaKerberosClient(javaRun(realm.alice, krb5Conf, { keytab: realm.aliceKeytab }, `127.0.0.1:${realm.srv.server.clientPort}`), "whoami");
      const javaOk = j.lines.includes(`WHO sasl:${realm.alice}`);
      // Java's reason: the Kerberos error, else the cause of its LoginException (e.g. java.net.PortUnreachableException).
      const why = /Mechanism level: (.*?\(\d+\)[^)\]]*)/.exec(j.stderr)?.[1] ?? /(?:KrbException|LoginException): ([^\n]*)/.exec(j.stderr)?.[1] ?? /Caused by: ([^\n]*)/.exec(j.stderr)?.[1] ?? "";
      const javaText = `${javaOk ? "logged in" : `${j.lines.join(" ")}${why ? ` (${why})` : ""}`}${f ? `, fake asked ${f.requests() - before}×` : ""}`;
      const mid = f?.requests() ?? 0;
      let oursText: string;
      let oursOk = false;
      try {
        const zk = realm.track(await ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 15_000, sessionTimeout: 10_000, sasl: gssapi(krb5Conf, { principal: realm.alice, keytab: realm.aliceKeytab }) }));
        oursOk = (await zk.whoAmI()).some((i) => i.scheme === "sasl" && i.id === realm.alice);
        oursText = oursOk ? "logged in" : "connected, not as alice";
        await zk.close();
      } catch (e) {
        oursText = e instanceof ZooKeeperError ? `${e.code}: ${e.message.slice(0, 160)}` : String(e);
      }
      if (f) oursText += `, fake asked ${f.requests() - mid}×`;
      table.push(`${row.setup} | ${javaText} | ${oursText}`);
      if (f) assert.ok(f.requests() > mid, `zookeeper-ts did not ask the first kdc: ${oursText}`);
      assert.ok(oursOk || !javaOk, `Java logged in, zookeeper-ts did not: ${oursText}`);
      assert.ok(oursOk, `zookeeper-ts: ${oursText} (Java: ${javaText})`);
    }, 90_000);
  }

  /** The Java client's default-watcher events (EVENT lines) so far: "SyncConnected 0x…" each. */
  const javaEvents = (w: LineProcess): string[] => w.lines.filter((l) => l.kind === "EVENT").map((l) => l.args.join(" "));
  /** Runs of the same event shown once, with their count. */
  const squeeze = (xs: readonly string[]): string => {
    const out: string[] = [];
    for (const x of xs) {
      const m = /^(.*?)(?: ×(\d+))?$/.exec(out[out.length - 1] ?? "");
      if (m && m[1] === x) out[out.length - 1] = `${x} ×${Number(m[2] ?? 1) + 1}`;
      else out.push(x);
    }
    return out.join(" → ");
  };
  const isEvent = (...states: string[]) => (l: LineEvent): boolean => l.kind === "EVENT" && states.includes(l.args[0] ?? "");

  /**
   * Both clients connected through the proxy: the Java watcher (authenticated) and ours. `fault` is turned on and the
   * link cut; while it is on, ours must fail two attempts and stay disconnected, and the Java client must have made its
   * reconnect (its verdict: SaslAuthenticated or AuthFailed); then `heal`. Ours must be back on the same session, with
   * no state between; Java is asked whoami once it has settled (connected again after its verdict, or its session
   * gone). Returns the table row.
   */
  async function rideOutBoth(what: string, w: LineProcess, zk: ZooKeeper, trace: ClientTrace, failure: RegExp, fault: () => unknown, heal: () => unknown): Promise<string> {
    const session = zk.sessionId;
    const seen = w.lines.length;
    const since = (): LineEvent[] => w.lines.slice(seen);
    const verdict = isEvent("SaslAuthenticated", "AuthFailed", "Expired", "Closed");
    let javaNote = "";
    try {
      await fault();
      proxy.cut();
      await untilState(zk, "disconnected");
      await until(`two reconnect attempts to fail with ${failure}`, () => trace.failures(failure) >= 2 || zk.state === "authFailed", 30_000, 20);
      await until("the Java client's reconnect during the fault", () => since().some(verdict), 30_000, 20).catch(() => (javaNote = " (no reconnect verdict during the fault within 30 s)"));
    } finally {
      await heal();
    }
    await untilState(zk, "connected", 30_000).catch(() => {});
    await until("the Java client to settle", () => since().some(isEvent("Expired", "Closed")) || (since().some(verdict) && since().some(isEvent("SyncConnected"))), 45_000, 50)
      .catch(() => (javaNote += " (not settled within 45 s)"));
    const [ids = "", javaState = ""] = (await w.ask("whoami", "WHOAMI", 15_000).catch((e: Error) => [`error: ${/ERROR (\S+ \S+)/.exec(e.message)?.[1] ?? e.message.slice(0, 80)}`])) as string[];
    trace.print(what);
    const oursIds = zk.state === "connected" ? (await zk.whoAmI()).map((i) => `${i.scheme}:${i.id}`).join(",") : "";
    const javaText = `${squeeze(javaEvents(w))}${javaNote}; then whoami: ${ids === "" ? "none" : ids}${javaState ? ` (${javaState})` : ""}`;
    const oursText = `${trace.states().join(" → ")} (${trace.failures(failure)} attempts failed${zk.sessionId === session ? ", same session" : ", NEW session"}); then whoami: ${oursIds || "none"}`;
    // Ours: never authFailed, back on the same session, logged in.
    assert.deepEqual(trace.states(), ["connected", "disconnected", "connected"], oursText);
    assert.equal(zk.sessionId, session);
    assert.ok(oursIds.includes("sasl:"), oursText);
    return `${what} | ${javaText} | ${oursText}`;
  }

  it("(5a) a ccache truncated during a reconnect, then restored: both clients' state sequences; zookeeper-ts never authFailed", async () => {
    const ccache = realm.kdc.kinit(realm.alice, realm.aliceKeytab, "faults.cc");
    // The service ticket in the ccache too (kinit + kvno): each login of ours reads it there.
    execFileSync("kvno", ["-c", `FILE:${ccache}`, realm.srv.principal], { env: realm.kdc.env, stdio: ["ignore", "pipe", "pipe"] });
    const w = javaKerberosWatcher(javaRun(realm.alice, realm.kdc.krb5Conf, { ticketCache: ccache }, proxy.connectString));
    watchers.push(w);
    await w.waitFor(isEvent("SaslAuthenticated", "AuthFailed"), 30_000);
    const trace = new ClientTrace(TAG);
    const zk = realm.track(await ZooKeeper.connect(proxy.connectString, { connectTimeout: 10_000, sessionTimeout: 40_000, logger: trace.logger, sasl: gssapi(realm.kdc.krb5Conf, { ccache: `FILE:${ccache}` }) }));
    trace.watch(zk);
    const whole = readFileSync(ccache);
    table.push(await rideOutBoth("(5a) ccache truncated during a reconnect, then restored", w, zk, trace, /cannot use the ccache/, () => writeFileSync(ccache, whole.subarray(0, 20)), () => writeFileSync(ccache, whole)));
  }, 120_000);

  it("(5b) the KDC down during a reconnect that needs new tickets, then up: both clients' state sequences; zookeeper-ts never authFailed", async () => {
    // A principal each whose tickets live 15 s; the fault comes once they have lapsed, so either client needs the KDC.
    const principal = (name: string): { who: string; keytab: string } => {
      const who = `${name}@${realm.kdc.realm}`;
      realm.kdc.addPrincipal(who, { requiresPreauth: true, maxLife: "15 seconds" });
      return { who, keytab: realm.kdc.ktadd(who, `${name}.keytab`) };
    };
    const jd = principal("javadown");
    const td = principal("tsdown");
    const w = javaKerberosWatcher(javaRun(jd.who, realm.kdc.krb5Conf, { keytab: jd.keytab }, proxy.connectString));
    watchers.push(w);
    await w.waitFor(isEvent("SaslAuthenticated", "AuthFailed"), 30_000);
    const trace = new ClientTrace(TAG);
    const zk = realm.track(await ZooKeeper.connect(proxy.connectString, { connectTimeout: 10_000, sessionTimeout: 40_000, logger: trace.logger, sasl: gssapi(realm.kdc.krb5Conf, { principal: td.who, keytab: td.keytab }) }));
    trace.watch(zk);
    const loggedIn = Date.now();
    await until("both clients' tickets to lapse", () => Date.now() > loggedIn + 16_000, 25_000, 100);
    table.push(await rideOutBoth("(5b) KDC down during a reconnect needing new tickets, then up", w, zk, trace, /no KDC of realm/, () => realm.kdc.stop(), () => realm.kdc.start()));
  }, 150_000);
});
