// The Kerberos client against a real MIT KDC (test/support/secure/kdc.ts: a realm in a temporary directory,
// krb5kdc -n on loopback; nothing in /etc): the AS exchange with a keytab for each AES enctype (with and
// without required pre-authentication), a password, a kinit ccache; the TGS exchange for
// zookeeper/localhost; a whole RFC 4752 exchange against the test acceptor (support/kerberos-peer.ts) holding the
// service keytab (mutual and not); UDP, TCP, udp_preference_limit = 1, a TCP-only KDC, a dead first
// KDC, KRB_ERR_RESPONSE_TOO_BIG; and the failures: stale keytab, unknown client, unknown service, KDC
// down or silent, clock skew. Under CI=true a missing KDC package fails the file instead of skipping it.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createServer, type Server } from "node:net";
import { afterAll, beforeAll, it } from "../support/bdd.ts";
import { hex } from "../support/bytes.ts";
import { describeWithKdc, freePort, startErrorKdc, startKdc, type TestKdc } from "../support/secure/kdc.ts";
import { dialSocket, type Dialer } from "../../src/client/transport/transport.ts";
import { openDatagram } from "../../src/client/transport/udp.ts";
import { gssapiMechanism, type GssapiSaslClient } from "../../src/client/sasl/gssapi.ts";
import { enctype } from "../../src/kerberos/crypto.ts";
import { KerberosError, KerberosErrorReason } from "../../src/kerberos/errors.ts";
import { GssFlags, unwrap, wrap } from "../../src/kerberos/gss.ts";
import { loadCcache, TicketFlags, type Credential } from "../../src/kerberos/ccache.ts";
import { asExchange, tgsExchange, udpExchange, type KerberosCredential, type SrvResolver, type UdpExchange } from "../../src/kerberos/kdc.ts";
import { loadKeytab } from "../../src/kerberos/keytab.ts";
import { loadKrb5Conf } from "../../src/kerberos/krb5conf.ts";
import { KerberosLogin, parsePrincipal, type KerberosLoginOptions } from "../../src/kerberos/login.ts";
import { decodeKdcRep } from "../../src/kerberos/messages.ts";
import { KeyBlock } from "../../src/kerberos/types.ts";
import { acceptSecContext, buildApRep, encodeKrbError } from "../support/secure/kerberos-peer.ts";
import { ManualClock } from "../support/fakes/fake-clock.ts";
import { until } from "../support/wait.ts";

const execFileAsync = promisify(execFile);

const ENCTYPES: ReadonlyArray<[number, string]> = [
  [18, "aes256-cts-hmac-sha1-96"],
  [17, "aes128-cts-hmac-sha1-96"],
  [20, "aes256-cts-hmac-sha384-192"],
  [19, "aes128-cts-hmac-sha256-128"],
];

async function rejects(p: Promise<unknown>, reason: string, pattern: RegExp): Promise<KerberosError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof KerberosError, `expected a KerberosError, got ${String(e)}`);
    assert.equal(e.reason, reason, e.message);
    assert.match(e.message, pattern);
    return e;
  }
  assert.fail("expected a rejection");
}

/** The client's sockets: TCP through the default transport, UDP over node:dgram (what a session passes). */
const sockets = { dial: dialSocket, udp: udpExchange(openDatagram) };

/** The SASL client of one exchange with `login`'s ticket for serviceName/serviceHost (what a session's GSSAPI factory makes). */
async function gssapiClient(o: { login: KerberosLogin; serviceName?: string; serviceHost: string; mutual?: boolean }): Promise<GssapiSaslClient> {
  const credential = await o.login.serviceTicket(o.serviceName ?? "zookeeper", o.serviceHost);
  return gssapiMechanism({ credential, now: () => o.login.now(), mutual: o.mutual });
}

/** A Dialer and a UdpExchange that count their use (the TCP one through the default transport). */
function counters(): { dial: Dialer; udp: UdpExchange; tcp: number; udpCount: number } {
  const c = {
    tcp: 0,
    udpCount: 0,
    dial: ((t, h, o) => {
      c.tcp++;
      return dialSocket(t, h, o);
    }) as Dialer,
    udp: ((t, r, o) => {
      c.udpCount++;
      return sockets.udp(t, r, o);
    }) as UdpExchange,
  };
  return c;
}

describeWithKdc("Kerberos against a real MIT KDC", "kerberos-kdc", () => {
  let kdc: TestKdc;
  let services: string;
  const login = (o: Partial<KerberosLoginOptions>): KerberosLogin => new KerberosLogin({ krb5Config: kdc.krb5Conf, timeoutMs: 3000, ...sockets, ...o });

  beforeAll(async () => {
    kdc = await startKdc();
    for (const [n, name] of ENCTYPES) {
      kdc.addPrincipal(`user${n}`, { enctypes: [name] });
      kdc.addPrincipal(`pre${n}`, { enctypes: [name], requiresPreauth: true });
      kdc.ktadd(`user${n}`, `user${n}.keytab`, { enctypes: [name] });
      kdc.ktadd(`pre${n}`, `pre${n}.keytab`, { enctypes: [name] });
      kdc.addPrincipal(`zk${n}/localhost`, { enctypes: [name] });
      kdc.ktadd(`zk${n}/localhost`, "zk.keytab", { enctypes: [name] });
    }
    kdc.addPrincipal("zookeeper/localhost");
    services = kdc.ktadd("zookeeper/localhost", "zk.keytab");
    kdc.addPrincipal("bob", { password: "bob-password", requiresPreauth: true });
    // Stale keytabs: exported, then the keys changed by a second export (kvno + 1).
    kdc.addPrincipal("stale");
    kdc.ktadd("stale", "stale-old.keytab");
    kdc.ktadd("stale", "stale-new.keytab");
    kdc.addPrincipal("stalepa", { requiresPreauth: true });
    kdc.ktadd("stalepa", "stalepa-old.keytab");
    kdc.ktadd("stalepa", "stalepa-new.keytab");
  }, 60_000);

  afterAll(async () => {
    await kdc?.destroy();
  });

  for (const [n, name] of ENCTYPES) {
    for (const pre of [false, true]) {
      const who = `${pre ? "pre" : "user"}${n}`;
      it(`AS with a keytab of ${name} only${pre ? " (pre-authentication required)" : ""}, then TGS for zookeeper/localhost`, async () => {
        const replies: Uint8Array[] = [];
        const l = login({ keytab: `${kdc.dir}/${who}.keytab`, principal: who, onMessage: (d, b) => d === "reply" && replies.push(b) });
        const tgt = await l.tgt();
        assert.equal(tgt.key.enctype, n);
        assert.equal(tgt.server.components.join("/"), `krbtgt/${kdc.realm}`);
        assert.ok(tgt.endTime > Date.now() + 3600_000);
        // The real AS-REP decodes, and its enc-part was in the client key's enctype.
        const asRep = decodeKdcRep(replies[replies.length - 1]);
        assert.equal(asRep.encPart.etype, n);
        assert.equal(asRep.cname.components[0], who);
        const svc = await l.serviceTicket("zookeeper", "localhost");
        assert.equal(svc.server.components.join("/"), "zookeeper/localhost");
        assert.equal(svc.server.realm, kdc.realm);
        assert.equal(svc.key.enctype, 18); // the session key: the first of our list (18 first) the service has
        assert.equal(svc.ticket.encPart.etype, 18);
        // A service with keys of this enctype only: its ticket is of it; the session key too when only it is offered.
        const one = await l.serviceTicket(`zk${n}`, "localhost");
        assert.equal(one.ticket.encPart.etype, n);
        const only = await login({ keytab: `${kdc.dir}/${who}.keytab`, principal: who, enctypes: [n] }).serviceTicket(`zk${n}`, "localhost");
        assert.equal(only.key.enctype, n);
        assert.equal(only.ticket.encPart.etype, n);
        // Cached: a second call does not go to the KDC.
        const count = replies.length;
        assert.equal(await l.serviceTicket("zookeeper", "localhost"), svc);
        assert.equal(replies.length, count);
      }, 30_000);
    }
  }

  it("TGS without an authenticator subkey (reply under the TGT session key, usage 8)", async () => {
    const l = login({ keytab: `${kdc.dir}/user18.keytab`, principal: "user18" });
    const tgt = await l.tgt();
    const ctx = { config: l.config, now: () => Date.now(), timeoutMs: 3000, ...sockets };
    const cred = await tgsExchange(ctx, { tgt, server: parsePrincipal("zookeeper/localhost", kdc.realm, 3), subkey: false });
    assert.equal(cred.server.components[1], "localhost");
  });

  async function fullExchange(who: string, mutual: boolean, serviceName = "zookeeper", enctypes?: number[]): Promise<void> {
    const l = login({ keytab: `${kdc.dir}/${who}.keytab`, principal: who, enctypes });
    const mech = await gssapiClient({ login: l, serviceName, serviceHost: "localhost", mutual });
    assert.equal(mech.service, `${serviceName}/localhost@${kdc.realm}`);
    const token = mech.initial();
    // The acceptor (what the ZooKeeper server does) with the service keytab.
    const service = parsePrincipal(`${serviceName}/localhost`, kdc.realm, 3);
    const accepted = acceptSecContext(token, loadKeytab(services), service);
    assert.equal(accepted.ticket.client.components.join("/"), who);
    assert.equal(accepted.mutual, mutual);
    assert.deepEqual(accepted.checksum.bindings, new Uint8Array(16));
    assert.equal(accepted.checksum.flags & GssFlags.INTEG, GssFlags.INTEG);
    assert.equal(accepted.checksum.flags & GssFlags.MUTUAL, mutual ? GssFlags.MUTUAL : 0);
    assert.ok(accepted.authenticator.subkey !== undefined && accepted.authenticator.seqNumber !== undefined);
    assert.ok(Math.abs(accepted.authenticator.ctime.getTime() - Date.now()) < 5000);
    const acc = accepted.context;
    if (mutual) {
      // An acceptor subkey (the tokens then carry the AcceptorSubkey flag) and the acceptor's own sequence number.
      const et = acc.sessionKey.enctype;
      const aprep = buildApRep(accepted, { subkey: new KeyBlock(et, enctype(et).randomKey()), seqNumber: 12345 });
      assert.equal(mech.step(aprep)?.length, 0);
    }
    // The server's offer: no security layer (01), max buffer 65536; integrity-only wrap.
    const answer = mech.step(wrap(acc, Uint8Array.of(0x01, 0x01, 0x00, 0x00)));
    assert.ok(answer !== null);
    const opened = unwrap(acc, answer);
    assert.equal(opened.sealed, false);
    assert.equal(hex(opened.message.subarray(0, 4)), "01000000");
    assert.equal(new TextDecoder().decode(opened.message.subarray(4)), `${who}@${kdc.realm}`);
    assert.equal(mech.complete, false);
    assert.equal(mech.step(new Uint8Array(0)), null);
    assert.equal(mech.complete, true);
  }

  for (const [n] of ENCTYPES) {
    it(`the whole SASL GSSAPI exchange with mutual authentication (${n}): AP-REQ accepted with the service keytab, AP-REP verified, offer unwrapped, answer wrapped`, async () => {
      await fullExchange(`pre${n}`, true, `zk${n}`, [n]);
    });
  }

  it("the whole exchange without mutual authentication (as the Java client does)", async () => {
    await fullExchange("user17", false);
    await fullExchange("user20", false, "zk20", [20]);
  });

  it("a forged AP-REP (not under the session key) fails mutual authentication", async () => {
    const l = login({ keytab: `${kdc.dir}/user18.keytab`, principal: "user18" });
    const mech = await gssapiClient({ login: l, serviceHost: "localhost" });
    mech.initial();
    // Another ticket's context: a valid-looking AP-REP under the wrong key.
    const other = await gssapiClient({ login: login({ keytab: `${kdc.dir}/user17.keytab`, principal: "user17" }), serviceHost: "localhost" });
    const accepted = acceptSecContext(other.initial(), loadKeytab(services), parsePrincipal("zookeeper/localhost", kdc.realm, 3));
    assert.throws(() => mech.step(buildApRep(accepted)), (e: Error) => e.name === "SaslError" && /AP-REP|decrypt/.test(e.message));
    assert.throws(() => mech.step(new Uint8Array(0)), /after the exchange failed/);
  });

  it("a password with the salt from ETYPE-INFO2 (pre-authentication required)", async () => {
    const ctx = { config: loadKrb5Conf(kdc.krb5Conf), now: () => Date.now(), timeoutMs: 3000, ...sockets };
    const tgt = await asExchange(ctx, { client: parsePrincipal("bob", kdc.realm), credentials: { password: "bob-password" } });
    assert.equal(tgt.client.components[0], "bob");
    await rejects(asExchange(ctx, { client: parsePrincipal("bob", kdc.realm), credentials: { password: "wrong" } }), KerberosErrorReason.BadKey, /pre-authentication of bob@ZKTS\.TEST failed \(KDC_ERR_PREAUTH_FAILED \(24\)\)/);
  });

  it("a kinit ccache: the TGT from the file, the service ticket from the KDC", async () => {
    const cc = kdc.kinit("user20", `${kdc.dir}/user20.keytab`, "user20.ccache");
    const l = login({ ccache: cc });
    assert.equal(l.principal.components[0], "user20");
    const svc = await l.serviceTicket("zk20", "localhost");
    assert.equal(svc.ticket.encPart.etype, 20);
    // KRB5CCNAME as the default.
    const l2 = new KerberosLogin({ krb5Config: kdc.krb5Conf, env: { KRB5CCNAME: `FILE:${cc}` }, ...sockets });
    assert.equal(l2.principal.components[0], "user20");
    // An expired ccache says to run kinit.
    const l3 = login({ ccache: cc, now: () => Date.now() + 30 * 86400_000 });
    await rejects(l3.serviceTicket("zookeeper", "localhost"), KerberosErrorReason.Expired, /expired at .*; run kinit/);
  });

  it("a renewable kinit ccache (-l 5m -r 10m): renewed past 80% of its life on keepRenewed's timer (wall time stepped), kept in memory (the file untouched), a later kinit in the file wins, past renew-till 'run kinit'; close() stops the timer", async () => {
    kdc.addPrincipal("renewer", { requiresPreauth: true });
    const keytab = kdc.ktadd("renewer", "renewer.keytab");
    const cc = kdc.kinit("renewer", keytab, "renewer.ccache", { life: "5m", renewable: "10m" });
    const file = readFileSync(cc);
    const tgtIn = (path: string): Credential => loadCcache(path).credentials.find((c) => c.server.components[0] === "krbtgt")!;
    const first = tgtIn(cc);
    const renewalsAtKdc = (): number => readFileSync(join(kdc.dir, "kdc.log"), "utf8").split("\n").filter((l) => l.includes("TGS_REQ") && l.includes("ISSUE") && l.includes(`renewer@${kdc.realm} for krbtgt/`)).length;
    let offset = 0;
    const clock = new ManualClock();
    const renewals: Array<[KerberosCredential, KerberosCredential]> = [];
    // The manual clock runs the KDC attempts' timeouts too: longer than any advance below, so none fires while the real KDC answers.
    const l = login({ ccache: cc, now: () => Date.now() + offset, clock, timeoutMs: 3_600_000, keepRenewed: true, onRenew: (before, after) => void renewals.push([before, after]) });
    const iso = (ms: number): string => new Date(ms).toISOString();
    // Fresh: the file's TGT, no KDC request; the timer is set for 80% of its life (240 s).
    assert.equal((await l.tgt()).endTime, first.endTime * 1000);
    assert.equal(renewalsAtKdc(), 0);
    await clock.advance(230_000);
    assert.equal(renewals.length, 0, "renewed before 80% of its life");
    // The wall clock 250 s on (within the KDC's 5 min skew): the timer's renewal, a TGS-REQ for krbtgt with the renew option.
    offset = 250_000;
    await clock.advance(20_000);
    await until("the timer's renewal", () => renewals.length === 1, 10_000, 20);
    const [before, after] = renewals[0]!;
    process.stderr.write(`[kerberos-kdc] renewed on the timer: ${iso(before.startTime)} to ${iso(before.endTime)} → ${iso(after.startTime)} to ${iso(after.endTime)}, renewable until ${iso(after.renewTill!)}\n`);
    assert.equal(renewalsAtKdc(), 1);
    assert.equal(before.endTime, first.endTime * 1000);
    assert.equal(after.renewTill, first.renewTill * 1000, "renew-till kept");
    assert.ok(after.endTime >= before.endTime && after.endTime - after.startTime <= 300_000, `${iso(after.startTime)} to ${iso(after.endTime)}`);
    assert.ok((after.flags & TicketFlags.RENEWABLE) !== 0, "the renewed TGT is renewable still");
    // Kept in memory: the next login uses it (the clock back right: it is fresh), no KDC request; the file as kinit wrote it.
    offset = 0;
    assert.equal(await l.tgt(), after);
    assert.equal(renewalsAtKdc(), 1);
    assert.deepEqual(new Uint8Array(readFileSync(cc)), new Uint8Array(file), "the ccache file was written");
    const svc = await l.serviceTicket("zookeeper", "localhost");
    assert.ok(svc.endTime <= after.endTime);
    // The user's kinit: the file's TGT ends later than the one renewed here, and wins.
    kdc.kinit("renewer", keytab, "renewer.ccache", { life: "8m", renewable: "10m" });
    const second = tgtIn(cc);
    assert.ok(second.endTime * 1000 > after.endTime, "the new kinit's TGT does not end later");
    assert.equal((await l.tgt()).endTime, second.endTime * 1000);
    // Past its renew-till (and its end): no KDC request, the expired error.
    offset = (second.renewTill - second.startTime) * 1000 + 60_000;
    await rejects(l.tgt(), KerberosErrorReason.Expired, /expired at .*; run kinit/);
    assert.equal(renewalsAtKdc(), 1);
    // close(): no timer fires any more.
    offset = 0;
    await l.tgt();
    l.close();
    offset = 7 * 60_000;
    await clock.advance(8 * 60_000);
    assert.equal(renewals.length, 1);
    assert.equal(renewalsAtKdc(), 1);
  });

  it("UDP by default (the request is under udp_preference_limit)", async () => {
    const c = counters();
    const l = login({ keytab: `${kdc.dir}/user18.keytab`, principal: "user18", dial: c.dial, udp: c.udp });
    await l.serviceTicket("zookeeper", "localhost");
    assert.ok(c.udpCount >= 2);
    assert.equal(c.tcp, 0);
  });

  it("udp_preference_limit = 1: TCP only, through the injected Dialer", async () => {
    const c = counters();
    const conf = kdc.writeKrb5Conf("krb5-tcp.conf", { udp_preference_limit: "1" });
    const l = new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user17.keytab`, principal: "user17", dial: c.dial, udp: c.udp, timeoutMs: 3000 });
    await l.serviceTicket("zookeeper", "localhost");
    assert.equal(c.udpCount, 0);
    assert.ok(c.tcp >= 2);
  });

  it("KRB_ERR_RESPONSE_TOO_BIG over UDP: the same KDC again over TCP", async () => {
    let tcp = 0;
    const tooBig: UdpExchange = async () =>
      encodeKrbError({
        ctime: undefined,
        cusec: undefined,
        stime: new Date(),
        susec: 0,
        errorCode: 52,
        crealm: undefined,
        cname: undefined,
        realm: kdc.realm,
        sname: { nameType: 2, components: ["krbtgt", kdc.realm] },
        eText: undefined,
        eData: undefined,
      });
    const l = login({ keytab: `${kdc.dir}/user19.keytab`, principal: "user19", udp: tooBig, dial: (t, h, o) => (tcp++, dialSocket(t, h, o)) });
    await l.serviceTicket("zookeeper", "localhost");
    assert.ok(tcp >= 2);
  });

  it("a dead first KDC, then a good one; and a KDC serving TCP only (UDP refused, TCP answers)", async () => {
    const dead = await freePort();
    const conf = kdc.writeKrb5Conf("krb5-two.conf", {}, [`127.0.0.1:${dead}`, `127.0.0.1:${kdc.port}`]);
    const l = new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 2000, ...sockets });
    await l.serviceTicket("zookeeper", "localhost");
    // A second KDC of the realm whose UDP port is elsewhere: UDP to its kdc address is refused.
    const udpElsewhere = await freePort();
    const tcpOnly = await startKdc({ udpPort: udpElsewhere });
    try {
      tcpOnly.addPrincipal("carol", { enctypes: ["aes256-cts-hmac-sha1-96"] });
      tcpOnly.ktadd("carol", "carol.keytab");
      tcpOnly.addPrincipal("zookeeper/localhost");
      const c = counters();
      const l2 = new KerberosLogin({ krb5Config: tcpOnly.krb5Conf, keytab: `${tcpOnly.dir}/carol.keytab`, principal: "carol", dial: c.dial, udp: c.udp, timeoutMs: 1500 });
      const svc = await l2.serviceTicket("zookeeper", "localhost");
      assert.equal(svc.client.components[0], "carol");
      assert.ok(c.udpCount >= 1 && c.tcp >= 2, `udp ${c.udpCount}, tcp ${c.tcp}`);
    } finally {
      await tcpOnly.destroy();
    }
  }, 60_000);

  /** MIT kinit with a keytab and another krb5.conf of the realm (asynchronously: a fake KDC in this process must answer it); rejects if it fails. */
  const kinit = (principal: string, keytab: string, conf: string): Promise<unknown> =>
    execFileAsync("kinit", ["-k", "-t", join(kdc.dir, keytab), "-c", `MEMORY:${principal}`, principal], { env: { ...kdc.env, KRB5_CONFIG: conf }, timeout: 20_000 });

  it("KDC_ERR_SVC_UNAVAILABLE from the first KDC (UDP, then TCP): the next KDC serves, as MIT kinit does with the same krb5.conf", async () => {
    const busy = await startErrorKdc(kdc.realm, 29);
    try {
      const conf = kdc.writeKrb5Conf("krb5-busy.conf", {}, [`127.0.0.1:${busy.port}`, `127.0.0.1:${kdc.port}`]);
      const svc = await new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 2000, ...sockets }).serviceTicket("zookeeper", "localhost");
      assert.equal(svc.client.components[0], "user18");
      assert.ok(busy.requests() >= 2, `the busy KDC got ${busy.requests()} requests`); // the AS-REQ and the TGS-REQ each asked it first
      const before = busy.requests();
      await kinit("user18", "user18.keytab", conf);
      assert.ok(busy.requests() > before, "kinit did not ask the busy KDC first");
      const tcpOnly = kdc.writeKrb5Conf("krb5-busy-tcp.conf", {}, [`tcp/127.0.0.1:${busy.port}`, `127.0.0.1:${kdc.port}`]);
      await new KerberosLogin({ krb5Config: tcpOnly, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 2000, ...sockets }).tgt();
      // Only the busy KDC: unreachable, naming the error.
      const alone = kdc.writeKrb5Conf("krb5-busy-alone.conf", {}, [`127.0.0.1:${busy.port}`]);
      await rejects(new KerberosLogin({ krb5Config: alone, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 2000, ...sockets }).tgt(), KerberosErrorReason.KdcUnreachable, new RegExp(`127\\.0\\.0\\.1:${busy.port} udp: KDC_ERR_SVC_UNAVAILABLE`));
    } finally {
      busy.close();
    }
  }, 30_000);

  it("KDC_ERR_PREAUTH_FAILED from a replica: asked again of primary_kdc (master_kdc too), as MIT kinit does", async () => {
    // The replica on another loopback address: MIT tells the primary by its address, not its port.
    const replica = await startErrorKdc(kdc.realm, 24, { host: "127.0.0.2" });
    try {
      for (const tag of ["primary_kdc", "master_kdc"]) {
        const conf = kdc.writeKrb5Conf(`krb5-${tag}.conf`, {}, [`127.0.0.2:${replica.port}`, `127.0.0.1:${kdc.port}`], { [tag]: `127.0.0.1:${kdc.port}` });
        const before = replica.requests();
        const tgt = await new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/pre18.keytab`, principal: "pre18", timeoutMs: 2000, ...sockets }).tgt();
        assert.equal(tgt.client.components[0], "pre18");
        assert.ok(replica.requests() > before, `${tag}: the replica was not asked first`);
        const k = replica.requests();
        await kinit("pre18", "pre18.keytab", conf);
        assert.ok(replica.requests() > k, `kinit (${tag}) did not ask the replica first`);
      }
      // Without a primary_kdc the replica's refusal stands.
      const none = kdc.writeKrb5Conf("krb5-replica.conf", {}, [`127.0.0.2:${replica.port}`, `127.0.0.1:${kdc.port}`]);
      await rejects(new KerberosLogin({ krb5Config: none, keytab: `${kdc.dir}/pre18.keytab`, principal: "pre18", timeoutMs: 2000, ...sockets }).tgt(), KerberosErrorReason.BadKey, /KDC_ERR_PREAUTH_FAILED \(24\)/);
      // The primary down: the replica's refusal is the error, not "unreachable".
      const down = kdc.writeKrb5Conf("krb5-primary-down.conf", {}, [`127.0.0.2:${replica.port}`, `127.0.0.1:${kdc.port}`], { primary_kdc: `127.0.0.1:${await freePort()}` });
      await rejects(new KerberosLogin({ krb5Config: down, keytab: `${kdc.dir}/pre18.keytab`, principal: "pre18", timeoutMs: 2000, ...sockets }).tgt(), KerberosErrorReason.BadKey, /KDC_ERR_PREAUTH_FAILED \(24\)/);
    } finally {
      replica.close();
    }
  }, 30_000);

  it("KDC discovery by SRV records (_kerberos._udp/_tcp.REALM, injected resolver) when krb5.conf lists no kdc", async () => {
    const asked: string[] = [];
    const resolveSrv: SrvResolver = async (name) => {
      asked.push(name);
      if (name === `_kerberos._udp.${kdc.realm}`) return [{ name: "127.0.0.1", port: kdc.port, priority: 10, weight: 0 }];
      if (name === `_kerberos._tcp.${kdc.realm}`) return [{ name: "127.0.0.1", port: kdc.port, priority: 20, weight: 0 }];
      throw Object.assign(new Error(`no ${name}`), { code: "ENOTFOUND" });
    };
    const conf = kdc.writeKrb5Conf("krb5-srv.conf", { dns_lookup_kdc: "true" }, []);
    const c = counters();
    const svc = await new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 2000, resolveSrv, dial: c.dial, udp: c.udp }).serviceTicket("zookeeper", "localhost");
    assert.equal(svc.client.components[0], "user18");
    assert.deepEqual([...new Set(asked)], [`_kerberos._udp.${kdc.realm}`, `_kerberos._tcp.${kdc.realm}`]);
    assert.ok(c.udpCount >= 2 && c.tcp === 0, `udp ${c.udpCount}, tcp ${c.tcp}`); // the _udp record, priority 10, first
    // No record: a config error naming the names asked; dns_lookup_kdc = false: no lookup at all.
    await rejects(new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", resolveSrv: async () => [], ...sockets }).tgt(), KerberosErrorReason.Config, /no kdc for realm ZKTS\.TEST .*no SRV record: _kerberos\._udp\.ZKTS\.TEST, _kerberos\._tcp\.ZKTS\.TEST/);
    const off = kdc.writeKrb5Conf("krb5-srv-off.conf", {}, []);
    const n = asked.length;
    await rejects(new KerberosLogin({ krb5Config: off, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", resolveSrv, ...sockets }).tgt(), KerberosErrorReason.Config, /no kdc for realm ZKTS\.TEST/);
    assert.equal(asked.length, n);
  }, 30_000);

  it("a stale keytab (old key version): the errors name the key version", async () => {
    const e1 = await rejects(login({ keytab: `${kdc.dir}/stale-old.keytab`, principal: "stale" }).tgt(), KerberosErrorReason.BadKey, /stale@ZKTS\.TEST.*key version/);
    const kt = loadKeytab(`${kdc.dir}/stale-old.keytab`);
    for (const e of kt.entries) assert.ok(!e1.message.includes(hex(e.key.key)) && !String(e1.stack).includes(hex(e.key.key)));
    await rejects(login({ keytab: `${kdc.dir}/stalepa-old.keytab`, principal: "stalepa" }).tgt(), KerberosErrorReason.BadKey, /pre-authentication of stalepa@ZKTS\.TEST failed \(KDC_ERR_PREAUTH_FAILED \(24\)\).*stale keytab/);
    // The current keytab works.
    await login({ keytab: `${kdc.dir}/stalepa-new.keytab`, principal: "stalepa" }).tgt();
  });

  it("an unknown client principal: KDC_ERR_C_PRINCIPAL_UNKNOWN naming it", async () => {
    const ctx = { config: loadKrb5Conf(kdc.krb5Conf), now: () => Date.now(), timeoutMs: 3000, ...sockets };
    const e = await rejects(asExchange(ctx, { client: parsePrincipal("nobody", kdc.realm), credentials: { password: "x" } }), KerberosErrorReason.ClientUnknown, /client principal nobody@ZKTS\.TEST .*KDC_ERR_C_PRINCIPAL_UNKNOWN/);
    assert.equal(e.code, 6);
  });

  it("an unknown service principal: KDC_ERR_S_PRINCIPAL_UNKNOWN naming zookeeper/nohost@REALM", async () => {
    const l = login({ keytab: `${kdc.dir}/user18.keytab`, principal: "user18" });
    const e = await rejects(l.serviceTicket("zookeeper", "nohost"), KerberosErrorReason.ServiceUnknown, /service principal zookeeper\/nohost@ZKTS\.TEST .*KDC_ERR_S_PRINCIPAL_UNKNOWN/);
    assert.equal(e.code, 7);
  });

  it("clock skew: KRB_AP_ERR_SKEW with the KDC's time and ours", async () => {
    const skewed = () => Date.now() - 3600_000;
    const e = await rejects(login({ keytab: `${kdc.dir}/pre18.keytab`, principal: "pre18", now: skewed }).tgt(), KerberosErrorReason.ClockSkew, /KRB_AP_ERR_SKEW.*the KDC's time is \d{4}-\d\d-\d\dT.*ours was \d{4}-\d\d-\d\dT.*difference of 3[56]\d\d s/);
    assert.equal(e.code, 37);
    // Without pre-authentication the AS succeeds and the TGS authenticator is refused.
    await rejects(login({ keytab: `${kdc.dir}/user18.keytab`, principal: "user18", now: skewed }).serviceTicket("zookeeper", "localhost"), KerberosErrorReason.ClockSkew, /the KDC's time is .* ours was /);
  });

  it("the KDC down: refused on every port, named, well within the timeout", async () => {
    const port = await freePort();
    const conf = kdc.writeKrb5Conf("krb5-down.conf", {}, [`127.0.0.1:${port}`]);
    const t0 = Date.now();
    await rejects(new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 2000, ...sockets }).tgt(), KerberosErrorReason.KdcUnreachable, new RegExp(`no KDC of realm ZKTS\\.TEST answered: 127\\.0\\.0\\.1:${port} udp: .*; 127\\.0\\.0\\.1:${port} tcp: `));
    assert.ok(Date.now() - t0 < 4500, `took ${Date.now() - t0} ms`);
  });

  it("a KDC that never answers: timed out per attempt, within the timeouts", async () => {
    const port = await freePort();
    const held: Array<{ destroy(): void }> = [];
    const server: Server = createServer((s) => held.push(s));
    const udp = createSocket("udp4");
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
    await new Promise<void>((r) => udp.bind(port, "127.0.0.1", () => r()));
    try {
      const conf = kdc.writeKrb5Conf("krb5-silent.conf", {}, [`127.0.0.1:${port}`]);
      const t0 = Date.now();
      await rejects(new KerberosLogin({ krb5Config: conf, keytab: `${kdc.dir}/user18.keytab`, principal: "user18", timeoutMs: 500, ...sockets }).tgt(), KerberosErrorReason.KdcUnreachable, /udp: no answer within 500 ms; .* tcp: no answer within 500 ms/);
      const took = Date.now() - t0;
      assert.ok(took >= 900 && took < 3000, `took ${took} ms`);
    } finally {
      for (const s of held) s.destroy();
      server.close();
      udp.close();
    }
  });
});
