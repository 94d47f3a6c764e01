// The DER codec of the Kerberos code: each type round-trips through the writer and the reader, known
// encodings decode as X.690 says, malformed input is refused with a DerError naming what and where, and
// fast-check feeds random and mutated bytes (from real MIT tickets) that must only ever produce a tree
// or a DerError, quickly. KERBEROS_FUZZ_RUNS (default 3000) sets the runs per property.
import console from "node:console";
import { readFileSync } from "node:fs";
import process from "node:process";
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { hex, unhex } from "../support/bytes.ts";
import { parseCcache } from "../../src/kerberos/ccache.ts";
import { DerError } from "../../src/kerberos/errors.ts";
import {
  application,
  bitString,
  boolean,
  decodeDer,
  decodeDerPrefix,
  encodeApplication,
  encodeBitString,
  encodeBoolean,
  encodeExplicit,
  encodeFields,
  encodeGeneralizedTime,
  encodeInteger,
  encodeKerberosFlags,
  encodeKerberosString,
  encodeObjectIdentifier,
  encodeOctetString,
  encodeSequence,
  encodeUint32,
  fields,
  generalizedTime,
  int32,
  integer,
  kerberosFlags,
  kerberosString,
  objectIdentifier,
  octetString,
  sequence,
  TagClass,
  tlv,
  uint32,
  type DerNode,
} from "../../src/kerberos/der.ts";

const RUNS = Number(process.env.KERBEROS_FUZZ_RUNS ?? 3000);

function derFailure(fn: () => unknown, pattern?: RegExp): DerError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof DerError, `expected DerError, got ${String(caught)}`);
  if (pattern) assert.match(caught.message, pattern);
  return caught;
}

describe("DER: known encodings (X.690)", () => {
  it("INTEGER: minimal two's complement, negative and large", () => {
    const cases: Array<[number, string]> = [
      [0, "020100"],
      [1, "020101"],
      [127, "02017f"],
      [128, "02020080"],
      [256, "02020100"],
      [-1, "0201ff"],
      [-128, "020180"],
      [-129, "0202ff7f"],
      [0x7fffffff, "02047fffffff"],
      [-0x80000000, "020480000000"],
      [0xffffffff, "020500ffffffff"],
      [2 ** 40, "0206010000000000"],
    ];
    for (const [v, enc] of cases) {
      assert.equal(hex(encodeInteger(v)), enc, `encode ${v}`);
      assert.equal(integer(decodeDer(unhex(enc)), "n"), v, `decode ${enc}`);
    }
  });
  it("Int32 and UInt32 ranges; a negative UInt32 is read as its unsigned value", () => {
    assert.equal(int32(decodeDer(encodeInteger(-5)), "x"), -5);
    derFailure(() => int32(decodeDer(encodeInteger(0x80000000)), "nonce"), /nonce: 2147483648 is outside Int32/);
    assert.equal(uint32(decodeDer(encodeUint32(0xfffffffe)), "kvno"), 0xfffffffe);
    assert.equal(uint32(decodeDer(unhex("0201fe")), "kvno"), 0xfffffffe);
    derFailure(() => uint32(decodeDer(encodeInteger(2 ** 32)), "kvno"), /outside UInt32/);
    assert.throws(() => encodeUint32(-1), RangeError);
  });
  it("non-minimal, empty and too-long INTEGERs are refused", () => {
    derFailure(() => integer(decodeDer(unhex("02020001")), "n"), /non-minimal INTEGER/);
    derFailure(() => integer(decodeDer(unhex("0202ff80")), "n"), /non-minimal INTEGER/);
    derFailure(() => integer(decodeDer(unhex("0200")), "n"), /empty INTEGER/);
    derFailure(() => integer(decodeDer(unhex("0207010000000000000000".slice(0, 18))), "n"), /INTEGER of 7 bytes is too large/);
  });
  it("lengths: short, long, and the refusal of indefinite, non-minimal and overlong forms", () => {
    const big = new Uint8Array(300).fill(7);
    const enc = encodeOctetString(big);
    assert.equal(hex(enc.subarray(0, 4)), "0482012c");
    assert.deepEqual(octetString(decodeDer(enc), "o"), big);
    derFailure(() => decodeDer(unhex("3080020100 0000".replace(/ /g, ""))), /indefinite length/);
    derFailure(() => decodeDer(unhex("04810141")), /non-minimal length/);
    derFailure(() => decodeDer(unhex("0485010000000041")), /length of 5 bytes/);
    derFailure(() => decodeDer(unhex("040541")), /claims 5 content bytes but only 1 remain/);
  });
  it("GeneralString, OCTET STRING, BOOLEAN, OID", () => {
    assert.equal(hex(encodeKerberosString("ZKTS.TEST")), "1b095a4b54532e54455354");
    assert.equal(kerberosString(decodeDer(encodeKerberosString("Juriši\u0107")), "s"), "Juriši\u0107");
    derFailure(() => kerberosString(decodeDer(unhex("1b02c328")), "realm"), /realm: string is not valid UTF-8/);
    assert.equal(boolean(decodeDer(encodeBoolean(true)), "b"), true);
    derFailure(() => boolean(decodeDer(unhex("010101")), "b"), /00 or FF/);
    assert.equal(hex(encodeObjectIdentifier("1.2.840.113554.1.2.2")), "06092a864886f712010202");
    assert.equal(objectIdentifier(decodeDer(unhex("06092a864886f712010202")), "mech"), "1.2.840.113554.1.2.2");
    assert.equal(objectIdentifier(decodeDer(encodeObjectIdentifier("2.999.3")), "o"), "2.999.3");
    derFailure(() => objectIdentifier(decodeDer(unhex("06022a86")), "o"), /truncated OBJECT IDENTIFIER/);
  });
  it("GeneralizedTime: KerberosTime YYYYMMDDHHMMSSZ only", () => {
    const t = new Date(Date.UTC(2026, 11, 4, 23, 59, 58));
    const enc = encodeGeneralizedTime(t);
    assert.equal(new TextDecoder().decode(decodeDer(enc).content), "20261204235958Z");
    assert.equal(generalizedTime(decodeDer(enc), "t").getTime(), t.getTime());
    const year37 = new Date(0);
    year37.setUTCFullYear(37, 0, 1);
    assert.equal(new TextDecoder().decode(decodeDer(encodeGeneralizedTime(year37)).content), "00370101000000Z");
    assert.equal(generalizedTime(decodeDer(encodeGeneralizedTime(year37)), "t").getUTCFullYear(), 37);
    const bad = (s: string): Uint8Array => tlv(TagClass.Universal, false, 24, new TextEncoder().encode(s));
    derFailure(() => generalizedTime(decodeDer(bad("20261204235958.5Z")), "till"), /till: GeneralizedTime/);
    derFailure(() => generalizedTime(decodeDer(bad("20261304235958Z")), "t"), /not a valid date/);
    derFailure(() => generalizedTime(decodeDer(bad("20260231000000Z")), "t"), /not a valid date/);
    derFailure(() => generalizedTime(decodeDer(bad("2026120423595xZ")), "t"), /non-digit/);
  });
  it("BIT STRING and KerberosFlags (flag 0 is the most significant bit)", () => {
    // KDCOptions forwardable(1) renewable(8) renewable-ok(27): 0x40800010
    const enc = encodeKerberosFlags(0x40800010);
    assert.equal(hex(enc), "03050040800010");
    assert.equal(kerberosFlags(decodeDer(enc), "kdc-options"), 0x40800010);
    assert.equal(kerberosFlags(decodeDer(unhex("03020040")), "f"), 0x40000000); // short strings are zero-extended
    assert.deepEqual(bitString(decodeDer(encodeBitString(unhex("a0"), 5)), "b"), { bytes: unhex("a0"), unusedBits: 5 });
    derFailure(() => bitString(decodeDer(unhex("030108")), "b"), /unused bits/);
    derFailure(() => bitString(decodeDer(unhex("0300")), "b"), /without its unused-bits byte/);
  });
  it("APPLICATION and context tags, high tag numbers", () => {
    const inner = encodeSequence([encodeExplicit(0, encodeInteger(5)), encodeExplicit(1, encodeInteger(11))]);
    const enc = encodeApplication(1, inner);
    assert.equal(hex(enc.subarray(0, 2)), "610c");
    const f = fields(application(decodeDer(enc), 1, "Ticket"), "Ticket");
    assert.equal(integer(f.required(0, "tkt-vno"), "tkt-vno"), 5);
    assert.equal(integer(f.required(1, "realm"), "x"), 11);
    derFailure(() => f.required(2, "sname"), /Ticket: required field sname \[2\] is missing/);
    derFailure(() => application(decodeDer(enc), 30, "KRB-ERROR"), /KRB-ERROR: expected \[APPLICATION 30\], found \[APPLICATION 1\]/);
    const high = tlv(TagClass.Context, false, 200, unhex("01"));
    assert.equal(hex(high), "9f81480101");
    assert.equal(decodeDer(high).tag, 200);
    derFailure(() => decodeDer(unhex("9f1e0100")), /high tag number form used for a tag below 31/);
  });
});

describe("DER: Kerberos-shaped round trips", () => {
  it("a PrincipalName / EncryptionKey / KDC-REQ-BODY-like structure survives write and read", () => {
    const now = new Date(Date.UTC(2026, 11, 5, 1, 2, 3));
    const principal = encodeFields([
      [0, encodeInteger(2)],
      [1, encodeSequence([encodeKerberosString("zookeeper"), encodeKerberosString("localhost")])],
    ]);
    const body = encodeFields([
      [0, encodeKerberosFlags(0x40810010)],
      [1, undefined],
      [2, encodeKerberosString("ZKTS.TEST")],
      [3, principal],
      [5, encodeGeneralizedTime(now)],
      [7, encodeUint32(0xdeadbeef)],
      [8, encodeSequence([encodeInteger(18), encodeInteger(17), encodeInteger(20), encodeInteger(19)])],
    ]);
    const msg = encodeApplication(10, body);
    const f = fields(application(decodeDer(msg), 10, "AS-REQ"), "KDC-REQ-BODY");
    assert.equal(f.has(1), false);
    assert.equal(kerberosFlags(f.required(0, "kdc-options"), "kdc-options"), 0x40810010);
    assert.equal(kerberosString(f.required(2, "realm"), "realm"), "ZKTS.TEST");
    const sname = fields(f.required(3, "sname"), "PrincipalName");
    assert.equal(int32(sname.required(0, "name-type"), "name-type"), 2);
    assert.deepEqual(sequence(sname.required(1, "name-string"), "name-string").map((n) => kerberosString(n, "c")), ["zookeeper", "localhost"]);
    assert.equal(generalizedTime(f.required(5, "till"), "till").getTime(), now.getTime());
    assert.equal(uint32(f.required(7, "nonce"), "nonce"), 0xdeadbeef);
    assert.deepEqual(sequence(f.required(8, "etype"), "etype").map((n) => int32(n, "e")), [18, 17, 20, 19]);
  });
  it("fields out of order, repeated, or not explicitly tagged are refused", () => {
    const f0 = encodeExplicit(0, encodeInteger(1));
    const f1 = encodeExplicit(1, encodeInteger(2));
    derFailure(() => fields(decodeDer(encodeSequence([f1, f0])), "X"), /field \[0\] is out of order or repeated/);
    derFailure(() => fields(decodeDer(encodeSequence([f0, f0])), "X"), /out of order or repeated/);
    derFailure(() => fields(decodeDer(encodeSequence([encodeInteger(1)])), "X"), /expected an explicit context tag/);
    derFailure(() => fields(decodeDer(encodeSequence([encodeExplicit(0, encodeSequence([encodeInteger(1), encodeInteger(2)]).subarray(2))])), "X"), /holds 2 elements/);
  });
  it("decodeDerPrefix leaves what follows alone (GSS tokens); decodeDer refuses trailing bytes", () => {
    const a = encodeInteger(7);
    const both = new Uint8Array([...a, 0xde, 0xad]);
    const { node, length } = decodeDerPrefix(both);
    assert.equal(length, a.length);
    assert.equal(integer(node, "n"), 7);
    derFailure(() => decodeDer(both), /2 trailing bytes after the INTEGER at offset 3/);
  });
  it("limits: depth, size and element count", () => {
    let deep = encodeInteger(1);
    for (let i = 0; i < 40; i++) deep = encodeSequence([deep]);
    derFailure(() => decodeDer(deep), /nesting deeper than 32/);
    assert.equal(decodeDer(deep, { maxDepth: 64 }).tag, 16);
    let veryDeep: Uint8Array = new Uint8Array([0x05, 0x00]);
    for (let i = 0; i < 600; i++) veryDeep = encodeSequence([veryDeep]);
    derFailure(() => decodeDer(veryDeep, { maxDepth: 1e9, maxLength: 1e9 }), /nesting deeper than 256/);
    derFailure(() => decodeDer(new Uint8Array(2 << 20)), /exceeds the limit/);
    derFailure(() => decodeDer(encodeSequence(Array.from({ length: 100 }, () => encodeInteger(0))), { maxElements: 50 }), /more than 50 elements/);
    derFailure(() => decodeDer(new Uint8Array(0)), /empty input/);
    derFailure(() => decodeDer("3000" as unknown as Uint8Array), /not a Uint8Array/);
  });
  it("error offsets point into the input", () => {
    const enc = encodeSequence([encodeInteger(1), encodeOctetString(unhex("0102"))]);
    const cut = enc.subarray(0, enc.length - 1);
    const e = derFailure(() => decodeDer(cut));
    assert.ok(e.offset >= 0 && e.offset <= cut.length, String(e.offset));
  });
});

// --- fuzzing ---

/** Every typed accessor tried on every node: only DerError may come out. */
function exercise(node: DerNode, depth = 0): void {
  const tries: Array<() => unknown> = [
    () => integer(node, "i"),
    () => int32(node, "i"),
    () => uint32(node, "u"),
    () => boolean(node, "b"),
    () => octetString(node, "o"),
    () => kerberosString(node, "s"),
    () => generalizedTime(node, "t"),
    () => bitString(node, "bs"),
    () => kerberosFlags(node, "f"),
    () => objectIdentifier(node, "oid"),
    () => sequence(node, "seq"),
    () => fields(node, "fields"),
    () => application(node, node.tag, "app"),
  ];
  for (const t of tries) {
    try {
      t();
    } catch (e) {
      if (!(e instanceof DerError)) throw e;
    }
  }
  if (depth < 64) for (const c of node.children) exercise(c, depth + 1);
}

function decodeAndExercise(bytes: Uint8Array): void {
  let node: DerNode;
  try {
    node = decodeDer(bytes, { maxLength: 1 << 16 });
  } catch (e) {
    if (e instanceof DerError) return;
    throw e;
  }
  exercise(node);
}

// Real DER from MIT: the tickets of the fixture ccache, and a synthetic KDC-REQ-like message.
const ccache = parseCcache(readFileSync(new URL("../../fixtures/kerberos/alice.ccache", (import.meta as { url: string }).url)));
const seeds: Uint8Array[] = [
  ...ccache.credentials.map((c) => c.ticket),
  encodeApplication(
    10,
    encodeFields([
      [1, encodeInteger(5)],
      [2, encodeInteger(10)],
      [4, encodeFields([[0, encodeKerberosFlags(0x40000010)], [2, encodeKerberosString("ZKTS.TEST")], [5, encodeGeneralizedTime(0)], [7, encodeUint32(12345)]])],
    ]),
  ),
];

type Mutation = { k: "flip"; at: number; bit: number } | { k: "cut"; at: number } | { k: "set"; at: number; v: number } | { k: "insert"; at: number; bytes: Uint8Array } | { k: "erase"; at: number; n: number };

function mutate(src: Uint8Array, ms: readonly Mutation[]): Uint8Array {
  let b = Uint8Array.from(src);
  for (const m of ms) {
    if (b.length === 0) break;
    const at = m.at % b.length;
    switch (m.k) {
      case "flip":
        b[at] ^= 1 << m.bit;
        break;
      case "cut":
        b = b.slice(0, at);
        break;
      case "set":
        b[at] = m.v;
        break;
      case "insert":
        b = new Uint8Array([...b.subarray(0, at), ...m.bytes, ...b.subarray(at)]);
        break;
      case "erase":
        b = new Uint8Array([...b.subarray(0, at), ...b.subarray(at + m.n)]);
        break;
    }
  }
  return b;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ k: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ k: fc.constant("cut" as const), at: fc.nat() }),
  fc.record({ k: fc.constant("set" as const), at: fc.nat(), v: fc.constantFrom(0x00, 0x30, 0x80, 0x81, 0x84, 0x85, 0xff, 0x1f, 0x7f, 0xa0, 0x61) }),
  fc.record({ k: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 6 }) }),
  fc.record({ k: fc.constant("erase" as const), at: fc.nat(), n: fc.integer({ min: 1, max: 6 }) }),
);

describe("DER: fuzzing (only DerError, always terminates)", () => {
  it(`random bytes (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        decodeAndExercise(bytes);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
  it(`random bytes behind plausible headers (${RUNS} runs)`, () => {
    fc.assert(
      fc.property(fc.constantFrom(0x30, 0x61, 0x6a, 0x7e, 0xa0, 0x02, 0x18, 0x03, 0x1b, 0x06), fc.nat({ max: 300 }), fc.uint8Array({ maxLength: 300 }), (id, len, rest) => {
        const lenBytes = len < 128 ? [len] : [0x82, len >> 8, len & 0xff];
        decodeAndExercise(new Uint8Array([id, ...lenBytes, ...rest]));
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
  it(`mutated MIT tickets and messages (${RUNS} runs)`, () => {
    const started = Date.now();
    fc.assert(
      fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 6 }), (which, ms) => {
        const t0 = Date.now();
        decodeAndExercise(mutate(seeds[which % seeds.length], ms));
        assert.ok(Date.now() - t0 < 2000, "a case took over 2 s");
      }),
      { numRuns: RUNS },
    );
    console.log(`[kerberos-der] ${RUNS} mutated cases, ${((Date.now() - started) / RUNS).toFixed(2)} ms per case on average`);
  }, 120_000);
  it("the unmutated seeds decode", () => {
    for (const s of seeds) assert.equal(decodeDer(s).raw.length, s.length);
  });
});
