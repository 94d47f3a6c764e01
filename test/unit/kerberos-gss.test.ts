// The krb5 GSS-API mechanism (RFC 4121) and the RFC 4752 SASL client without a KDC: a service ticket
// made by hand (EncTicketPart encrypted with a service key, as a KDC does), the initial context token
// and its 0x8003 checksum byte by byte, AP-REP verification, Wrap and MIC tokens for the four enctypes in
// both directions (integrity only, sealed, rotated by RRC), the 32-byte wrap offer a ZooKeeper server
// sends, KRB-ERROR tokens, and hostile tokens into every step: only SaslError / KerberosError.
import process from "node:process";
import assert from "node:assert/strict";
import fc from "fast-check";
import { describe, it } from "../support/bdd.ts";
import { hex } from "../support/bytes.ts";
import { SaslError } from "../../src/client/sasl/errors.ts";
import { gssapiMechanism } from "../../src/client/sasl/gssapi.ts";
import { enctype } from "../../src/kerberos/crypto.ts";
import { KerberosError } from "../../src/kerberos/errors.ts";
import {
  acceptApRep,
  decodeGssChecksum,
  encodeGssChecksum,
  frameContextToken,
  getMic,
  GssContext,
  GssFlags,
  initSecContext,
  TokId,
  unframeContextToken,
  unwrap,
  verifyMic,
  wrap,
} from "../../src/kerberos/gss.ts";
import { type KerberosCredential } from "../../src/kerberos/kdc.ts";
import { type Keytab } from "../../src/kerberos/keytab.ts";
import { parsePrincipal } from "../../src/kerberos/login.ts";
import { decodeTicket } from "../../src/kerberos/messages.ts";
import { KeyBlock, principalToString, type Principal } from "../../src/kerberos/types.ts";
import { acceptSecContext, buildApRep, encodeEncTicketPart, encodeKrbError, encodeTicket } from "../support/secure/kerberos-peer.ts";

const RUNS = Number(process.env.KERBEROS_FUZZ_RUNS ?? 3000);
const REALM = "ZKTS.TEST";
const client: Principal = { nameType: 1, components: ["alice"], realm: REALM };
const service: Principal = { nameType: 3, components: ["zookeeper", "localhost"], realm: REALM };

/** A service ticket as a KDC would make it, with the service's keytab to accept it. */
function handMade(et: number, now = Date.now()): { cred: KerberosCredential; keytab: Keytab } {
  const e = enctype(et);
  const serviceKey = new KeyBlock(et, e.randomKey());
  const session = new KeyBlock(et, e.randomKey());
  const part = encodeEncTicketPart({ flags: 0, key: session, client, authTime: new Date(now), startTime: undefined, endTime: new Date(now + 3600_000), renewTill: undefined });
  const raw = encodeTicket({ realm: REALM, sname: service, encPart: { etype: et, kvno: 2, cipher: e.encrypt(serviceKey.key, 2, part) } });
  const cred: KerberosCredential = { client, server: service, key: session, ticket: decodeTicket(raw), flags: 0, authTime: now, startTime: now, endTime: now + 3600_000, renewTill: undefined };
  return { cred, keytab: { version: 2, entries: [{ principal: service, timestamp: 0, kvno: 2, key: serviceKey }] } };
}

function throwsTyped(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (e instanceof SaslError || e instanceof KerberosError) return;
    throw new Error(`expected SaslError or KerberosError, got ${String(e)}`);
  }
}

describe("GSS-API krb5: context tokens (RFC 4121 §4.1, RFC 2743 §3.1)", () => {
  it("the 0x8003 checksum: Lgth 16 and the flags little-endian, zero channel bindings", () => {
    const c = encodeGssChecksum(GssFlags.MUTUAL | GssFlags.INTEG | GssFlags.CONF);
    assert.equal(hex(c), "10000000" + "00".repeat(16) + "32000000");
    assert.deepEqual(decodeGssChecksum(c), { bindings: new Uint8Array(16), flags: 0x32, delegation: undefined });
    assert.throws(() => decodeGssChecksum(new Uint8Array(23)), KerberosError);
    const lg = c.slice();
    lg[0] = 15;
    assert.throws(() => decodeGssChecksum(lg), /Lgth is 15/);
  });

  it("the initial context token: 60 len 06 09 <krb5 OID> 01 00 <AP-REQ>", () => {
    const { cred } = handMade(18);
    const start = initSecContext({ credential: cred, now: Date.UTC(2026, 11, 5, 12, 0, 0, 250), seqNumber: 42 });
    const tok = start.token;
    assert.equal(tok[0], 0x60);
    const at = tok[1] & 0x80 ? 2 + (tok[1] & 0x7f) : 2;
    assert.equal(hex(tok.subarray(at, at + 13)), "06092a864886f712010202" + "0100");
    assert.equal(tok[at + 13], 0x6e); // AP-REQ
    assert.equal(start.cusec, 250000);
    assert.equal(start.mutual, true);
    const { tokId, inner } = unframeContextToken(tok);
    assert.equal(tokId, TokId.AP_REQ);
    assert.equal(inner[0], 0x6e);
    assert.throws(() => unframeContextToken(frameContextToken(0x0100, inner).subarray(0, 20)), /claims/);
    const otherMech = Uint8Array.from([0x60, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x03, 0x01, 0x00]);
    assert.throws(() => unframeContextToken(otherMech), /mechanism 1\.2\.840\.113554\.1\.2\.3, not krb5/);
  });

  for (const et of [17, 18, 19, 20]) {
    it(`${et}: the acceptor decrypts ticket and authenticator, the AP-REP (with an acceptor subkey) verifies, tokens flow both ways`, () => {
      const { cred, keytab } = handMade(et);
      const start = initSecContext({ credential: cred, now: Date.now() });
      const acc = acceptSecContext(start.token, keytab, service);
      assert.equal(principalToString(acc.ticket.client), `alice@${REALM}`);
      assert.equal(acc.checksum.flags & GssFlags.MUTUAL, GssFlags.MUTUAL);
      assert.equal(acc.authenticator.seqNumber, Number(start.context.sendSeq));
      const subkey = new KeyBlock(et, enctype(et).randomKey());
      acceptApRep(start, buildApRep(acc, { subkey, seqNumber: 7 }));
      const ini = start.context;
      assert.equal(hex(ini.key.key), hex(subkey.key));
      assert.equal(ini.recvSeq, 7n);
      // acceptor → initiator and back, integrity only, sealed, and rotated.
      for (const options of [{}, { confidential: true }, { rrc: 12 }, { confidential: true, rrc: 28 }]) {
        const m = new TextEncoder().encode(`hello ${JSON.stringify(options)}`);
        const a2i = wrap(acc.context, m, options);
        assert.equal(a2i[2] & 0x05, 0x05); // SentByAcceptor | AcceptorSubkey
        assert.deepEqual(unwrap(ini, a2i).message, m);
        const i2a = wrap(ini, m, options);
        assert.equal(i2a[2] & 0x01, 0);
        const back = unwrap(acc.context, i2a);
        assert.deepEqual(back.message, m);
        assert.equal(back.sealed, options.confidential === true);
        // A reflected token (our own, back to us) is refused.
        assert.throws(() => unwrap(ini, i2a), /reflected/);
        // Any flipped bit is refused.
        const bad = a2i.slice();
        bad[bad.length - 1] ^= 1;
        assert.throws(() => unwrap(ini, bad), KerberosError);
      }
      const mic = getMic(ini, Uint8Array.of(1, 2, 3));
      assert.equal(hex(mic.subarray(0, 8)), "0404" + "04" + "ffffffffff"); // TOK_ID, flags AcceptorSubkey, filler
      verifyMic(acc.context, Uint8Array.of(1, 2, 3), mic);
      assert.throws(() => verifyMic(acc.context, Uint8Array.of(1, 2, 4), mic), /does not verify/);
    });
  }

  it("the ZooKeeper server's offer without mutual authentication: 32 bytes, 05 04 01 ff 00 0c 00 00, SND_SEQ = the initiator's", () => {
    const { cred, keytab } = handMade(18);
    const start = initSecContext({ credential: cred, now: Date.now(), mutual: false, seqNumber: 0x1234 });
    const acc = acceptSecContext(start.token, keytab, service);
    assert.equal(acc.mutual, false);
    const offer = wrap(acc.context, Uint8Array.of(0x01, 0x01, 0x00, 0x00));
    assert.equal(offer.length, 32);
    assert.equal(hex(offer.subarray(0, 16)), "050401ff000c0000" + "0000000000001234");
    assert.equal(hex(offer.subarray(16, 20)), "01010000");
    const got = unwrap(start.context, offer);
    assert.equal(got.seq, 0x1234n);
  });

  it("the acceptor's wrap tokens are taken in SND_SEQ order only: a replayed or a skipped token is refused (RFC 4121 §4.2.6.2)", () => {
    const { cred, keytab } = handMade(17);
    const start = initSecContext({ credential: cred, now: Date.now() });
    const acc = acceptSecContext(start.token, keytab, service);
    acceptApRep(start, buildApRep(acc, { seqNumber: 1000 }));
    const ini = start.context;
    const first = wrap(acc.context, Uint8Array.of(1));
    const second = wrap(acc.context, Uint8Array.of(2));
    const third = wrap(acc.context, Uint8Array.of(3));
    const refused = (token: Uint8Array, re: RegExp): void =>
      assert.throws(() => unwrap(ini, token), (e: Error) => e instanceof KerberosError && e.reason === "mutual-auth-failed" && re.test(e.message));
    refused(second, /SND_SEQ 1001, 1000 was expected: a token out of sequence/);
    assert.equal(unwrap(ini, first).seq, 1000n);
    refused(first, /SND_SEQ 1000, 1001 was expected: a replayed or duplicated token/);
    refused(third, /SND_SEQ 1002, 1001 was expected/);
    assert.equal(unwrap(ini, second).seq, 1001n); // a refusal does not move the expected number
    assert.equal(unwrap(ini, third).seq, 1002n);
    // Without sequence and replay detection the number is not checked.
    const loose = initSecContext({ credential: cred, now: Date.now(), flags: GssFlags.INTEG });
    const acc2 = acceptSecContext(loose.token, keytab, service);
    acceptApRep(loose, buildApRep(acc2, { seqNumber: 5 }));
    const skipped = (wrap(acc2.context, Uint8Array.of(1)), wrap(acc2.context, Uint8Array.of(2)));
    assert.equal(unwrap(loose.context, skipped).seq, 6n);
  });

  it("a ZooKeeper server's offer with the wrong SND_SEQ fails the SASL exchange (SaslError), mutual or not", () => {
    const { cred, keytab } = handMade(20);
    for (const mutual of [true, false]) {
      const mech = gssapiMechanism({ credential: cred, mutual });
      const acc = acceptSecContext(mech.initial(), keytab, service);
      if (mutual) mech.step(buildApRep(acc));
      acc.context.sendSeq += 1n;
      assert.throws(() => mech.step(wrap(acc.context, Uint8Array.of(0x01, 0x01, 0x00, 0x00))), (e: Error) => e instanceof SaslError && /SND_SEQ .* was expected/.test(e.message));
    }
  });

  it("an AP-REP that does not echo the authenticator's time, or is a KRB-ERROR, fails with what it is", () => {
    const { cred, keytab } = handMade(17);
    const now = Date.UTC(2026, 11, 5, 12, 0, 0);
    const start = initSecContext({ credential: cred, now });
    const acc = acceptSecContext(start.token, keytab, service);
    const other = initSecContext({ credential: cred, now: now + 1 });
    assert.throws(() => acceptApRep(other, buildApRep(acc)), /does not echo/);
    const err = encodeKrbError({
      ctime: new Date(now),
      cusec: 0,
      stime: new Date(now + 600_000),
      susec: 0,
      errorCode: 37,
      crealm: undefined,
      cname: undefined,
      realm: REALM,
      sname: service,
      eText: undefined,
      eData: undefined,
    });
    assert.throws(
      () => acceptApRep(start, frameContextToken(TokId.KRB_ERROR, err)),
      (e: Error) => e instanceof KerberosError && e.reason === "clock-skew" && /2026-12-05T12:10:00Z, ours was 2026-12-05T12:00:00Z, a difference of 600 s/.test(e.message),
    );
  });

  it("GssContext prints no key", () => {
    const { cred } = handMade(20);
    const s = initSecContext({ credential: cred, now: Date.now() });
    const text = `${String(s.context)} ${JSON.stringify(s.context)}`;
    assert.match(text, /<keys redacted>/);
    assert.ok(!text.includes(hex(cred.key.key)));
  });
});

describe("SASL GSSAPI (RFC 4752) state machine", () => {
  /** Runs the exchange against the acceptor functions; returns the acceptor's view of the final answer. */
  function run(mutual: boolean, offer = Uint8Array.of(0x01, 0x01, 0x00, 0x00)): { answer: Uint8Array; mech: ReturnType<typeof gssapiMechanism> } {
    const { cred, keytab } = handMade(18);
    const mech = gssapiMechanism({ credential: cred, mutual });
    const acc = acceptSecContext(mech.initial(), keytab, service);
    if (mutual) assert.deepEqual(mech.step(buildApRep(acc)), new Uint8Array(0));
    const answer = mech.step(wrap(acc.context, offer));
    assert.ok(answer !== null);
    return { answer: unwrap(acc.context, answer).message, mech };
  }

  it("mutual and not: the answer is 01 00 00 00 + the authorization id, then complete on the empty final token", () => {
    for (const mutual of [true, false]) {
      const { answer, mech } = run(mutual);
      assert.equal(hex(answer.subarray(0, 4)), "01000000");
      assert.equal(new TextDecoder().decode(answer.subarray(4)), `alice@${REALM}`);
      assert.equal(mech.complete, false);
      assert.equal(mech.step(new Uint8Array(0)), null);
      assert.equal(mech.complete, true);
      assert.throws(() => mech.step(new Uint8Array(0)), /after the exchange completed/);
    }
  });

  it("a server that requires a security layer is refused by name", () => {
    assert.throws(() => run(false, Uint8Array.of(0x06, 0x01, 0x00, 0x00)), (e: Error) => e instanceof SaslError && e.reason === "unsupported" && /requires a security layer/.test(e.message));
  });

  it("out of order: step before initial, initial twice", () => {
    const { cred } = handMade(18);
    const m = gssapiMechanism({ credential: cred });
    assert.throws(() => m.step(new Uint8Array(0)), /before initial/);
    const m2 = gssapiMechanism({ credential: cred });
    m2.initial();
    assert.throws(() => m2.initial(), /twice/);
  });

  it("hostile server tokens at every step: only SaslError, never a TypeError or a hang", () => {
    const { cred, keytab } = handMade(19);
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 200 }), fc.integer({ min: 0, max: 3 }), (mutual, bytes, prefix) => {
        const mech = gssapiMechanism({ credential: cred, mutual });
        const acc = acceptSecContext(mech.initial(), keytab, service);
        // A valid prefix of the conversation, then garbage.
        const heads = [Uint8Array.of(0x05, 0x04), Uint8Array.of(0x60), Uint8Array.of(0x02, 0x00), new Uint8Array(0)];
        const junk = new Uint8Array(heads[prefix].length + bytes.length);
        junk.set(heads[prefix]);
        junk.set(bytes, heads[prefix].length);
        if (mutual && prefix === 3) {
          mech.step(buildApRep(acc));
        }
        try {
          mech.step(junk);
        } catch (e) {
          if (!(e instanceof SaslError)) throw e;
        }
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
    for (const bytes of [new Uint8Array(0), Uint8Array.of(0x60, 0x80), Uint8Array.of(0x05, 0x04, 0x00, 0xff, 0x00, 0x0c, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0)]) {
      throwsTyped(() => unwrap(initSecContext({ credential: cred, now: 0 }).context, bytes));
      throwsTyped(() => unframeContextToken(bytes));
    }
  });
});

describe("principal names", () => {
  it("parses name/instance@REALM with escapes and the default realm", () => {
    assert.deepEqual(parsePrincipal("zookeeper/zk1.example.com@EXAMPLE.COM", undefined, 3), { nameType: 3, components: ["zookeeper", "zk1.example.com"], realm: "EXAMPLE.COM" });
    assert.deepEqual(parsePrincipal("alice", "R"), { nameType: 1, components: ["alice"], realm: "R" });
    assert.deepEqual(parsePrincipal("a\\/b@R\\@S", undefined).components, ["a/b"]);
    assert.equal(parsePrincipal("a\\/b@R\\@S", undefined).realm, "R@S");
    assert.throws(() => parsePrincipal("alice", undefined), /no default_realm/);
    assert.throws(() => parsePrincipal("a//b@R", undefined), /empty component/);
  });

  it("a credential's context refuses DES by name", () => {
    const { cred } = handMade(18);
    assert.throws(() => initSecContext({ credential: { ...cred, key: new KeyBlock(3, new Uint8Array(8)) }, now: 0 }), /des-cbc-md5 \(3\) is not supported/);
    assert.ok(GssContext);
  });
});
