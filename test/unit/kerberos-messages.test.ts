// The Kerberos messages of the exchanges (RFC 4120 §5), against DER written out by hand from the RFC's
// ASN.1 (with a tiny TLV helper independent of der.ts), and round trips through the encoders and
// decoders; the real AS-REP material of fixtures/kerberos (alice's ccache tickets decrypt with the
// exported service keys). Then krb5.conf, the KDC's TCP framing through a fake Dialer, and random
// bytes into every decoder: only DerError / KerberosError, never a TypeError.
import { readFileSync } from "node:fs";
import process from "node:process";
import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "../support/bdd.ts";
import { hex, unhex } from "../support/bytes.ts";
import type { Dialer, LinkHandlers } from "../../src/client/transport/transport.ts";
import { loadCcache } from "../../src/kerberos/ccache.ts";
import { enctype } from "../../src/kerberos/crypto.ts";
import { DerError, KerberosError, KerberosErrorReason } from "../../src/kerberos/errors.ts";
import { asExchange, kdcError, sendToKdcs, tcpExchange, type KerberosCredential } from "../../src/kerberos/kdc.ts";
import { hierarchicalPath, realmPath, serviceTicketAcross } from "../../src/kerberos/crossrealm.ts";
import { capathOf, kdcTimingOf, kdcsOf, loadKrb5Conf, parseDuration, parseKdcAddress, parseKrb5Conf, realmOfHost } from "../../src/kerberos/krb5conf.ts";
import {
  decodeApRep,
  decodeApReq,
  decodeAuthenticator,
  decodeEncApRepPart,
  decodeEncKdcRepPart,
  decodeEtypeInfo2,
  decodeKdcRep,
  decodeKdcReply,
  decodeKdcReq,
  decodeKrbError,
  decodeMethodData,
  decodePaData,
  decodePaEncTsEnc,
  decodeTicket,
  encodeApReq,
  encodeAuthenticator,
  encodeKdcReq,
  encodePaEncTsEnc,
  KeyUsage,
  type KrbErrorMessage,
} from "../../src/kerberos/messages.ts";
import { KeyBlock, principalToString } from "../../src/kerberos/types.ts";
import {
  encodeApRep,
  encodeEncApRepPart,
  encodeEncKdcRepPart,
  encodeEtypeInfo2,
  encodeKdcRep,
  encodeKrbError,
  encodeMethodData,
  encodeTicket,
} from "../support/secure/kerberos-peer.ts";
import { systemClock } from "../../src/client/clock.ts";
import { decodeDer } from "../../src/kerberos/der.ts";

const RUNS = Number(process.env.KERBEROS_FUZZ_RUNS ?? 3000);
const fixture = (name: string): URL => new URL(`../../fixtures/kerberos/${name}`, (import.meta as { url: string }).url);
const enc = new TextEncoder();

/** A hand-written TLV: identifier byte, definite length (short or long form), content. */
function t(id: number, ...parts: Uint8Array[]): Uint8Array {
  const content = parts.reduce((a, p) => {
    const o = new Uint8Array(a.length + p.length);
    o.set(a);
    o.set(p, a.length);
    return o;
  }, new Uint8Array(0));
  const n = content.length;
  const len = n < 128 ? [n] : n < 256 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Uint8Array.from([id, ...len, ...content]);
}
/** A non-negative INTEGER: big-endian bytes, a leading 00 when the top bit is set. */
function int(v: number): Uint8Array {
  const b: number[] = [];
  for (let x = v; ; x = Math.floor(x / 256)) {
    b.unshift(x % 256);
    if (x < 256) break;
  }
  if (b[0] & 0x80) b.unshift(0);
  return t(0x02, Uint8Array.from(b));
}
const str = (s: string): Uint8Array => t(0x1b, enc.encode(s)); // GeneralString
const oct = (b: Uint8Array): Uint8Array => t(0x04, b);
const time = (s: string): Uint8Array => t(0x18, enc.encode(s));
const ctx = (n: number, v: Uint8Array): Uint8Array => t(0xa0 | n, v);
const seq = (...p: Uint8Array[]): Uint8Array => t(0x30, ...p);
const app = (n: number, v: Uint8Array): Uint8Array => t(0x60 | n, v);
const name = (type: number, ...c: string[]): Uint8Array => seq(ctx(0, int(type)), ctx(1, seq(...c.map(str))));

function typedFailure(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (e instanceof DerError || e instanceof KerberosError) return;
    throw new Error(`expected DerError or KerberosError, got ${String(e)}`);
  }
}

describe("Kerberos messages: DER written by hand from RFC 4120 §5", () => {
  it("PA-DATA and METHOD-DATA with PA-ETYPE-INFO2 (salt, s2kparams), as a KDC_ERR_PREAUTH_REQUIRED e-data", () => {
    const info2 = seq(seq(ctx(0, int(18)), ctx(1, str("ZKTS.TESTalice")), ctx(2, oct(unhex("00001000")))), seq(ctx(0, int(17)), ctx(1, str("ZKTS.TESTalice"))));
    const methods = seq(seq(ctx(1, int(19)), ctx(2, oct(info2))), seq(ctx(1, int(2)), ctx(2, oct(new Uint8Array(0)))), seq(ctx(1, int(133)), ctx(2, oct(enc.encode("MIT")))));
    const list = decodeMethodData(methods);
    assert.deepEqual(list.map((p) => p.type), [19, 2, 133]);
    const info = decodeEtypeInfo2(list[0].value);
    assert.deepEqual(info.map((e) => [e.etype, e.salt, e.s2kparams && hex(e.s2kparams)]), [
      [18, "ZKTS.TESTalice", "00001000"],
      [17, "ZKTS.TESTalice", undefined],
    ]);
    assert.equal(hex(encodeEtypeInfo2(info)), hex(info2));
    assert.equal(hex(encodeMethodData(list)), hex(methods));
    assert.equal(decodePaData(decodeDer(seq(ctx(1, int(2)), ctx(2, oct(Uint8Array.of(1, 2)))))).value.length, 2);
  });

  it("KRB-ERROR [APPLICATION 30] with e-data, and the error it becomes", () => {
    const body = seq(
      ctx(0, int(5)),
      ctx(1, int(30)),
      ctx(2, time("20261205115500Z")),
      ctx(4, time("20261205120000Z")),
      ctx(5, int(0)),
      ctx(6, int(37)),
      ctx(9, str("ZKTS.TEST")),
      ctx(10, name(2, "krbtgt", "ZKTS.TEST")),
      ctx(11, str("Clock skew too great")),
      ctx(12, oct(Uint8Array.of(0x30, 0x00))),
    );
    const der = app(30, body);
    const e = decodeKrbError(der);
    assert.equal(e.errorCode, 37);
    assert.equal(e.stime.toISOString(), "2026-12-05T12:00:00.000Z");
    assert.equal(e.ctime?.toISOString(), "2026-12-05T11:55:00.000Z");
    assert.deepEqual(e.sname.components, ["krbtgt", "ZKTS.TEST"]);
    assert.equal(hex(encodeKrbError(e)), hex(der));
    const r = decodeKdcReply(der);
    assert.equal(r.kind, "error");
    const err = kdcError(e, { client: "alice@ZKTS.TEST", server: "krbtgt/ZKTS.TEST@ZKTS.TEST" });
    assert.equal(err.reason, KerberosErrorReason.ClockSkew);
    assert.match(err.message, /KRB_AP_ERR_SKEW \(37\).*the KDC's time is 2026-12-05T12:00:00Z, ours was 2026-12-05T11:55:00Z, a difference of 300 s/);
    const unknownService = kdcError({ ...e, errorCode: 7, eText: undefined }, { client: "alice@R", server: "zookeeper/nohost@R" });
    assert.equal(unknownService.reason, KerberosErrorReason.ServiceUnknown);
    assert.match(unknownService.message, /zookeeper\/nohost@R .*KDC_ERR_S_PRINCIPAL_UNKNOWN \(7\)/);
    assert.equal(kdcError({ ...e, errorCode: 6 }, { client: "nobody@R", server: "x" }).reason, KerberosErrorReason.ClientUnknown);
    assert.equal(kdcError({ ...e, errorCode: 24 }, { client: "a@R", server: "x" }).reason, KerberosErrorReason.BadKey);
    assert.match(kdcError({ ...e, errorCode: 99, eText: undefined }, { client: "a@R", server: "x" }).message, /KRB-ERROR 99/);
  });

  it("a KDC's e-text reaches a message without control characters and at most 200 characters long", () => {
    const e = decodeKrbError(encodeKrbError({
      ctime: undefined, cusec: undefined, stime: new Date("2026-12-05T12:00:00Z"), susec: 0, errorCode: 6, crealm: undefined, cname: undefined,
      realm: "R", sname: { nameType: 2, components: ["krbtgt", "R"] },
      eText: `CLIENT_NOT_FOUND\n2026-12-05 INFO fake log line \u001b[31mred\u001b[0m\r\u009b2J\u202eevil ${"x".repeat(400)}`,
      eData: undefined,
    }));
    const err = kdcError(e, { client: "nobody@R", server: "krbtgt/R@R" });
    assert.equal(err.reason, KerberosErrorReason.ClientUnknown);
    assert.doesNotMatch(err.message, /[\u0000-\u001f\u007f-\u009f\u202e]/);
    const text = err.message.slice(err.message.indexOf("(KDC_ERR_C_PRINCIPAL_UNKNOWN (6)): ") + "(KDC_ERR_C_PRINCIPAL_UNKNOWN (6)): ".length);
    assert.ok(text.startsWith("CLIENT_NOT_FOUND 2026-12-05 INFO fake log line  [31mred [0m 2J evil xxx"), text);
    assert.equal(Array.from(text).length, 201);
    assert.ok(text.endsWith("x…"));
    // A short e-text stays as it is; a name from a KDC with ESC or a newline is written with escapes.
    assert.match(kdcError({ ...e, eText: "no such principal" }, { client: "a@R", server: "x" }).message, /: no such principal$/);
    assert.equal(principalToString({ nameType: 1, components: ["a\u001b[2Jb", "c\nd"], realm: "R\u0085" }), "a\\x1b[2Jb/c\\nd@R\\x85");
  });

  it("PA-ENC-TS-ENC, encrypted with key usage 1 (PA-ENC-TIMESTAMP)", () => {
    const der = seq(ctx(0, time("20261205120000Z")), ctx(1, t(0x02, unhex("0186a0"))));
    const ts = decodePaEncTsEnc(der);
    assert.equal(ts.usec, 100000);
    assert.equal(hex(encodePaEncTsEnc(ts)), hex(der));
    const e = enctype(18);
    const key = e.randomKey();
    const c = e.encrypt(key, KeyUsage.AS_REQ_PA_ENC_TIMESTAMP, der);
    assert.equal(hex(e.decrypt(key, 1, c)), hex(der));
    assert.throws(() => e.decrypt(key, 3, c), /key usage 3/);
  });

  it("AS-REQ / TGS-REQ: KDC-REQ with its req-body kept verbatim (the TGS checksum covers those bytes)", () => {
    const body = seq(
      ctx(0, t(0x03, unhex("0000000010"))),
      ctx(1, name(1, "alice")),
      ctx(2, str("ZKTS.TEST")),
      ctx(3, name(2, "krbtgt", "ZKTS.TEST")),
      ctx(5, time("20261206120000Z")),
      ctx(7, int(12345)),
      ctx(8, seq(int(18), int(17))),
    );
    const der = app(10, seq(ctx(1, int(5)), ctx(2, int(10)), ctx(4, body)));
    const req = decodeKdcReq(der);
    assert.equal(req.msgType, 10);
    assert.equal(req.body.options, 0x10);
    assert.deepEqual(req.body.etypes, [18, 17]);
    assert.equal(req.body.nonce, 12345);
    assert.equal(hex(req.bodyBytes), hex(body));
    assert.equal(hex(encodeKdcReq(10, [], req.body)), hex(der));
    const tgs = encodeKdcReq(12, [{ type: 1, value: Uint8Array.of(1) }], body);
    const back = decodeKdcReq(tgs);
    assert.equal(back.msgType, 12);
    assert.equal(back.padata[0].type, 1);
    assert.throws(() => decodeKdcReq(app(10, seq(ctx(1, int(4)), ctx(2, int(10)), ctx(4, body)))), /pvno is 4/);
    assert.throws(() => decodeKdcReq(app(10, seq(ctx(1, int(5)), ctx(2, int(12)), ctx(4, body)))), /msg-type is 12/);
  });

  it("AS-REP around a real ticket (fixtures' ccache) and EncASRepPart / EncTGSRepPart", () => {
    const cc = loadCcache(fixture("alice.ccache").pathname);
    const tgt = cc.credentials[0];
    const ticket = decodeTicket(tgt.ticket);
    const encPart = seq(ctx(0, int(18)), ctx(1, int(3)), ctx(2, oct(new Uint8Array(60))));
    const der = app(11, seq(ctx(0, int(5)), ctx(1, int(11)), ctx(3, str("ZKTS.TEST")), ctx(4, name(1, "alice")), ctx(5, tgt.ticket), ctx(6, encPart)));
    const rep = decodeKdcRep(der);
    assert.equal(rep.crealm, "ZKTS.TEST");
    assert.equal(hex(rep.ticket.raw), hex(tgt.ticket));
    assert.equal(rep.encPart.kvno, 3);
    assert.equal(hex(encodeKdcRep({ ...rep, ticket })), hex(der));
    const part = {
      key: tgt.key,
      nonce: 77,
      keyExpiration: undefined,
      flags: tgt.flags,
      authTime: new Date(tgt.authTime * 1000),
      startTime: new Date(tgt.startTime * 1000),
      endTime: new Date(tgt.endTime * 1000),
      renewTill: new Date(tgt.renewTill * 1000),
      srealm: "ZKTS.TEST",
      sname: { nameType: 2, components: ["krbtgt", "ZKTS.TEST"] },
    };
    for (const tag of [25, 26] as const) {
      const back = decodeEncKdcRepPart(encodeEncKdcRepPart(tag, part));
      assert.equal(back.tag, tag);
      assert.equal(back.nonce, 77);
      assert.equal(hex(back.key.key), hex(tgt.key.key));
      assert.equal(back.endTime.getTime(), tgt.endTime * 1000);
    }
    // The last-req field by hand: SEQUENCE OF SEQUENCE { lr-type [0], lr-value [1] }.
    const hand = app(25, seq(ctx(0, seq(ctx(0, int(18)), ctx(1, oct(new Uint8Array(32))))), ctx(1, seq(seq(ctx(0, int(0)), ctx(1, time("20261205120000Z"))))), ctx(2, int(9)), ctx(4, t(0x03, unhex("0000e00000"))), ctx(5, time("20261205120000Z")), ctx(7, time("20261206120000Z")), ctx(9, str("R")), ctx(10, name(2, "krbtgt", "R"))));
    const p = decodeEncKdcRepPart(hand);
    assert.equal(p.flags, 0x00e00000);
    assert.equal(p.startTime, undefined);
  });

  it("Authenticator, AP-REQ, AP-REP and EncAPRepPart", () => {
    const cc = loadCcache(fixture("alice.ccache").pathname);
    const auth = {
      crealm: "ZKTS.TEST",
      cname: { nameType: 1, components: ["alice"] },
      cksum: { type: 0x8003, value: new Uint8Array(24) },
      cusec: 999999,
      ctime: new Date("2026-12-05T12:00:00Z"),
      subkey: new KeyBlock(18, new Uint8Array(32).fill(7)),
      seqNumber: 0xfffffffe,
    };
    const a = encodeAuthenticator(auth);
    assert.equal(a[0], 0x62); // [APPLICATION 2]
    const back = decodeAuthenticator(a);
    assert.equal(back.seqNumber, 0xfffffffe);
    assert.equal(back.cksum?.type, 0x8003);
    assert.equal(hex(back.subkey?.key ?? new Uint8Array(0)), hex(auth.subkey.key));
    const apReq = encodeApReq(0x20000000, cc.credentials[1].ticket, { etype: 18, kvno: undefined, cipher: Uint8Array.of(1, 2, 3) });
    assert.equal(apReq[0], 0x6e); // [APPLICATION 14]
    const r = decodeApReq(apReq);
    assert.equal(r.options, 0x20000000);
    assert.equal(hex(r.ticket.raw), hex(cc.credentials[1].ticket));
    const part = encodeEncApRepPart({ ctime: auth.ctime, cusec: 5, subkey: undefined, seqNumber: 0 });
    assert.equal(part[0], 0x7b); // [APPLICATION 27]
    assert.equal(decodeEncApRepPart(part).seqNumber, 0);
    const rep = encodeApRep({ etype: 17, kvno: undefined, cipher: Uint8Array.of(9) });
    assert.equal(rep[0], 0x6f); // [APPLICATION 15]
    assert.equal(decodeApRep(rep).etype, 17);
    assert.throws(() => decodeAuthenticator(app(2, seq(ctx(0, int(5)), ctx(1, str("R")), ctx(2, name(1, "a")), ctx(4, t(0x02, unhex("0f4240"))), ctx(5, time("20261205120000Z"))))), /outside 0\.\.999999/);
  });

  it("a TGS-REP built like a KDC's decrypts with the subkey under usage 9 only", () => {
    const e = enctype(20);
    const subkey = e.randomKey();
    const part = encodeEncKdcRepPart(26, {
      key: new KeyBlock(20, e.randomKey()),
      nonce: 1,
      keyExpiration: undefined,
      flags: 0,
      authTime: new Date(0),
      startTime: undefined,
      endTime: new Date(1000),
      renewTill: undefined,
      srealm: "R",
      sname: { nameType: 3, components: ["zookeeper", "localhost"] },
    });
    const c = e.encrypt(subkey, KeyUsage.TGS_REP_ENC_PART_SUBKEY, part);
    assert.equal(decodeEncKdcRepPart(e.decrypt(subkey, 9, c)).sname.components[0], "zookeeper");
    assert.throws(() => e.decrypt(subkey, 8, c));
  });

  it("random and mutated bytes: only DerError (or KerberosError), never a TypeError", () => {
    const cc = loadCcache(fixture("alice.ccache").pathname);
    const seed = cc.credentials[0].ticket;
    const decoders = [decodeKdcReply, decodeKdcRep, decodeKrbError, decodeKdcReq, decodeApReq, decodeApRep, decodeAuthenticator, decodeEncApRepPart, decodeEncKdcRepPart, decodeMethodData, decodeEtypeInfo2, decodePaEncTsEnc];
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        for (const d of decoders) typedFailure(() => d(bytes));
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: seed.length - 1 }), fc.integer({ min: 0, max: 255 }), (at, v) => {
        const m = seed.slice();
        m[at] = v;
        for (const d of decoders) typedFailure(() => d(m));
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });
});

describe("krb5.conf", () => {
  const text = [
    "# a comment",
    "; another",
    "[libdefaults]",
    "  default_realm = EXAMPLE.COM",
    "  udp_preference_limit = 1",
    "  ticket_lifetime = 10h 30m",
    "[realms]",
    "  EXAMPLE.COM = {",
    "    kdc = kdc1.example.com",
    "    kdc = kdc2.example.com:8888",
    "    kdc = [::1]:750",
    "    kdc = tcp/10.0.0.1:88",
    "    admin_server = kdc1.example.com",
    "    auth_to_local = {",
    "      nested = yes",
    "    }",
    "  }",
    "  OTHER.ORG = {",
    '    kdc = "quoted.other.org"',
    "  } *",
    "[domain_realm]",
    "  .example.com = EXAMPLE.COM",
    "  example.com = EXAMPLE.COM",
    "  .dev.example.com = DEV.EXAMPLE.COM",
    "  special.example.com = OTHER.ORG",
    "include /etc/extra.conf",
    "",
  ].join("\n");
  const files: Record<string, string> = { "/etc/extra.conf": "[realms]\n DEV.EXAMPLE.COM = {\n  kdc = dev-kdc\n }\n" };
  const readText = (p: string): string => {
    const f = files[p];
    if (f === undefined) throw Object.assign(new Error("no such file"), { code: "ENOENT" });
    return f;
  };

  it("reads libdefaults, realms with their kdc lists, domain_realm and includes", () => {
    const c = parseKrb5Conf(text, { path: "/x/krb5.conf", readText });
    assert.equal(c.defaultRealm, "EXAMPLE.COM");
    assert.equal(c.udpPreferenceLimit, 1);
    assert.equal(c.ticketLifetimeMs, 10.5 * 3600_000);
    assert.deepEqual(kdcsOf(c, "EXAMPLE.COM"), [
      { host: "kdc1.example.com", port: 88, protocol: undefined },
      { host: "kdc2.example.com", port: 8888, protocol: undefined },
      { host: "::1", port: 750, protocol: undefined },
      { host: "10.0.0.1", port: 88, protocol: "tcp" },
    ]);
    assert.deepEqual(kdcsOf(c, "OTHER.ORG"), [{ host: "quoted.other.org", port: 88, protocol: undefined }]);
    assert.deepEqual(kdcsOf(c, "DEV.EXAMPLE.COM"), [{ host: "dev-kdc", port: 88, protocol: undefined }]);
    assert.deepEqual(c.files, ["/x/krb5.conf", "/etc/extra.conf"]);
    assert.equal(realmOfHost(c, "zk1.example.com"), "EXAMPLE.COM");
    assert.equal(realmOfHost(c, "ZK1.Dev.Example.COM"), "DEV.EXAMPLE.COM");
    assert.equal(realmOfHost(c, "special.example.com"), "OTHER.ORG");
    assert.equal(realmOfHost(c, "example.com"), "EXAMPLE.COM");
    assert.equal(realmOfHost(c, "elsewhere.net"), undefined);
    assert.throws(() => kdcsOf(c, "NOPE.ORG"), (e: Error) => e instanceof KerberosError && /no kdc for realm NOPE\.ORG/.test(e.message));
  });

  it("refuses malformed files naming the file and line", () => {
    const bad = (s: string, re: RegExp): void => {
      assert.throws(() => parseKrb5Conf(s, { path: "k.conf", readText }), (e: Error) => e instanceof KerberosError && e.reason === "config" && re.test(e.message));
    };
    bad("[realms]\n  R = {\n kdc = x\n", /ends inside/);
    bad("}\n", /without an open/);
    bad("kdc = x\n", /outside any \[section\] at k\.conf line 1/);
    bad("[libdefaults]\n what is this\n", /cannot read .* at k\.conf line 2/);
    bad("[libdefaults]\n udp_preference_limit = many\n", /not a number/);
    const timing = (t: string) => kdcTimingOf(parseKrb5Conf(t, { path: "k.conf", readText }), "R");
    assert.throws(() => timing("[libdefaults]\n kdc_timeout = soon\n"), /kdc_timeout = "soon" is not a positive number/);
    assert.throws(() => timing("[libdefaults]\n kdc_timeout = 0\n"), /kdc_timeout/);
    assert.throws(() => timing("[libdefaults]\n max_retries = -1\n"), /max_retries = "-1" is not a positive number/);
    bad("include /missing.conf\n", /cannot read \/missing\.conf .*ENOENT/);
    bad("include relative.conf\n", /absolute path/);
    assert.throws(() => parseKdcAddress("host:99999"), /bad port/);
    assert.throws(() => parseKdcAddress("[::1"), /unterminated/);
    assert.equal(parseDuration("1d", "x"), 86400_000);
    assert.equal(parseDuration("36000", "x"), 36000_000);
    assert.equal(parseDuration("2:30", "x"), 9000_000);
    assert.throws(() => parseDuration("soon", "x"), /not a duration/);
  });

  it("kdc_timeout and max_retries as the Java client reads them: the realm's first, then [libdefaults]; ms, or s with a suffix", () => {
    const conf = parseKrb5Conf(
      ["[libdefaults]", "  kdc_timeout = 10s", "  max_retries = 2", "[realms]", "  SLOW.ORG = {", "    kdc = k", "    kdc_timeout = 45000", "  }", "  FAST.ORG = {", "    max_retries = 1", "  }", ""].join("\n"),
      { readText },
    );
    assert.deepEqual(kdcTimingOf(conf, "SLOW.ORG"), { timeoutMs: 45_000, tries: 2 });
    assert.deepEqual(kdcTimingOf(conf, "FAST.ORG"), { timeoutMs: 10_000, tries: 1 });
    assert.deepEqual(kdcTimingOf(conf, "OTHER.ORG"), { timeoutMs: 10_000, tries: 2 });
    assert.deepEqual(kdcTimingOf(parseKrb5Conf(text, { readText }), "EXAMPLE.COM"), {}); // not set: the client's own bound, one try
  });

  it("the file: an argument, else $KRB5_CONFIG (first readable), else /etc/krb5.conf", () => {
    const seen: string[] = [];
    const rt = (p: string): string => {
      seen.push(p);
      if (p === "/b.conf") return "[libdefaults]\n default_realm = B\n";
      throw Object.assign(new Error("x"), { code: "ENOENT" });
    };
    assert.equal(loadKrb5Conf(undefined, { KRB5_CONFIG: "/a.conf:/b.conf" }, rt).defaultRealm, "B");
    assert.deepEqual(seen, ["/a.conf", "/b.conf"]);
    assert.throws(() => loadKrb5Conf(undefined, {}, rt), /cannot read \/etc\/krb5\.conf \(the default; set KRB5_CONFIG or krb5Config\)/);
    assert.throws(() => loadKrb5Conf("/given.conf", { KRB5_CONFIG: "/b.conf" }, rt), /cannot read \/given\.conf/);
    const real = loadKrb5Conf(undefined, { KRB5_CONFIG: fixture("README.md").pathname }, (p) => readFileSync(p, "utf8").replace(/[^\n]*/g, "# x"));
    assert.equal(real.defaultRealm, undefined);
  });

  it("cross-realm paths: [capaths] (\".\" direct, intermediates in order, several per line), else the hierarchy", () => {
    const c = parseKrb5Conf([
      "[capaths]",
      "  USERS.CORP = {",
      "    CLUSTER.LAB = .",
      "    HADOOP.LAB = HUB.CORP",
      "    HADOOP.LAB = GATE.LAB",
      "    FAR.NET = ONE.NET TWO.NET",
      "  }",
      "",
    ].join("\n"));
    assert.deepEqual(capathOf(c, "USERS.CORP", "CLUSTER.LAB"), []);
    assert.deepEqual(capathOf(c, "USERS.CORP", "HADOOP.LAB"), ["HUB.CORP", "GATE.LAB"]);
    assert.deepEqual(capathOf(c, "USERS.CORP", "FAR.NET"), ["ONE.NET", "TWO.NET"]);
    assert.equal(capathOf(c, "USERS.CORP", "ELSE.LAB"), undefined);
    assert.equal(capathOf(c, "CLUSTER.LAB", "USERS.CORP"), undefined); // [capaths] is per direction
    assert.deepEqual(realmPath(c, "USERS.CORP", "HADOOP.LAB"), { realms: ["USERS.CORP", "HUB.CORP", "GATE.LAB", "HADOOP.LAB"], from: "capaths" });
    assert.deepEqual(realmPath(c, "USERS.CORP", "CLUSTER.LAB"), { realms: ["USERS.CORP", "CLUSTER.LAB"], from: "capaths" });
    // RFC 4120 §1.2: up to the common suffix, then down.
    assert.deepEqual(hierarchicalPath("A.EXAMPLE.COM", "B.EXAMPLE.COM"), ["A.EXAMPLE.COM", "EXAMPLE.COM", "B.EXAMPLE.COM"]);
    assert.deepEqual(hierarchicalPath("X.A.EXAMPLE.COM", "B.EXAMPLE.COM"), ["X.A.EXAMPLE.COM", "A.EXAMPLE.COM", "EXAMPLE.COM", "B.EXAMPLE.COM"]);
    assert.deepEqual(hierarchicalPath("EXAMPLE.COM", "B.EXAMPLE.COM"), ["EXAMPLE.COM", "B.EXAMPLE.COM"]);
    assert.deepEqual(hierarchicalPath("A.EXAMPLE.COM", "EXAMPLE.COM"), ["A.EXAMPLE.COM", "EXAMPLE.COM"]);
    assert.deepEqual(hierarchicalPath("CORP", "LAB.NET"), ["CORP", "LAB.NET"]);
    assert.deepEqual(realmPath(c, "CLUSTER.LAB", "USERS.CORP"), { realms: ["CLUSTER.LAB", "USERS.CORP"], from: "hierarchy" });
  });
});

describe("the KDC transport (fake Dialer)", () => {
  /** A Dialer whose server answers each framed request with `answer(request)` split into `pieces`. */
  function fakeKdc(answer: (req: Uint8Array) => Uint8Array | "close" | "hang", pieces = 1): Dialer & { dials: number } {
    const d = (async (_t: unknown, h: LinkHandlers) => {
      d.dials++;
      return {
        remote: "fake:88",
        close() {},
        write(bytes: Uint8Array): boolean {
          const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0);
          assert.equal(len, bytes.length - 4);
          const a = answer(bytes.subarray(4));
          if (a === "close") queueMicrotask(() => h.onClose());
          else if (a !== "hang") {
            const step = Math.ceil(a.length / pieces);
            for (let i = 0; i < a.length; i += step) {
              const piece = a.slice(i, i + step);
              queueMicrotask(() => h.onData(piece));
            }
          }
          return true;
        },
      };
    }) as unknown as Dialer & { dials: number };
    d.dials = 0;
    return d;
  }
  const frame = (b: Uint8Array, len = b.length): Uint8Array => {
    const o = new Uint8Array(4 + b.length);
    new DataView(o.buffer).setUint32(0, len);
    o.set(b, 4);
    return o;
  };
  const target = { host: "kdc.example", port: 88 };

  it("frames the request and reassembles a reply that arrives in pieces", async () => {
    const reply = new Uint8Array(1000).fill(0x42);
    const d = fakeKdc(() => frame(reply), 7);
    assert.equal(hex(await tcpExchange(d, target, Uint8Array.of(1, 2, 3), 1000, systemClock)), hex(reply));
  });

  it("refuses the reserved length bit, an oversized claim, an early close, and times out a silent KDC", async () => {
    const fails = async (d: Dialer, re: RegExp, timeout = 1000): Promise<void> => {
      await assert.rejects(tcpExchange(d, target, Uint8Array.of(1), timeout, systemClock), re);
    };
    await fails(fakeKdc(() => frame(Uint8Array.of(1), 0x80000001)), /reserved length bit/);
    await fails(fakeKdc(() => frame(Uint8Array.of(1), 0x7fffffff)), /claims 2147483647 bytes/);
    await fails(fakeKdc(() => "close"), /connection closed before a whole reply/);
    await fails(fakeKdc(() => "hang"), /no answer within 50 ms/, 50);
    const refused: Dialer = async () => {
      throw Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    };
    await fails(refused, /ECONNREFUSED/);
  });

  it("tries each KDC in turn and names every failure", async () => {
    const d = fakeKdc(() => "close");
    await assert.rejects(
      sendToKdcs([{ host: "a", port: 88, protocol: "tcp" }, { host: "b", port: 750, protocol: undefined }], "R", Uint8Array.of(1), { dial: d, udp: async () => Promise.reject(new Error("no answer within 5 ms")), timeoutMs: 200 }),
      (e: Error) => e instanceof KerberosError && e.reason === KerberosErrorReason.KdcUnreachable && /a:88 tcp: connection closed.*; b:750 udp: no answer within 5 ms; b:750 tcp: connection closed/.test(e.message),
    );
    assert.equal(d.dials, 2);
    const ok = fakeKdc(() => frame(Uint8Array.of(7)));
    assert.deepEqual(await sendToKdcs([{ host: "a", port: 88, protocol: undefined }], "R", new Uint8Array(2000), { dial: ok, udp: async () => assert.fail("UDP above the preference limit") }), Uint8Array.of(7));
  });

  it("max_retries: each KDC is asked that many times before the next, except one that says it is not serving", async () => {
    let calls = 0;
    const silent = fakeKdc(() => (calls++, "close"));
    await assert.rejects(
      sendToKdcs([{ host: "a", port: 88, protocol: "tcp" }, { host: "b", port: 88, protocol: "tcp" }], "R", Uint8Array.of(1), { dial: silent, udp: null, timeoutMs: 200, tries: 3 }),
      (e: Error) => e instanceof KerberosError && (e.message.match(/a:88 tcp/g) ?? []).length === 3 && (e.message.match(/b:88 tcp/g) ?? []).length === 3,
    );
    assert.equal(calls, 6);
    // The second try of the same KDC answers: no other KDC asked.
    let asked = 0;
    const second = fakeKdc(() => (++asked === 2 ? frame(Uint8Array.of(5)) : "close"));
    assert.deepEqual(await sendToKdcs([{ host: "a", port: 88, protocol: "tcp" }, { host: "b", port: 88, protocol: "tcp" }], "R", Uint8Array.of(1), { dial: second, udp: null, tries: 2 }), Uint8Array.of(5));
    assert.equal(asked, 2);
    // KDC_ERR_SVC_UNAVAILABLE: the next KDC at once.
    const busyError = encodeKrbError({ ctime: undefined, cusec: undefined, stime: new Date(), susec: 0, errorCode: 29, crealm: undefined, cname: undefined, realm: "R", sname: { nameType: 2, components: ["krbtgt", "R"] }, eText: undefined, eData: undefined });
    let busyAsked = 0;
    const busy = fakeKdc(() => (++busyAsked === 1 ? frame(busyError) : frame(Uint8Array.of(6))));
    assert.deepEqual(await sendToKdcs([{ host: "a", port: 88, protocol: "tcp" }, { host: "b", port: 88, protocol: "tcp" }], "R", Uint8Array.of(1), { dial: busy, udp: null, tries: 3 }), Uint8Array.of(6));
    assert.equal(busyAsked, 2);
  });

  it("a KDC whose ETYPE-INFO2 asks 2^24 string-to-key iterations fails the password login with a typed error, no PBKDF2 run", async () => {
    const etypeInfo = encodeEtypeInfo2([{ etype: 18, salt: "R.EXAMPLEalice", s2kparams: Uint8Array.of(0x01, 0x00, 0x00, 0x00) }]);
    const preauthRequired: KrbErrorMessage = {
      ctime: undefined, cusec: undefined, stime: new Date(), susec: 0, errorCode: 25, crealm: undefined, cname: undefined, realm: "R.EXAMPLE",
      sname: { nameType: 2, components: ["krbtgt", "R.EXAMPLE"] }, eText: undefined, eData: encodeMethodData([{ type: 19, value: etypeInfo }]),
    };
    let requests = 0;
    const kdc = fakeKdc(() => (requests++, frame(encodeKrbError(preauthRequired))));
    const ctx = { config: parseKrb5Conf(""), now: () => Date.now(), dial: kdc, udp: null, kdcsFor: () => [{ host: "kdc", port: 88, protocol: "tcp" as const }] };
    await assert.rejects(
      asExchange(ctx, { client: { nameType: 1, components: ["alice"], realm: "R.EXAMPLE" }, credentials: { password: "secret" } }),
      (e: Error) =>
        e instanceof KerberosError && e.reason === KerberosErrorReason.BadReply &&
        /the KDC's string-to-key parameters for aes256-cts-hmac-sha1-96 \(18\) are unusable: string-to-key iteration count 16777216 .*outside 1\.\.16777215/.test(e.message) &&
        !e.message.includes("secret"),
    );
    assert.equal(requests, 1); // refused on the KDC's answer: no PA-ENC-TIMESTAMP was computed or sent
  });

  it("a KRB_ERR_RESPONSE_TOO_BIG over UDP goes to TCP on the same KDC", async () => {
    const tooBig: KrbErrorMessage = { ctime: undefined, cusec: undefined, stime: new Date(0), susec: 0, errorCode: 52, crealm: undefined, cname: undefined, realm: "R", sname: { nameType: 2, components: ["krbtgt", "R"] }, eText: undefined, eData: undefined };
    const d = fakeKdc(() => frame(Uint8Array.of(9)));
    assert.deepEqual(await sendToKdcs([{ host: "a", port: 88, protocol: undefined }], "R", Uint8Array.of(1), { dial: d, udp: async () => encodeKrbError(tooBig) }), Uint8Array.of(9));
    assert.equal(d.dials, 1);
  });

  /**
   * A KDC of every realm at once that answers each TGS-REQ with a referral TGT krbtgt/next(REALM)@REALM, encrypted
   * with the authenticator's subkey as a real KDC does; every TGT shares one session key. Records the realms asked.
   */
  function referringKdc(next: (realm: string) => string): { dial: Dialer; asked: string[]; key: KeyBlock } {
    const aes = enctype(18);
    const key = new KeyBlock(18, aes.randomKey());
    const asked: string[] = [];
    const dial = fakeKdc((bytes) => {
      const req = decodeKdcReq(bytes);
      const ap = decodeApReq(req.padata[0].value);
      const auth = decodeAuthenticator(aes.decrypt(key.key, KeyUsage.TGS_REQ_AUTH, ap.authenticator.cipher));
      const realm = req.body.realm;
      asked.push(realm);
      const sname = { nameType: 2, components: ["krbtgt", next(realm)] };
      const now = new Date();
      const enc = encodeEncKdcRepPart(26, {
        key, nonce: req.body.nonce, keyExpiration: undefined, flags: 0, authTime: now, startTime: now, endTime: new Date(now.getTime() + 3600_000), renewTill: undefined, srealm: realm, sname,
      });
      const ticket = encodeTicket({ realm, sname, encPart: { etype: 18, kvno: 1, cipher: Uint8Array.of(0) } });
      const subkey = auth.subkey ?? key;
      return frame(encodeKdcRep({
        msgType: 13, padata: [], crealm: "A.TEST", cname: { nameType: 1, components: ["alice"] }, ticket,
        encPart: { etype: 18, kvno: undefined, cipher: aes.encrypt(subkey.key, KeyUsage.TGS_REP_ENC_PART_SUBKEY, enc) },
      }));
    });
    return { dial, asked, key };
  }

  /** A TGT of alice@A.TEST with `key`, for serviceTicketAcross. */
  function tgtOf(key: KeyBlock): KerberosCredential {
    const sname = { nameType: 2, components: ["krbtgt", "A.TEST"] };
    const now = Date.now();
    return {
      client: { nameType: 1, components: ["alice"], realm: "A.TEST" }, server: { ...sname, realm: "A.TEST" }, key, flags: 0,
      ticket: decodeTicket(encodeTicket({ realm: "A.TEST", sname, encPart: { etype: 18, kvno: 1, cipher: Uint8Array.of(0) } })),
      authTime: now, startTime: now, endTime: now + 3600_000, renewTill: undefined,
    };
  }

  it("referrals: one back to a realm already visited is a loop, and more than 10 are too many (too-many-hops, definite)", async () => {
    const server = { nameType: 3, components: ["zookeeper", "zk.b.test"], realm: "A.TEST" };
    const kdcsFor = () => [{ host: "kdc", port: 88, protocol: "tcp" as const }];
    const loop = referringKdc((r) => (r === "A.TEST" ? "B.TEST" : "A.TEST"));
    await assert.rejects(
      serviceTicketAcross({ config: parseKrb5Conf(""), now: () => Date.now(), dial: loop.dial, udp: null, kdcsFor }, { tgt: tgtOf(loop.key), server, referral: true }),
      (e: Error) => e instanceof KerberosError && e.reason === KerberosErrorReason.TooManyHops && !e.transient &&
        /alice@A\.TEST → zookeeper\/zk\.b\.test@A\.TEST: the KDC of B\.TEST referred back to A\.TEST \(referrals A\.TEST → B\.TEST → A\.TEST\)/.test(e.message),
    );
    assert.deepEqual(loop.asked, ["A.TEST", "B.TEST"]);
    const chain = referringKdc((r) => `R${r === "A.TEST" ? 1 : Number(r.slice(1)) + 1}`);
    await assert.rejects(
      serviceTicketAcross({ config: parseKrb5Conf(""), now: () => Date.now(), dial: chain.dial, udp: null, kdcsFor }, { tgt: tgtOf(chain.key), server, referral: true }),
      (e: Error) => e instanceof KerberosError && e.reason === KerberosErrorReason.TooManyHops && /more than 10 referrals \(A\.TEST → R1 → .* → R10 → R11\)/.test(e.message),
    );
    assert.equal(chain.asked.length, 11);
  });
});
