// ConnectOptions.sasl with mechanism "GSSAPI" as the session sees it (sasl-exchange.ts saslFactory): the
// options checked (BADARGUMENTS), the KDC's TCP dial through the session's dialer, an unreachable KDC as a
// plain Error (the attempt failed: tried again, named by the connect timeout's message) and a login that
// cannot work as SaslRefused (AUTHFAILED). No KDC here: the real one is in test/integration/secure-kerberos.test.ts.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "../support/bdd.ts";
import { ErrorCode, ZooKeeperError } from "../../src/index.ts";
import type { HostPort } from "../../src/protocol/connect-string.ts";
import { systemClock, wallTime } from "../../src/client/clock.ts";
import { SaslRefused, saslFactory, type SaslContext } from "../../src/client/sasl/exchange.ts";
import { addressTurns, canonicalHost, systemResolver } from "../../src/client/sasl/gssapi.ts";
import type { Dialer } from "../../src/client/transport/transport.ts";
import { KerberosError, KerberosErrorReason } from "../../src/kerberos/errors.ts";
import type { KerberosResolver, SaslGssapiOptions, SaslOptions } from "../../src/client/types.ts";

// A keytab of one aes256 key for alice@EXAMPLE.TEST (format 0x502), made by hand: the KDC is never reached anyway.
const keytab = ((): Uint8Array => {
  const name = (x: string): number[] => [0, x.length, ...new TextEncoder().encode(x)];
  const body = [0, 1, ...name("EXAMPLE.TEST"), ...name("alice"), 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 18, 0, 32, ...new Array<number>(32).fill(7)];
  return new Uint8Array([5, 2, 0, 0, 0, body.length, ...body]);
})();

describe("saslFactory: GSSAPI", () => {
  let dir: string;
  let conf: string;
  const dialed: HostPort[] = [];
  const refusing: Dialer = (target) => {
    dialed.push(target);
    return Promise.reject(Object.assign(new Error(`connect ECONNREFUSED ${target.host}:${target.port}`), { code: "ECONNREFUSED" }));
  };
  const ctx: SaslContext = { dialer: refusing, clock: systemClock, connectTimeout: 2000 };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "zkts-gssapi-factory-"));
    conf = join(dir, "krb5.conf");
    writeFileSync(conf, "[libdefaults]\n  default_realm = EXAMPLE.TEST\n[realms]\n  EXAMPLE.TEST = {\n    kdc = tcp/127.0.0.1:1\n  }\n[domain_realm]\n  localhost = EXAMPLE.TEST\n");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("checks the options: an unknown mechanism, empty strings, a keytab that is neither a path nor bytes", () => {
    const bad = (o: unknown, pattern: RegExp): void => {
      assert.throws(() => saslFactory(o as SaslOptions, ctx), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.BADARGUMENTS && pattern.test(e.message));
    };
    bad({ mechanism: "PLAIN" }, /unsupported SASL mechanism "PLAIN" \(DIGEST-MD5 and GSSAPI/);
    bad({ mechanism: "GSSAPI", serviceName: "" }, /sasl\.serviceName/);
    bad({ mechanism: "GSSAPI", serviceHost: 7 }, /sasl\.serviceHost/);
    bad({ mechanism: "GSSAPI", keytab: 42 }, /sasl\.keytab/);
    bad({ mechanism: "GSSAPI", serverPrincipal: "" }, /sasl\.serverPrincipal/);
    bad({ mechanism: "GSSAPI", serverRealm: 1 }, /sasl\.serverRealm/);
    bad({ mechanism: "GSSAPI", canonicalizeHostname: "no" }, /sasl\.canonicalizeHostname must be a boolean/);
    bad({ mechanism: "GSSAPI", resolver: "dns" }, /sasl\.resolver must be an object/);
    bad({ mechanism: "DIGEST-MD5", username: "a" }, /username and a password/);
  });

  it("a keytab that cannot be read is a refused login (SaslRefused) naming the file", async () => {
    const make = saslFactory({ mechanism: "GSSAPI", keytab: join(dir, "missing.keytab"), principal: "alice", krb5Config: conf }, ctx);
    await assert.rejects(Promise.resolve().then(() => make({ host: "localhost", port: 2181 })), (e: unknown) => e instanceof SaslRefused && /missing\.keytab/.test(e.message));
  });

  it("the KDC is dialled through the session's dialer; unreachable, it is a failed attempt naming host:port", async () => {
    dialed.length = 0;
    const make = saslFactory({ mechanism: "GSSAPI", keytab, krb5Config: conf }, ctx);
    const e = await Promise.resolve()
      .then(() => make({ host: "localhost", port: 2181 }))
      .then(() => null, (err: unknown) => err);
    assert.ok(e instanceof Error && !(e instanceof SaslRefused), `expected a plain Error, got ${String(e)}`);
    assert.match(e.message, /alice@EXAMPLE\.TEST for zookeeper\/localhost@EXAMPLE\.TEST/);
    assert.match(e.message, /127\.0\.0\.1:1 tcp: .*ECONNREFUSED/);
    assert.deepEqual(dialed, [{ host: "127.0.0.1", port: 1 }]);
  });

  it("each server its own principal: canonicalized through the resolver (forward-confirmed), _HOST, serverRealm", async () => {
    const forward: Record<string, string[]> = { "zk1.example.test": ["10.0.0.1"], "zk1-real.example.test": ["10.0.0.1"], "zk2.example.test": ["10.0.0.9"], "zk1-real": ["10.0.0.1"] };
    const back: Record<string, string> = { "10.0.0.1": "ZK1-Real.Example.Test.", "10.0.0.2": "zk2.example.test" };
    const resolver: KerberosResolver = {
      lookup: async (h) => forward[h.toLowerCase()] ?? Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${h}`), { code: "ENOTFOUND" })),
      reverse: async (a) => back[a] ?? Promise.reject(Object.assign(new Error(`getnameinfo ENOTFOUND ${a}`), { code: "ENOTFOUND" })),
    };
    const tried = async (o: Partial<SaslGssapiOptions>, host: string): Promise<string> => {
      const make = saslFactory({ mechanism: "GSSAPI", keytab, krb5Config: conf, resolver, ...o }, ctx);
      const e = await Promise.resolve().then(() => make({ host, port: 2181 })).then(() => null, (err: unknown) => err);
      assert.ok(e instanceof Error);
      return /for (\S+) failed/.exec(e.message)?.[1] ?? e.message;
    };
    // One factory (one login) for an ensemble: each connection's own host.
    const make = saslFactory({ mechanism: "GSSAPI", keytab, krb5Config: conf, resolver }, ctx);
    const each: string[] = [];
    for (const host of ["zk1.example.test", "10.0.0.2", "10.0.0.3"]) {
      const e = await Promise.resolve().then(() => make({ host, port: 2181 })).then(() => null, (err: unknown) => err);
      each.push(/for (\S+) failed/.exec((e as Error).message)?.[1] ?? String(e));
    }
    // zk1: its address's name (lower case, no final dot); 10.0.0.2: its name does not resolve back to it; 10.0.0.3: no name.
    assert.deepEqual(each, ["zookeeper/zk1-real.example.test@EXAMPLE.TEST", "zookeeper/10.0.0.2@EXAMPLE.TEST", "zookeeper/10.0.0.3@EXAMPLE.TEST"]);
    assert.equal(await tried({ canonicalizeHostname: false }, "zk1.example.test"), "zookeeper/zk1.example.test@EXAMPLE.TEST");
    // Off, a short name whose canonical name only lengthens it is expanded (as Java's Kerberos library does).
    assert.equal(await tried({ canonicalizeHostname: false }, "zk1-real"), "zookeeper/zk1-real.example.test@EXAMPLE.TEST");
    assert.equal(await tried({ serverPrincipal: "zk/_HOST@OTHER.TEST" }, "zk1.example.test"), "zk/zk1-real.example.test@OTHER.TEST");
    assert.equal(await tried({ serverPrincipal: "zk/_HOST", serverRealm: "THIRD.TEST" }, "zk1.example.test"), "zk/zk1-real.example.test@THIRD.TEST");
    assert.equal(await tried({ serverPrincipal: "zk/fixed.example.test" }, "zk1.example.test"), "zk/fixed.example.test@EXAMPLE.TEST");
    assert.equal(await tried({ serviceHost: "pinned.example.test", serviceName: "zoo" }, "zk1.example.test"), "zoo/pinned.example.test@EXAMPLE.TEST");
  });

  it("one name, several addresses: each attempt's principal is the name of the address that attempt dials", async () => {
    // zk.example.test has A records whose PTRs name different servers, each with its own principal (as an estate's
    // round-robin name does); 10.0.0.13's PTR fails: that attempt falls back to the name as written.
    const forward: Record<string, string[]> = {
      "zk.example.test": ["10.0.0.11", "10.0.0.12", "10.0.0.13"], "zk1.example.test": ["10.0.0.11"], "zk2.example.test": ["10.0.0.12"],
    };
    const back: Record<string, string> = { "10.0.0.11": "zk1.example.test.", "10.0.0.12": "ZK2.example.test" };
    const resolver = systemResolver({
      lookup: async (h) => forward[h.toLowerCase()] ?? Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${h}`), { code: "ENOTFOUND" })),
      reverse: async (a) => back[a] ?? Promise.reject(Object.assign(new Error(`getnameinfo ENOTFOUND ${a}`), { code: "ENOTFOUND" })),
    });
    const target = { host: "zk.example.test", port: 2181 };
    const expected: Record<string, string> = { "10.0.0.11": "zk1.example.test", "10.0.0.12": "zk2.example.test", "10.0.0.13": "zk.example.test" };
    // Three attempts with the client's picker (at random, but none twice before each has had its turn): each address
    // once, each named by its own PTR (the failing one by the host as written), twice round.
    const pick = addressTurns();
    for (let round = 0; round < 2; round++) {
      const each: Record<string, string> = {};
      for (let i = 0; i < 3; i++) {
        const found = await canonicalHost(target, resolver, undefined, { pick });
        assert.ok(found.address !== undefined && !(found.address in each), `round ${round}: ${found.address} dialed twice`);
        each[found.address] = found.name.toLowerCase();
      }
      assert.deepEqual(each, expected);
    }
    // The address dialed is the one named: a fixed pick of each in turn.
    for (const [address, name] of Object.entries(expected)) {
      assert.deepEqual(await canonicalHost(target, resolver, undefined, { pick: (_, all) => all.find((a) => a === address)! }), { name: name === "zk2.example.test" ? "ZK2.example.test" : name, address });
    }
    // With ConnectOptions.resolver the addresses are its own (the dial's); the PTR names are still checked forward.
    assert.deepEqual(await canonicalHost({ host: "other.example.test", port: 2181 }, resolver, undefined, { lookup: async () => ["", "10.0.0.11"] }), { name: "zk1.example.test", address: "10.0.0.11" });
    // Nothing pinned where the principal does not come from an address: an IP address (dialed as it is), a name that does not resolve.
    assert.deepEqual(await canonicalHost({ host: "10.0.0.12", port: 2181 }, resolver), { name: "ZK2.example.test" });
    assert.deepEqual(await canonicalHost({ host: "nowhere.example.test", port: 2181 }, resolver), { name: "nowhere.example.test" });
    assert.deepEqual(await canonicalHost(target, resolver, undefined, { lookup: async () => [] }), { name: "zk.example.test" });

    // addressTurns: per name; a name that moved counts only its current addresses.
    const turns = addressTurns(() => 0);
    assert.deepEqual([turns("a", ["1", "2"]), turns("b", ["1", "2"]), turns("a", ["1", "2"]), turns("a", ["1", "2"])], ["1", "1", "2", "1"]);
    assert.deepEqual([turns("a", ["3", "2"]), turns("a", ["3", "2"]), turns("a", ["3", "2"])], ["3", "2", "3"]);

    // Through the factory (one login, one picker for every attempt): the ticket asked for follows the attempt's
    // address, from sasl.resolver's lookup, and from ConnectOptions.resolver (the session's) when there is one.
    const principals = async (c: SaslContext): Promise<string[]> => {
      const make = saslFactory({ mechanism: "GSSAPI", keytab, krb5Config: conf, resolver: { lookup: resolver.lookup, reverse: resolver.reverse } }, c);
      const seen: string[] = [];
      for (let i = 0; i < 3; i++) {
        const e = await Promise.resolve().then(() => make(target)).then(() => null, (err: unknown) => err);
        seen.push(/for (\S+) failed/.exec((e as Error).message)?.[1] ?? String(e));
      }
      return seen.sort();
    };
    const all = ["zookeeper/zk.example.test@EXAMPLE.TEST", "zookeeper/zk1.example.test@EXAMPLE.TEST", "zookeeper/zk2.example.test@EXAMPLE.TEST"];
    assert.deepEqual(await principals(ctx), all);
    assert.deepEqual(await principals({ ...ctx, resolver: async () => ["10.0.0.13", "10.0.0.12", "10.0.0.11"] }), all);
  });

  it("wallTime: whole ms since the epoch that move with the clock", () => {
    let t = 1000.25;
    const now = wallTime({ now: () => t });
    const a = now();
    t += 1500.5;
    const b = now();
    assert.ok(Number.isInteger(a) && Number.isInteger(b));
    assert.ok(Math.abs(b - a - 1500) <= 1);
    assert.ok(Math.abs(a - new Date().getTime()) < 5000);
  });

  it("the default clock's wall time is the system's, read at each use: a step of the host's clock is seen at once", () => {
    const now = wallTime(systemClock);
    const real = Date.now;
    const step = 3_600_000;
    try {
      Date.now = () => real() + step; // what an NTP step or a resumed VM does to the system clock
      assert.ok(Math.abs(now() - (real() + step)) < 1000);
    } finally {
      Date.now = real;
    }
    assert.ok(Math.abs(now() - real()) < 1000);
  });

  it("KerberosError.transient: failures that may pass are retried, refusals are final", () => {
    const k = (reason: KerberosErrorReason, code?: number, transient?: boolean): boolean => new KerberosError(reason, "x", { code, transient }).transient;
    assert.equal(k(KerberosErrorReason.KdcUnreachable), true);
    assert.equal(k(KerberosErrorReason.ClockSkew, 37), true);
    assert.equal(k(KerberosErrorReason.KdcError, 29), true); // KDC_ERR_SVC_UNAVAILABLE
    assert.equal(k(KerberosErrorReason.KdcError, 60), true); // KRB_ERR_GENERIC
    assert.equal(k(KerberosErrorReason.Expired, 32), true); // KRB_AP_ERR_TKT_EXPIRED: a new TGT is fetched
    assert.equal(k(KerberosErrorReason.ClientUnknown, 6), false);
    assert.equal(k(KerberosErrorReason.ServiceUnknown, 7), false);
    assert.equal(k(KerberosErrorReason.BadKey, 24), false);
    assert.equal(k(KerberosErrorReason.KdcError, 18), false); // KDC_ERR_CLIENT_REVOKED
    assert.equal(k(KerberosErrorReason.NoKey), false);
    assert.equal(k(KerberosErrorReason.Config), false);
    assert.equal(k(KerberosErrorReason.BadReply), false);
    assert.equal(k(KerberosErrorReason.MutualAuthFailed), false);
    assert.equal(k(KerberosErrorReason.Expired), false); // a ccache without a TGT at the first login: run kinit
    assert.equal(k(KerberosErrorReason.Expired, undefined, true), true); // the same after a login: kinit is rewriting it
  });
});
