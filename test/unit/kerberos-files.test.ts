// MIT keytab and FILE ccache readers against files a real MIT krb5 1.20 KDC and kinit wrote
// (fixtures/kerberos, made by make-fixtures.sh; no KDC runs here): every entry as `klist -k -t -e -K`
// and `klist -c -e -f -C` list them, bob's keys re-derived from his password, and each ticket of the
// ccache decrypted with its service's key from the exported keytab, its session key and times matching
// the ccache. Then truncated, corrupted and hand-made files: only KeytabError / CcacheError.
// KERBEROS_FUZZ_RUNS (default 3000) sets the runs per property.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { inspect } from "node:util";
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { hex } from "../support/bytes.ts";
import { defaultCcachePath, loadCcache, parseCcache, ticketFlagLetters } from "../../src/kerberos/ccache.ts";
import { enctype } from "../../src/kerberos/crypto.ts";
import { CcacheError, KeytabError, KrbCryptoError, KrbCryptoErrorReason } from "../../src/kerberos/errors.ts";
import { keysFor, loadKeytab, parseKeytab, type Keytab } from "../../src/kerberos/keytab.ts";
import { KerberosLogin } from "../../src/kerberos/login.ts";
import { decodeEncTicketPart, decodeTicket } from "../../src/kerberos/messages.ts";
import { principalToString } from "../../src/kerberos/types.ts";

const RUNS = Number(process.env.KERBEROS_FUZZ_RUNS ?? 3000);
const fixture = (name: string): URL => new URL(`../../fixtures/kerberos/${name}`, (import.meta as { url: string }).url);
const bytesOf = (name: string): Uint8Array => new Uint8Array(readFileSync(fixture(name)));
const textOf = (name: string): string => readFileSync(fixture(name), "utf8");

/** klist's "%m/%d/%y %H:%M:%S" (the fixtures were listed with TZ=UTC). */
function klistTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  const p = (n: number): string => String(n).padStart(2, "0");
  return `${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())}/${p(d.getUTCFullYear() % 100)} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
}

interface KlistKey {
  kvno: number;
  time: string;
  principal: string;
  enctype: string;
  key: string;
}

function klistKeytab(name: string): KlistKey[] {
  const out: KlistKey[] = [];
  for (const line of textOf(name).split("\n")) {
    const m = /^\s*(\d+) (\S+ \S+) (\S+) \((\S+)\)\s+\(0x([0-9a-f]+)\)\s*$/.exec(line);
    if (m) out.push({ kvno: Number(m[1]), time: m[2], principal: m[3], enctype: m[4], key: m[5] });
  }
  return out;
}

function asKlist(kt: Keytab): KlistKey[] {
  return kt.entries.map((e) => ({
    kvno: e.kvno,
    time: klistTime(e.timestamp),
    principal: principalToString(e.principal),
    enctype: enctype(e.key.enctype).name,
    key: hex(e.key.key),
  }));
}

function typedFailure<T extends Error>(fn: () => unknown, type: new (...a: never[]) => T, pattern?: RegExp): T {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof type, `expected ${type.name}, got ${String(caught)}`);
  if (pattern) assert.match((caught as Error).message, pattern);
  return caught as T;
}

describe("keytab: files written by MIT kadmin.local ktadd", () => {
  for (const name of ["alice.keytab", "bob.keytab", "services.keytab"]) {
    it(`${name} reads as klist -k -t -e -K lists it`, () => {
      const kt = parseKeytab(bytesOf(name));
      assert.equal(kt.version, 2);
      const want = klistKeytab(`${name}.klist`);
      assert.ok(want.length >= 4);
      assert.deepEqual(asKlist(kt), want);
      for (const e of kt.entries) assert.equal(e.principal.nameType, e.principal.components.length === 1 ? 1 : e.principal.components[0] === "krbtgt" ? 2 : 1);
    });
  }
  it("bob's keys are string-to-key of his password with the default salt and iteration counts", () => {
    const kt = parseKeytab(bytesOf("bob.keytab"));
    assert.equal(kt.entries.length, 4);
    for (const e of kt.entries) {
      const et = enctype(e.key.enctype);
      assert.equal(hex(et.stringToKey("fixture-password", "ZKTS.TESTbob")), hex(e.key.key), et.name);
    }
  });
  it("alice has kvno 2 and 3 (the 32-bit kvno extension); keysFor picks the highest, in the asked enctype order", () => {
    const kt = loadKeytab(`FILE:${fixture("alice.keytab").pathname}`);
    const alice = { nameType: 1, components: ["alice"], realm: "ZKTS.TEST" };
    assert.deepEqual(keysFor(kt, alice).map((e) => [e.kvno, e.key.enctype]), [[3, 18], [3, 17], [3, 20], [3, 19]]);
    assert.deepEqual(keysFor(kt, alice, { kvno: 2, enctypes: [19, 18] }).map((e) => [e.kvno, e.key.enctype]), [[2, 19], [2, 18]]);
    assert.deepEqual(keysFor(kt, { ...alice, components: ["bob"] }), []);
  });
  it("keys stay out of JSON, inspect and String()", () => {
    const kt = parseKeytab(bytesOf("alice.keytab"));
    const shown = [JSON.stringify(kt), inspect(kt, { depth: 10 }), kt.entries.map((e) => String(e.key)).join()].join("\n");
    for (const e of kt.entries) assert.ok(!shown.includes(hex(e.key.key).slice(0, 16)), "key bytes shown");
    assert.match(shown, /<redacted>/);
  });
  it("keys are copies: wiping the file buffer (even a Buffer) after parsing leaves them intact", () => {
    const buf = readFileSync(fixture("bob.keytab"));
    const kt = parseKeytab(buf);
    const before = kt.entries.map((e) => hex(e.key.key));
    buf.fill(0);
    assert.deepEqual(kt.entries.map((e) => hex(e.key.key)), before);
  });
  it("a missing file is a KeytabError naming the path, not the contents", () => {
    typedFailure(() => loadKeytab("/nonexistent/zk.keytab"), KeytabError, /cannot read \/nonexistent\/zk.keytab \(ENOENT\)/);
  });
});

/** The entries of a v2 keytab re-encoded as version 1 (realm counted, no name type) in the given byte order. */
function toVersion1(kt: Keytab, littleEndian: boolean): Uint8Array {
  const parts: number[] = [5, 1];
  const u16 = (v: number): number[] => (littleEndian ? [v & 0xff, v >> 8] : [v >> 8, v & 0xff]);
  const u32 = (v: number): number[] => {
    const b = [(v >>> 24) & 0xff, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff];
    return littleEndian ? b.reverse() : b;
  };
  const str = (s: string): number[] => {
    const b = [...new TextEncoder().encode(s)];
    return [...u16(b.length), ...b];
  };
  for (const e of kt.entries) {
    const body = [
      ...u16(e.principal.components.length + 1),
      ...str(e.principal.realm),
      ...e.principal.components.flatMap(str),
      ...u32(e.timestamp),
      e.kvno & 0xff,
      ...u16(e.key.enctype),
      ...u16(e.key.length),
      ...e.key.key,
    ];
    parts.push(...u32(body.length), ...body);
  }
  return Uint8Array.from(parts);
}

describe("keytab: other shapes", () => {
  const v2 = parseKeytab(bytesOf("services.keytab"));
  it("version 0x0501 in either byte order (native order of the writer)", () => {
    for (const le of [true, false]) {
      const v1 = parseKeytab(toVersion1(v2, le), { littleEndian: le });
      assert.equal(v1.version, 1);
      assert.deepEqual(
        v1.entries.map((e) => [principalToString(e.principal), e.principal.nameType, e.kvno, e.key.enctype, hex(e.key.key)]),
        v2.entries.map((e) => [principalToString(e.principal), 0, e.kvno, e.key.enctype, hex(e.key.key)]),
      );
    }
  });
  it("holes (negative record lengths) are skipped; a zero length ends the file", () => {
    const file = bytesOf("services.keytab");
    const firstLen = new DataView(file.buffer, file.byteOffset).getInt32(2);
    const cut = 2 + 4 + firstLen;
    const holed = new Uint8Array([...file.subarray(0, cut), 0xff, 0xff, 0xff, 0xf8, ...new Uint8Array(8), ...file.subarray(cut)]);
    assert.deepEqual(asKlist(parseKeytab(holed)), asKlist(v2));
    const ended = new Uint8Array([...file.subarray(0, cut), 0, 0, 0, 0, 0xde, 0xad]);
    assert.equal(parseKeytab(ended).entries.length, 1);
    assert.deepEqual(parseKeytab(Uint8Array.of(5, 2)).entries, []);
  });
  it("refuses other formats and impossible records with offsets", () => {
    typedFailure(() => parseKeytab(Uint8Array.of(5, 4, 0, 0)), KeytabError, /unknown format 0x0504 .*is this a keytab\?\) at offset 0/);
    typedFailure(() => parseKeytab(Uint8Array.of(5)), KeytabError, /too short/);
    typedFailure(() => parseKeytab(Uint8Array.of(5, 2, 0, 0, 1, 0)), KeytabError, /record of 256 bytes runs past the end of the file \(0 bytes left\) at offset 2/);
    typedFailure(() => parseKeytab(Uint8Array.of(5, 2, 0xff, 0xff, 0xff, 0x00)), KeytabError, /hole of 256 bytes runs past the end/);
    typedFailure(() => parseKeytab(Uint8Array.of(5, 2, 0, 0)), KeytabError, /truncated record length/);
    // A record whose principal claims more than the record holds.
    typedFailure(() => parseKeytab(Uint8Array.of(5, 2, 0, 0, 0, 7, 0, 1, 0, 9, 0x41, 0x41, 0xff, 0, 0)), KeytabError, /truncated: realm needs 9 bytes, 3 remain at offset 10/);
  });
});

describe("ccache: a FILE cache written by MIT kinit and kvno", () => {
  const cc = parseCcache(bytesOf("alice.ccache"));
  const listing = textOf("alice.ccache.klist");
  it("header, default principal and configuration entries", () => {
    assert.equal(cc.version, 4);
    assert.deepEqual(cc.header.map((f) => f.tag), [1]);
    assert.deepEqual(cc.kdcOffset, { seconds: 0, microseconds: 0 });
    assert.equal(principalToString(cc.defaultPrincipal), /Default principal: (\S+)/.exec(listing)?.[1]);
    const conf = [...listing.matchAll(/^config: (\w+)\((\S+)\) = (.*)$/gm)].map((m) => [m[1], m[2], m[3]]);
    assert.deepEqual(cc.config.map((c) => [c.key, c.principal, new TextDecoder().decode(c.value)]), conf);
    assert.deepEqual(conf.map((c) => c[0]), ["fast_avail", "pa_type"]);
  });
  it("each credential as klist -e -f lists it (times, service, flags, session key and ticket enctypes)", () => {
    const re = /^(\S+ \S+)  (\S+ \S+)  (\S+)\n\trenew until (\S+ \S+), Flags: (\w+)\n\tEtype \(skey, tkt\): (\S+), (\S+) $/gm;
    const want = [...listing.matchAll(re)].map((m) => ({ start: m[1], end: m[2], server: m[3], renew: m[4], flags: m[5], skey: m[6], tkt: m[7] }));
    assert.equal(want.length, 5);
    const got = cc.credentials.map((c) => ({
      start: klistTime(c.startTime || c.authTime),
      end: klistTime(c.endTime),
      server: principalToString(c.server),
      renew: klistTime(c.renewTill),
      flags: ticketFlagLetters(c.flags),
      skey: enctype(c.key.enctype).name,
      tkt: enctype(decodeTicket(c.ticket).encPart.etype).name,
    }));
    assert.deepEqual(got, want);
    for (const c of cc.credentials) {
      assert.equal(principalToString(c.client), "alice@ZKTS.TEST");
      assert.equal(c.isSkey, false);
      assert.deepEqual([c.addresses.length, c.authData.length, c.secondTicket.length], [0, 0, 0]);
    }
  });
  it("every ticket decrypts with its service key (all four enctypes) and holds the ccache's session key and times", () => {
    const services = parseKeytab(bytesOf("services.keytab"));
    const seen = new Set<number>();
    for (const c of cc.credentials) {
      const t = decodeTicket(c.ticket);
      assert.equal(principalToString({ nameType: t.sname.nameType, components: t.sname.components, realm: t.realm }), principalToString(c.server));
      const [entry] = keysFor(services, c.server, { kvno: t.encPart.kvno, enctypes: [t.encPart.etype] });
      assert.ok(entry, `no key for ${principalToString(c.server)}`);
      const et = enctype(t.encPart.etype);
      seen.add(et.id);
      const part = decodeEncTicketPart(et.decrypt(entry.key.key, 2, t.encPart.cipher));
      assert.equal(hex(part.key.key), hex(c.key.key));
      assert.equal(part.key.enctype, c.key.enctype);
      assert.equal(part.flags, c.flags);
      assert.equal(principalToString(part.client), "alice@ZKTS.TEST");
      assert.equal(part.authTime.getTime() / 1000, c.authTime);
      assert.equal(part.endTime.getTime() / 1000, c.endTime);
      assert.equal((part.renewTill?.getTime() ?? 0) / 1000, c.renewTill);
      // With the wrong key or the wrong key usage, the integrity check refuses it.
      let caught: unknown;
      try {
        et.decrypt(entry.key.key, 3, t.encPart.cipher);
      } catch (e) {
        caught = e;
      }
      assert.ok(caught instanceof KrbCryptoError && caught.reason === KrbCryptoErrorReason.Integrity);
    }
    assert.deepEqual([...seen].sort(), [17, 18, 19, 20]);
  });
  it("defaultCcachePath: KRB5CCNAME as FILE: or a plain path, else /tmp/krb5cc_<uid>; other types refused", () => {
    assert.equal(defaultCcachePath({ KRB5CCNAME: "FILE:/tmp/x" }), "/tmp/x");
    assert.equal(defaultCcachePath({ KRB5CCNAME: "/tmp/y" }), "/tmp/y");
    assert.equal(defaultCcachePath({}, 1000), "/tmp/krb5cc_1000");
    typedFailure(() => defaultCcachePath({ KRB5CCNAME: "KEYRING:persistent:1000" }), CcacheError, /KEYRING: cache; only FILE: caches/);
    typedFailure(() => loadCcache("/nonexistent/cc"), CcacheError, /cannot read \/nonexistent\/cc \(ENOENT\); run kinit/);
    assert.equal(loadCcache(`FILE:${fixture("alice.ccache").pathname}`).credentials.length, 5);
  });
  it("krb5.conf default_ccache_name is the default ccache (%{uid} expanded); KEYRING:/KCM: names say to use KRB5CCNAME=FILE:", () => {
    const dir = mkdtempSync(join(tmpdir(), "zkts-ccname-"));
    try {
      const uid = typeof process.getuid === "function" ? process.getuid() : 0;
      // Construction reads the files only; no KDC is asked.
      const offline = { dial: () => Promise.reject(new Error("offline")), udp: () => Promise.reject(new Error("offline")) };
      copyFileSync(fixture("alice.ccache"), join(dir, `cc_${uid}`));
      const conf = (name: string): string => {
        const path = join(dir, "krb5.conf");
        writeFileSync(path, `[libdefaults]\n  default_realm = EXAMPLE.COM\n  default_ccache_name = ${name}\n`);
        return path;
      };
      assert.equal(defaultCcachePath({}, 1000, "FILE:%{TEMP}/krb5cc_%{uid}"), "/tmp/krb5cc_1000");
      assert.equal(defaultCcachePath({ KRB5CCNAME: "FILE:/tmp/x" }, 1000, "FILE:/elsewhere"), "/tmp/x"); // $KRB5CCNAME first
      const login = new KerberosLogin({ krb5Config: conf(`FILE:${dir}/cc_%{uid}`), env: {}, ...offline });
      assert.equal(principalToString(login.principal), principalToString(loadCcache(fixture("alice.ccache").pathname).defaultPrincipal));
      typedFailure(() => new KerberosLogin({ krb5Config: conf("KEYRING:persistent:%{uid}"), env: {}, ...offline }), CcacheError, /krb5\.conf default_ccache_name names a KEYRING: cache; only FILE: caches can be read \(run kinit -c FILE:\/path and set KRB5CCNAME=FILE:\/path/);
      typedFailure(() => new KerberosLogin({ krb5Config: conf("FILE:/tmp/%{nosuch}"), env: {}, ...offline }), CcacheError, /cannot expand %\{nosuch\}; set KRB5CCNAME=FILE:/);
      typedFailure(() => new KerberosLogin({ krb5Config: conf("FILE:/x"), ccache: "KCM:1000", env: {}, ...offline }), CcacheError, /the ccache option names a KCM: cache; only FILE: caches/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("refuses other formats with offsets", () => {
    typedFailure(() => parseCcache(Uint8Array.of(5, 2, 0, 0)), CcacheError, /format 0x0502 \(native byte order.*not supported; run kinit again at offset 0/);
    typedFailure(() => parseCcache(Uint8Array.of(5, 2 + 7)), CcacheError, /unknown format 0x0509/);
    typedFailure(() => parseCcache(Uint8Array.of(5, 4, 0, 12, 0, 1, 0, 8, 0, 0)), CcacheError, /truncated: header needs 12 bytes, 6 remain at offset 4/);
    typedFailure(() => parseCcache(Uint8Array.of(5, 4, 0, 6, 0, 1, 0, 2, 0, 0)), CcacheError, /time offset field of 2 bytes/);
    typedFailure(() => parseCcache(Uint8Array.of(5, 4, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0)), CcacheError, /default principal has 256 components/);
  });
});

// --- truncation and corruption ---

const FILES: Array<[string, (b: Uint8Array) => unknown, new (...a: never[]) => Error]> = [
  ["alice.keytab", (b) => parseKeytab(b), KeytabError],
  ["services.keytab", (b) => parseKeytab(b), KeytabError],
  ["alice.ccache", (b) => parseCcache(b), CcacheError],
];

function onlyTyped(parse: (b: Uint8Array) => unknown, type: new (...a: never[]) => Error, b: Uint8Array): "ok" | "error" {
  try {
    parse(b);
    return "ok";
  } catch (e) {
    if (!(e instanceof type)) throw e;
    const off = (e as unknown as { offset: number }).offset;
    assert.ok(Number.isInteger(off) && off >= 0 && off <= b.length, `offset ${off} outside the input (${b.length} bytes)`);
    return "error";
  }
}

describe("keytab and ccache: truncated and corrupted files", () => {
  for (const [name, parse, type] of FILES) {
    it(`${name}: every truncation parses to fewer entries or fails with ${type.name}`, () => {
      const b = bytesOf(name);
      let errors = 0;
      for (let n = 0; n < b.length; n++) if (onlyTyped(parse, type, b.subarray(0, n)) === "error") errors++;
      assert.ok(errors > b.length * 0.9, `${errors} of ${b.length} truncations failed`);
    });
    it(`${name}: ${RUNS} random corruptions give a result or ${type.name}, quickly`, () => {
      const b = bytesOf(name);
      fc.assert(
        fc.property(
          fc.array(fc.record({ at: fc.nat({ max: b.length - 1 }), v: fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0x00, 0x7f, 0x80, 0xff)) }), { minLength: 1, maxLength: 8 }),
          (edits) => {
            const m = b.slice();
            for (const { at, v } of edits) m[at] = v;
            const t0 = Date.now();
            onlyTyped(parse, type, m);
            assert.ok(Date.now() - t0 < 2000);
          },
        ),
        { numRuns: RUNS },
      );
    }, 120_000);
  }
  it("random bytes after a valid magic give a result or a typed error", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.uint8Array({ maxLength: 200 }), (kt, rest) => {
        const b = new Uint8Array([5, kt ? 2 : 4, ...rest]);
        if (kt) onlyTyped(parseKeytab, KeytabError, b);
        else onlyTyped(parseCcache, CcacheError, b);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
