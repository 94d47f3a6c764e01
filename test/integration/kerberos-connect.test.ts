// SASL GSSAPI through ZooKeeper.connect, the Kerberos edges (issue 30): each of the four AES enctypes end to
// end (a client principal whose keys are of one enctype only, and the service's session_enctypes string
// attribute set to it, so the AS exchange, the TGT's and the service ticket's session keys, the authenticator
// and the GSS wrap tokens are all of that enctype; the real KDC's log says which it issued), RC4 and DES keys
// refused with an error naming the enctype, a client principal the KDC does not know, and tickets past a short lifetime (a principal with a 15 s
// max life): once they have expired, a link cut is followed by a fresh login from the keytab on the same
// session, while a ccache whose tickets have expired is refused with "run kinit", and a client on a ccache whose
// TGT is renewable (kinit -r) has renewed it in memory (the file untouched) and logs in again with it, while one on a
// non-renewable TGT fails that reconnect with "run kinit" and stays disconnected. Real MIT KDC
// (test/support/secure/kdc.ts) and a real Kerberized 3.8.0 server. Under CI=true a missing KDC package fails the file.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure/secure-hooks.ts";
import { lookup } from "node:dns/promises";
import { ErrorCode, Perms, ZooKeeper, type ConnectOptions, type KerberosResolver, type SaslGssapiOptions, type Transport } from "../../src/index.ts";
import { defaultTransport } from "../../src/client/transport/transport.ts";
import { loadCcache, TicketFlags } from "../../src/kerberos/ccache.ts";
import { startFaultProxy } from "../support/fakes/fault-proxy.ts";
import { ALL_ENCTYPES, describeWithKdc, refusal, startRealm, type Realm } from "../support/secure/kdc.ts";
import { until, untilState } from "../support/wait.ts";

const ROOT = `/krb-edges-${randomUUID()}`;
const dec = (b: Uint8Array | null): string => new TextDecoder().decode(b ?? new Uint8Array(0));
const NUMBER: Record<string, number> = {
  "aes256-cts-hmac-sha1-96": 18,
  "aes128-cts-hmac-sha1-96": 17,
  "aes256-cts-hmac-sha384-192": 20,
  "aes128-cts-hmac-sha256-128": 19,
};

describeWithKdc("SASL GSSAPI edges through connect() (real KDC, Kerberized ZooKeeper 3.8.0)", "kerberos-connect", () => {
  let realm: Realm;
  const gssapi = (principal: string, keytab: string | Uint8Array): ConnectOptions["sasl"] => ({
    mechanism: "GSSAPI", principal, keytab, krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost",
  });
  async function connect(connectString: string, options: ConnectOptions): Promise<ZooKeeper> {
    return realm.track(await ZooKeeper.connect(connectString, { connectTimeout: 10_000, sessionTimeout: 30_000, ...options }));
  }
  const refused = (options: ConnectOptions, what: string) =>
    refusal("kerberos-connect", ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 10_000, ...options }), what);
  /** The KDC's log lines (ISSUE lines name the reply, ticket and session key enctypes). */
  const kdcLog = (): string[] => readFileSync(join(realm.kdc.dir, "kdc.log"), "utf8").split("\n");

  beforeAll(async () => {
    realm = await startRealm();
    const zk = await connect(realm.srv.connectString, { sasl: gssapi(realm.alice, realm.aliceKeytab) });
    await zk.create(ROOT, "");
  }, 120_000);

  afterAll(() => realm?.close(), 60_000);

  for (const name of ALL_ENCTYPES) {
    const n = NUMBER[name];
    it(`${name} (${n}) end to end: keys, TGT and service session keys of it only; the session is served`, async () => {
      const who = `e${n}@${realm.kdc.realm}`;
      realm.kdc.addPrincipal(who, { enctypes: [name], requiresPreauth: true });
      const keytab = realm.kdc.ktadd(who, `e${n}.keytab`, { enctypes: [name] });
      realm.kdc.kadmin(`setstr ${realm.srv.principal} session_enctypes ${name}`);
      try {
        const zk = await connect(realm.srv.connectString, { sasl: gssapi(who, keytab) });
        const path = await zk.create(`${ROOT}/e${n}`, name, { acl: [{ perms: Perms.ALL, id: { scheme: "sasl", id: who } }] });
        assert.equal(dec((await zk.getData(path)).data), name);
        assert.ok((await zk.whoAmI()).some((i) => i.scheme === "sasl" && i.id === who));
      } finally {
        realm.kdc.kadmin(`delstr ${realm.srv.principal} session_enctypes`);
      }
      const tag = `${name}(${n})`;
      const issued = kdcLog().filter((l) => l.includes("ISSUE") && l.includes(`${who} for `));
      const as = issued.find((l) => l.includes("AS_REQ") && l.includes(`for krbtgt/${realm.kdc.realm}@`));
      const tgs = issued.find((l) => l.includes("TGS_REQ") && l.includes(`for ${realm.srv.principal}`));
      assert.ok(as?.includes(`rep=${tag}`) && as.includes(`ses=${tag}`), `AS: ${as}`);
      assert.ok(tgs?.includes(`rep=${tag}`) && tgs.includes(`ses=${tag}`), `TGS: ${tgs}`);
    }, 30_000);
  }

  // The server's principal per host, as the Java client finds it (issue 40 item 2): its principal is zookeeper/localhost.
  const canonical = (extra: Partial<SaslGssapiOptions> = {}): ConnectOptions["sasl"] => ({
    mechanism: "GSSAPI", principal: realm.alice, keytab: realm.aliceKeytab, krb5Config: realm.kdc.krb5Conf, ...extra,
  });
  const port = (): number => realm.srv.server.clientPort;
  const isAlice = async (zk: ZooKeeper): Promise<void> => assert.ok((await zk.whoAmI()).some((i) => i.scheme === "sasl" && i.id === realm.alice));

  it("canonicalization (default on): 127.0.0.1 and localhost both log in as zookeeper/localhost", async () => {
    await isAlice(await connect(`127.0.0.1:${port()}`, { sasl: canonical() }));
    await isAlice(await connect(`localhost:${port()}`, { sasl: canonical() }));
  }, 30_000);

  it("an alias through the injected resolver (a proxy transport dials it): canonicalized to localhost", async () => {
    const asked: string[] = [];
    const resolver: KerberosResolver = {
      lookup: async (host) => {
        asked.push(host);
        return host === "zk1.zkts.test" ? ["127.0.0.1"] : (await lookup(host, { all: true })).map((a) => a.address);
      },
    };
    const transport: Transport = { connect: (t, h, o) => defaultTransport.connect(t.host === "zk1.zkts.test" ? { ...t, host: "127.0.0.1" } : t, h, o) };
    await isAlice(await connect(`zk1.zkts.test:${port()}`, { sasl: canonical({ resolver }), transport }));
    assert.deepEqual(asked.slice(0, 2), ["zk1.zkts.test", "localhost"]); // forward, then the reverse name confirmed
  }, 30_000);

  it("a resolver that never answers: the host as written, after a quarter of the connect timeout (no hang)", async () => {
    let calls = 0;
    const resolver: KerberosResolver = { lookup: () => (calls++, new Promise<readonly string[]>(() => {})) };
    const t0 = performance.now();
    await isAlice(await connect(`localhost:${port()}`, { connectTimeout: 4000, sasl: canonical({ resolver }) }));
    assert.equal(calls, 1);
    assert.ok(performance.now() - t0 >= 900, "the resolver was not waited for");
  }, 30_000);

  it("a reverse name the KDC does not know (injected): AUTHFAILED naming zookeeper/<that name>", async () => {
    const resolver: KerberosResolver = { reverse: async () => "zk9.zkts.test", lookup: async () => ["127.0.0.1"] };
    const e = await refusal("kerberos-connect", ZooKeeper.connect(`127.0.0.1:${port()}`, { connectTimeout: 10_000, sasl: canonical({ resolver }) }), "unknown reverse name");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, /zookeeper\/zk9\.zkts\.test@ZKTS\.TEST/);
    assert.match(e.message, /KDC_ERR_S_PRINCIPAL_UNKNOWN/);
  }, 30_000);

  it("canonicalizeHostname: false: an IP address still by its reverse name (as Java's getHostName), a name as written", async () => {
    await isAlice(await connect(`127.0.0.1:${port()}`, { sasl: canonical({ canonicalizeHostname: false }) }));
    await isAlice(await connect(`localhost:${port()}`, { sasl: canonical({ canonicalizeHostname: false }) }));
    // A name is not canonicalized: an alias (through the injected resolver) asks for zookeeper/<alias>.
    const resolver: KerberosResolver = { reverse: async () => "localhost", lookup: async () => ["127.0.0.1"] };
    const e = await refusal("kerberos-connect", ZooKeeper.connect(`zk-alias.zkts.test:${port()}`, { connectTimeout: 10_000, sasl: canonical({ canonicalizeHostname: false, resolver }), resolver: async () => ["127.0.0.1"] }), "alias, no canonicalization");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, /zookeeper\/zk-alias\.zkts\.test@ZKTS\.TEST/);
    assert.match(e.message, /KDC_ERR_S_PRINCIPAL_UNKNOWN/);
  }, 30_000);

  it("serverPrincipal zookeeper/_HOST@REALM (with 127.0.0.1, canonicalized), a fixed one, and serverRealm", async () => {
    await isAlice(await connect(`127.0.0.1:${port()}`, { sasl: canonical({ serverPrincipal: `zookeeper/_HOST@${realm.kdc.realm}` }) }));
    await isAlice(await connect(`127.0.0.1:${port()}`, { sasl: canonical({ serverPrincipal: "zookeeper/localhost", canonicalizeHostname: false }) }));
    await isAlice(await connect(`127.0.0.1:${port()}`, { sasl: canonical({ serverRealm: realm.kdc.realm }) }));
    // A realm the client's KDC has no trust to (neither krbtgt/OTHER.TEST@ZKTS.TEST nor krbtgt/TEST@ZKTS.TEST on the
    // hierarchical path): a definite refusal naming the path and the TGTs asked for.
    const e = await refusal("kerberos-connect", ZooKeeper.connect(`127.0.0.1:${port()}`, { connectTimeout: 10_000, sasl: canonical({ serverRealm: "OTHER.TEST" }) }), "other realm");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, /zookeeper\/localhost@OTHER\.TEST/);
    assert.match(e.message, /no cross-realm path .* krbtgt\/OTHER\.TEST@ZKTS\.TEST, krbtgt\/TEST@ZKTS\.TEST .* ZKTS\.TEST → TEST → OTHER\.TEST/);
  }, 30_000);

  it("a client principal the KDC does not know (deleted after its keytab was made): AUTHFAILED naming it", async () => {
    const who = `gone@${realm.kdc.realm}`;
    realm.kdc.addPrincipal(who, { requiresPreauth: true });
    const keytab = realm.kdc.ktadd(who, "gone.keytab");
    realm.kdc.kadmin(`delprinc -force ${who}`);
    const e = await refused({ sasl: gssapi(who, keytab) }, "unknown client principal");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, /gone@ZKTS\.TEST/);
    assert.match(e.message, /KDC_ERR_C_PRINCIPAL_UNKNOWN/);
  }, 30_000);

  it("a client clock an hour off the KDC's (Clock.wallTime): KRB_AP_ERR_SKEW with both times fails attempts, retried; the clock stepped right, the same connect() succeeds", async () => {
    const who = `skew@${realm.kdc.realm}`;
    realm.kdc.addPrincipal(who, { requiresPreauth: true });
    const keytab = realm.kdc.ktadd(who, "skew.keytab");
    const hour = 3_600_000;
    let offset = -hour;
    // Wall time read at each use: stepping `offset` plays an NTP step of the host's clock.
    const clock = { now: () => performance.now(), setTimeout: (f: () => void, ms: number) => setTimeout(f, ms), clearTimeout: (h: unknown) => clearTimeout(h as ReturnType<typeof setTimeout>), wallTime: () => Date.now() + offset };
    const failed: string[] = [];
    const logger = { debug: (m: string) => void (m.includes("failed") && failed.push(m)), info: () => {}, warn: () => {}, error: () => {} };
    const connecting = ZooKeeper.connect(realm.srv.connectString, { connectTimeout: 30_000, sasl: gssapi(who, keytab), clock, logger });
    await until("a login to fail with KRB_AP_ERR_SKEW", () => failed.some((l) => l.includes("KRB_AP_ERR_SKEW")), 20_000, 20);
    const skew = failed.find((l) => l.includes("KRB_AP_ERR_SKEW"))!;
    process.stderr.write(`[kerberos-connect] clock an hour off, a retried attempt: ${skew}\n`);
    const times = [...skew.matchAll(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/g)].map((m) => Date.parse(`${m[0]}Z`));
    assert.equal(times.length, 2, `both times in: ${skew}`);
    assert.ok(Math.abs(Math.abs(times[0]! - times[1]!) - hour) < 120_000, `an hour apart: ${skew}`);
    offset = 0; // the clock stepped back right: the same login's next KDC request uses the time read now
    const zk = realm.track(await connecting);
    assert.equal(zk.state, "connected");
    assert.ok((await zk.whoAmI()).some((i) => i.scheme === "sasl" && i.id === who));
    process.stderr.write(`[kerberos-connect] clock an hour off: ${failed.filter((l) => l.includes("KRB_AP_ERR_SKEW")).length} attempt(s) failed with KRB_AP_ERR_SKEW, then connected (no authFailed)\n`);
  }, 60_000);

  it("RC4 and DES keys are refused, naming the enctype (AUTHFAILED, before any KDC exchange)", async () => {
    const who = `rc4@${realm.kdc.realm}`;
    realm.kdc.addPrincipal(who, { enctypes: ["rc4-hmac"] });
    const rc4 = realm.kdc.keytabBytes(realm.kdc.ktadd(who, "rc4.keytab", { enctypes: ["rc4-hmac"] }).slice(realm.kdc.dir.length + 1));
    const e = await refused({ sasl: gssapi(who, rc4) }, "RC4 keytab");
    assert.equal(e.code, ErrorCode.AUTHFAILED);
    assert.match(e.message, /rc4-hmac/);
    // MIT 1.20 cannot make DES keys any more: the same keytab with its entry's enctype 23 patched to 3 (des-cbc-md5).
    const des = rc4.slice();
    let patched = 0;
    for (let i = 0; i + 3 < des.length; i++) {
      if (des[i] === 0 && des[i + 1] === 23 && des[i + 2] === 0 && des[i + 3] === 16) {
        des[i + 1] = 3;
        patched++;
      }
    }
    assert.equal(patched, 1);
    const d = await refused({ sasl: gssapi(who, des) }, "DES keytab");
    assert.equal(d.code, ErrorCode.AUTHFAILED);
    assert.match(d.message, /des-cbc-md5/);
  }, 30_000);

  it("past a 15 s ticket life: an expired ccache is refused (run kinit); the keytab client logs in afresh after a link cut; a renewable ccache's TGT is renewed in memory and serves that reconnect, a non-renewable one's fails it (run kinit; disconnected)", async () => {
    const who = `short@${realm.kdc.realm}`;
    realm.kdc.addPrincipal(who, { requiresPreauth: true, maxLife: "15 seconds" });
    const keytab = realm.kdc.ktadd(who, "short.keytab");
    const proxy = await startFaultProxy("127.0.0.1", realm.srv.server.clientPort);
    const krbtgt = `krbtgt/${realm.kdc.realm}@${realm.kdc.realm}`;
    const iso = (ms: number): string => new Date(ms).toISOString();
    try {
      // A renewable TGT of a 15 s life (kinit -l 15s -r 5m), the ccache of a second client.
      const renewable = realm.kdc.kinit(who, keytab, "renewable.cc", { life: "15s", renewable: "5m" });
      const file = readFileSync(renewable);
      const mtime = statSync(renewable).mtimeMs;
      const tgt = loadCcache(renewable).credentials.find((c) => c.server.components.join("/") === `krbtgt/${realm.kdc.realm}`)!;
      assert.ok((tgt.flags & TicketFlags.RENEWABLE) !== 0 && tgt.renewTill > tgt.endTime + 200, `not renewable: ${JSON.stringify({ end: tgt.endTime, renewTill: tgt.renewTill })}`);
      process.stderr.write(`[kerberos-connect] renewable ccache TGT: ${iso(tgt.startTime * 1000)} to ${iso(tgt.endTime * 1000)}, renewable until ${iso(tgt.renewTill * 1000)}\n`);
      const renewals: string[] = [];
      const logger = { debug: (m: string) => void (m.includes("renewed the TGT") && renewals.push(m)), info: () => {}, warn: () => {}, error: () => {} };
      const zr = await connect(proxy.connectString, { sasl: { mechanism: "GSSAPI", ccache: `FILE:${renewable}`, krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost" }, logger });
      const renewedSession = zr.sessionId;
      // A non-renewable TGT of a 15 s life (a principal whose tickets are never renewable), the ccache of a third client.
      const fixed = `shortfixed@${realm.kdc.realm}`;
      realm.kdc.addPrincipal(fixed, { requiresPreauth: true, maxLife: "15 seconds", maxRenewLife: "0" });
      const nonRenewable = realm.kdc.kinit(fixed, realm.kdc.ktadd(fixed, "shortfixed.keytab"), "fixed.cc", { life: "15s" });
      const fixedTgt = loadCcache(nonRenewable).credentials.find((c) => c.server.components[0] === "krbtgt")!;
      assert.equal(fixedTgt.flags & TicketFlags.RENEWABLE, 0, "a renewable TGT for a principal of max renewable life 0");
      const failed: string[] = [];
      const fixedLogger = { debug: (m: string) => void (m.includes("failed") && failed.push(m)), info: () => {}, warn: () => {}, error: () => {} };
      const zf = await connect(proxy.connectString, { sasl: { mechanism: "GSSAPI", ccache: `FILE:${nonRenewable}`, krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost" }, logger: fixedLogger });
      const zk = await connect(proxy.connectString, { sasl: gssapi(who, keytab) });
      const session = zk.sessionId;
      const path = await zk.create(`${ROOT}/short`, "short-lived tickets", { acl: [{ perms: Perms.ALL, id: { scheme: "sasl", id: who } }] });
      // The KDC's end time for this principal's tickets, issued after the client's: once it has passed, so have the client's.
      const ccache = realm.kdc.kinit(who, keytab, "short.cc");
      const end = Math.max(...loadCcache(ccache).credentials.filter((c) => !c.server.components[0]?.startsWith("X-CACHECONF")).map((c) => c.endTime * 1000));
      assert.ok(end - Date.now() < 16_000, `the ticket life is not short: ends ${new Date(end).toISOString()}`);
      const logins = (): number => kdcLog().filter((l) => l.includes("AS_REQ") && l.includes("ISSUE") && l.includes(`${who} for krbtgt/`)).length;
      const before = logins();
      // The renewal timer: past 80% of the TGT's life (12 s), before its end.
      await until("the ccache's TGT to be renewed", () => renewals.length > 0, 20_000, 50);
      const renewedAt = Date.now();
      process.stderr.write(`[kerberos-connect] ${renewals[0]}\n`);
      assert.ok(renewedAt < tgt.endTime * 1000, `renewed at ${iso(renewedAt)}, after the TGT's end ${iso(tgt.endTime * 1000)}`);
      const renewedLine = kdcLog().filter((l) => l.includes("TGS_REQ") && l.includes("ISSUE") && l.includes(`${who} for ${krbtgt}`));
      assert.equal(renewedLine.length, 1, `the KDC's renewal (a TGS-REQ for ${krbtgt}): ${renewedLine.join("\n")}`);
      const [, from, to] = /now (\S+) to (\S+),/.exec(renewals[0]!) ?? [];
      assert.ok(Date.parse(to!) > tgt.endTime * 1000 + 5000, `the renewed TGT ends ${to}, the file's ${iso(tgt.endTime * 1000)}`);
      assert.ok(Date.parse(to!) - Date.parse(from!) <= 15_000, `a life of 15 s at most: ${from} to ${to}`);
      await until(`the tickets of ${who} to expire (${new Date(end).toISOString()})`, () => Date.now() > end + 1000, 30_000, 100);

      const expired = await refused({ sasl: { mechanism: "GSSAPI", ccache: `FILE:${ccache}`, krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost" } }, "expired ccache");
      assert.equal(expired.code, ErrorCode.AUTHFAILED);
      assert.match(expired.message, /expired at \d{4}-\d\d-\d\dT[\d:.]+Z; run kinit/);

      const services = (): number => kdcLog().filter((l) => l.includes("TGS_REQ") && l.includes("ISSUE") && l.includes(`${who} for ${realm.srv.principal}`)).length;
      const servicesBefore = services();
      proxy.cut();
      await Promise.all([untilState(zk, "disconnected"), untilState(zr, "disconnected")]);
      await Promise.all([untilState(zk, "connected"), untilState(zr, "connected")]);
      assert.equal(dec((await zk.getData(path)).data), "short-lived tickets");
      assert.equal(zk.sessionId, session);
      assert.ok(logins() > before, `no new AS exchange for ${who} after its tickets expired (${logins()} logins)`);
      // The ccache client past its file TGT's end: a new service ticket from the renewed TGT (the file's has expired).
      assert.ok(Date.now() > tgt.endTime * 1000, "the file's TGT has not ended yet");
      assert.equal(dec((await zr.getData(path)).data), "short-lived tickets");
      assert.equal(zr.sessionId, renewedSession);
      assert.ok(services() >= servicesBefore + 2, `service tickets after the cut: ${services() - servicesBefore} (the keytab client's and the ccache client's)`);
      assert.deepEqual(new Uint8Array(readFileSync(renewable)), new Uint8Array(file), "the ccache file was written");
      assert.equal(statSync(renewable).mtimeMs, mtime, "the ccache file was touched");
      // The non-renewable TGT past its end: each reconnect fails "expired … run kinit" (may pass: a kinit would mend it), no authFailed.
      await until("the non-renewable ccache's client to fail a login", () => failed.some((m) => /expired at .*; run kinit/.test(m)), 20_000, 50);
      process.stderr.write(`[kerberos-connect] non-renewable ccache TGT (${iso(fixedTgt.startTime * 1000)} to ${iso(fixedTgt.endTime * 1000)}), a reconnect: ${failed.find((m) => /run kinit/.test(m))}\n`);
      assert.equal(zf.state, "disconnected");
      process.stderr.write(`[kerberos-connect] renewable ccache: reconnected ${iso(Date.now())}, past the file TGT's end ${iso(tgt.endTime * 1000)}, the same session; the ccache file unchanged\n`);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
