import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Buffer } from "node:buffer";
import { digestMd5, parseDigestChallenge, redactSaslText, SaslError, SaslErrorReason } from "../../src/client/sasl/index.ts";
import type { DigestMd5Options, SaslMechanism } from "../../src/client/sasl/index.ts";
import { probeSession, saslExchange, startSaslServer, type SaslServer } from "../support/secure/secure-server.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | null): string => Buffer.from(b ?? new Uint8Array(0)).toString("latin1");

// The challenge ZooKeeper 3.8.0 actually sends (captured on the wire: realm, a 40-character nonce, no
// qop, which means `auth`), with a fixed nonce.
const ZK_CHALLENGE = 'realm="zk-sasl-md5",nonce="BziVkmfG+L7mFcboOzB9dz3PLQ6it2X1zAgAqjXJ",charset=utf-8,algorithm=md5-sess';
const PASSWORD = "s3cr3t-Pa55word";

function respond(challenge: string, opts: Partial<DigestMd5Options> = {}): string {
  const m = digestMd5({ username: "alice", password: PASSWORD, cnonce: () => "fixedcnonce", ...opts });
  return text(m.step(enc(challenge)));
}

function directive(response: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|,)${name}=("(?:[^"\\\\]|\\\\.)*"|[^,]*)`).exec(response);
  return m?.[1];
}

function saslFailure(fn: () => unknown, reason: string): SaslError {
  let caught: unknown;
  try { fn(); } catch (e) { caught = e; }
  assert.ok(caught instanceof SaslError, `expected SaslError, got ${String(caught)}`);
  assert.equal(caught.reason, reason, caught.message);
  return caught;
}

describe("DIGEST-MD5: RFC 2831 §4 example", () => {
  const opts = { username: "chris", password: "secret", protocol: "imap", serverName: "elwood.innosoft.com", cnonce: () => "OA6MHXh6VqTrRk" };
  const challenge = 'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8';

  it("produces the RFC's response and accepts its rspauth", () => {
    const m = digestMd5(opts);
    assert.equal(m.name, "DIGEST-MD5");
    assert.equal(m.initial().length, 0);
    assert.equal(m.complete, false);
    assert.equal(
      text(m.step(enc(challenge))),
      'charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",nc=00000001,' +
        'cnonce="OA6MHXh6VqTrRk",digest-uri="imap/elwood.innosoft.com",response=d388dad90d4bbd760a152321f2143af7,qop=auth',
    );
    assert.equal(m.complete, false);
    assert.equal(m.step(enc("rspauth=ea40f60335c427b5527b84dbabcdfffd")), null);
    assert.equal(m.complete, true);
    saslFailure(() => m.step(enc("rspauth=ea40f60335c427b5527b84dbabcdfffd")), SaslErrorReason.State);
  });

  it("rejects a wrong rspauth and stays incomplete", () => {
    const m = digestMd5(opts);
    m.step(enc(challenge));
    const e = saslFailure(() => m.step(enc("rspauth=ea40f60335c427b5527b84dbabcdfffe")), SaslErrorReason.ServerAuthFailed);
    assert.doesNotMatch(e.message, /ea40f603/);
    assert.equal(m.complete, false);
    saslFailure(() => m.step(enc("rspauth=ea40f60335c427b5527b84dbabcdfffd")), SaslErrorReason.State);
  });

  it("rejects a final message without exactly one rspauth", () => {
    for (const final of ["", "foo=bar", "rspauth=ea40f60335c427b5527b84dbabcdfffd,rspauth=ea40f60335c427b5527b84dbabcdfffd", "rspauth=ea40"]) {
      const m = digestMd5(opts);
      m.step(enc(challenge));
      saslFailure(() => m.step(enc(final)), SaslErrorReason.ServerAuthFailed);
    }
  });
});

describe("DIGEST-MD5: ZooKeeper defaults", () => {
  it("uses digest-uri zookeeper/zk-sasl-md5, qop=auth, nc=00000001 and echoes realm and nonce", () => {
    const r = respond(ZK_CHALLENGE);
    assert.equal(directive(r, "digest-uri"), '"zookeeper/zk-sasl-md5"');
    assert.equal(directive(r, "qop"), "auth");
    assert.equal(directive(r, "nc"), "00000001");
    assert.equal(directive(r, "realm"), '"zk-sasl-md5"');
    assert.equal(directive(r, "nonce"), '"BziVkmfG+L7mFcboOzB9dz3PLQ6it2X1zAgAqjXJ"');
    assert.equal(directive(r, "charset"), "utf-8");
    assert.match(directive(r, "response") ?? "", /^[0-9a-f]{32}$/);
    assert.equal(directive(r, "authzid"), undefined);
  });

  it("sends charset only when the server offered it", () => {
    assert.equal(directive(respond('realm="r",nonce="n",algorithm=md5-sess'), "charset"), undefined);
  });

  it("draws a fresh 128-bit cnonce per exchange", () => {
    const a = directive(text(digestMd5({ username: "a", password: "p" }).step(enc(ZK_CHALLENGE))), "cnonce");
    const b = directive(text(digestMd5({ username: "a", password: "p" }).step(enc(ZK_CHALLENGE))), "cnonce");
    assert.match(a ?? "", /^"[0-9a-f]{32}"$/);
    assert.notEqual(a, b);
  });

  it("sends authzid when asked and it changes the digest", () => {
    const withId = respond(ZK_CHALLENGE, { authzid: "bob" });
    assert.equal(directive(withId, "authzid"), '"bob"');
    assert.notEqual(directive(withId, "response"), directive(respond(ZK_CHALLENGE), "response"));
  });
});

describe("DIGEST-MD5: challenge parsing", () => {
  it("takes the first of several realms unless one is configured", () => {
    const c = 'realm="one",realm="two",nonce="n",algorithm=md5-sess';
    assert.deepEqual(parseDigestChallenge(enc(c)).realms, ["one", "two"]);
    assert.equal(directive(respond(c), "realm"), '"one"');
    assert.equal(directive(respond(c, { realm: "two" }), "realm"), '"two"');
  });

  it("omits realm when none is offered", () => {
    assert.equal(directive(respond('nonce="n",algorithm=md5-sess'), "realm"), undefined);
  });

  it("unescapes quoted strings and re-escapes them in the response", () => {
    const c = 'realm="a\\"b\\\\c\\d",nonce="x\\"y",algorithm=md5-sess';
    const p = parseDigestChallenge(enc(c));
    assert.deepEqual(p.realms, ['a"b\\cd']);
    assert.equal(p.nonce, 'x"y');
    const r = respond(c);
    assert.equal(directive(r, "realm"), '"a\\"b\\\\cd"');
    assert.equal(directive(r, "nonce"), '"x\\"y"');
  });

  it("accepts whitespace, empty list elements, any case of names, and unknown directives", () => {
    const c = ' ,, Realm = "r" ,\t NONCE="n",,foo=bar, x-ext="a,b" ,Algorithm=MD5-SESS , QOP="auth-int, auth" , ';
    const p = parseDigestChallenge(enc(c));
    assert.deepEqual(p, { realms: ["r"], nonce: "n", qop: ["auth-int", "auth"], utf8: false, algorithm: "MD5-SESS" });
    assert.equal(directive(respond(c), "qop"), "auth");
  });

  it("decodes a UTF-8 realm when charset=utf-8", () => {
    const p = parseDigestChallenge(enc('realm="zürich",nonce="n",charset=UTF-8,algorithm=md5-sess'));
    assert.deepEqual(p.realms, ["zürich"]);
    assert.equal(p.utf8, true);
  });

  const bad: Array<[string, string, string]> = [
    ["", SaslErrorReason.BadChallenge, "empty (a server without a JAAS Server section)"],
    ['realm="r",algorithm=md5-sess', SaslErrorReason.BadChallenge, "no nonce"],
    ['nonce="",algorithm=md5-sess', SaslErrorReason.BadChallenge, "empty nonce"],
    ['nonce="a",nonce="b",algorithm=md5-sess', SaslErrorReason.BadChallenge, "two nonces"],
    ['nonce="a"', SaslErrorReason.BadChallenge, "no algorithm"],
    ['nonce="a",algorithm=md5', SaslErrorReason.Unsupported, "algorithm md5"],
    ['nonce="a",algorithm=md5-sess,algorithm=md5-sess', SaslErrorReason.BadChallenge, "two algorithms"],
    ['nonce="a",algorithm=md5-sess,charset=iso-8859-1', SaslErrorReason.BadChallenge, "other charset"],
    ['nonce="a",algorithm=md5-sess,qop="auth-int,auth-conf"', SaslErrorReason.Unsupported, "no qop=auth"],
    ['nonce="a",qop="auth",qop="auth",algorithm=md5-sess', SaslErrorReason.BadChallenge, "two qops"],
    ['nonce="abc,algorithm=md5-sess', SaslErrorReason.BadChallenge, "unterminated quote"],
    ['nonce="a" algorithm=md5-sess', SaslErrorReason.BadChallenge, "missing comma"],
    ['nonce, algorithm=md5-sess', SaslErrorReason.BadChallenge, "missing ="],
    ["rspauth=0123456789abcdef0123456789abcdef", SaslErrorReason.BadChallenge, "rspauth first"],
    [`nonce="${"n".repeat(2048)}",algorithm=md5-sess`, SaslErrorReason.BadChallenge, "2048 bytes or more"],
    ['realm="\u00ff\u00fe",nonce="a",charset=utf-8,algorithm=md5-sess', SaslErrorReason.BadChallenge, "invalid UTF-8"],
  ];
  for (const [challenge, reason, label] of bad) {
    it(`rejects a challenge with ${label}`, () => {
      // latin1 keeps invalid UTF-8 octets as they are
      const m = digestMd5({ username: "alice", password: PASSWORD });
      saslFailure(() => m.step(new Uint8Array(Buffer.from(challenge, "latin1"))), reason);
      saslFailure(() => m.step(enc(ZK_CHALLENGE)), SaslErrorReason.State);
    });
  }

  it("refuses names outside ISO-8859-1 when the server did not offer utf-8", () => {
    const m = digestMd5({ username: "用户", password: PASSWORD });
    saslFailure(() => m.step(enc('nonce="a",algorithm=md5-sess')), SaslErrorReason.Encoding);
  });
});

describe("DIGEST-MD5: secrets stay out of errors", () => {
  it("no error message or stack contains the password or the response digest", () => {
    const cases: Array<[string, (m: SaslMechanism) => void]> = [
      [SaslErrorReason.BadChallenge, (m) => m.step(enc(""))],
      [SaslErrorReason.Unsupported, (m) => m.step(enc('nonce="a",algorithm=md5'))],
      [SaslErrorReason.ServerAuthFailed, (m) => { m.step(enc(ZK_CHALLENGE)); m.step(enc("rspauth=00000000000000000000000000000000")); }],
      [SaslErrorReason.ServerAuthFailed, (m) => { m.step(enc(ZK_CHALLENGE)); m.step(enc("nope=1")); }],
      [SaslErrorReason.BadChallenge, (m) => { m.step(enc(ZK_CHALLENGE)); m.step(enc('rspauth="')); }],
      [SaslErrorReason.State, (m) => { m.step(enc(ZK_CHALLENGE)); m.step(enc("rspauth=0")); }],
    ];
    const digest = directive(respond(ZK_CHALLENGE), "response") ?? "";
    assert.match(digest, /^[0-9a-f]{32}$/);
    for (const [reason, run] of cases) {
      const m = digestMd5({ username: "alice", password: PASSWORD, cnonce: () => "fixedcnonce" });
      // the State case: a second failing step after the first one failed
      const e = saslFailure(() => (reason === SaslErrorReason.State ? (() => { try { run(m); } catch { /* first failure */ } m.step(enc("x=1")); })() : run(m)), reason);
      for (const s of [e.message, String(e.stack), JSON.stringify(e)]) {
        assert.ok(!s.includes(PASSWORD), s);
        assert.ok(!s.includes(digest), s);
      }
    }
  });

  it("redactSaslText hides response and rspauth values", () => {
    const r = respond(ZK_CHALLENGE);
    const red = redactSaslText(r);
    assert.ok(!red.includes(directive(r, "response") ?? "?"));
    assert.match(red, /response=<redacted>,qop=auth$/);
    assert.match(red, /username="alice"/);
    assert.equal(redactSaslText('rspauth="abc",x=1'), "rspauth=<redacted>,x=1");
  });
});

// --- Interop with the JDK's DIGEST-MD5 server, which is what ZooKeeper's server runs. ---

// The cast: Deno type-checks with this repo's tsconfig libs, whose ImportMeta lacks `url`.
const PROBE = fileURLToPath(new URL("../support/secure/java/SaslServerProbe.java", (import.meta as { url?: string }).url));
let probeClasses = "";
const hex = (s: string): string => Buffer.from(s, "utf8").toString("hex");

interface ProbeResult { challenge: string; authorized?: string; serverError?: string; clientError?: unknown; complete: boolean }

function jdkExchange(user: string, password: string, mech: SaslMechanism, qop = ""): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn("java", ["-cp", probeClasses, "SaslServerProbe", hex(user), hex(password), qop], { stdio: ["pipe", "pipe", "inherit"] });
    const result: ProbeResult = { challenge: "", complete: false };
    let buf = "";
    const send = (token: Uint8Array | null): void => { child.stdin.end(`${Buffer.from(token ?? []).toString("hex")}\n`); };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        const [kind, ...rest] = line.split(" ");
        const arg = rest.join(" ");
        try {
          if (kind === "CHALLENGE") {
            result.challenge = Buffer.from(arg, "hex").toString("latin1");
            send(mech.step(new Uint8Array(Buffer.from(arg, "hex"))));
          } else if (kind === "FINAL") {
            assert.equal(mech.step(new Uint8Array(Buffer.from(arg, "hex"))), null);
          } else if (kind === "AUTHORIZED") result.authorized = arg;
          else if (kind === "ERROR") result.serverError = arg;
        } catch (e) {
          result.clientError = e;
          if (kind === "CHALLENGE") send(null);
        }
      }
    });
    child.on("error", reject);
    child.on("close", () => { result.complete = mech.complete; resolve(result); });
  });
}

describe("DIGEST-MD5 against the JDK's SASL server", () => {
  // Compiled once: `java File.java` would recompile for every exchange.
  beforeAll(() => {
    probeClasses = mkdtempSync(join(tmpdir(), "zk-ts-probe-"));
    execFileSync("javac", ["-d", probeClasses, PROBE]);
  }, 60_000);
  afterAll(() => { if (probeClasses) rmSync(probeClasses, { recursive: true, force: true }); });

  it("authenticates, and verifies the server's rspauth", async () => {
    const r = await jdkExchange("alice", "secret", digestMd5({ username: "alice", password: "secret" }));
    assert.match(r.challenge, /^realm="zk-sasl-md5",nonce="[^"]+",charset=utf-8,algorithm=md5-sess$/);
    assert.equal(r.serverError, undefined);
    assert.equal(r.clientError, undefined);
    assert.equal(r.authorized, "alice");
    assert.equal(r.complete, true);
  }, 20_000);

  it("is refused by the server with a wrong password", async () => {
    const r = await jdkExchange("alice", "secret", digestMd5({ username: "alice", password: "wrong" }));
    assert.match(r.serverError ?? "", /Mismatched response/);
    assert.equal(r.complete, false);
  }, 20_000);

  it("hashes non-ASCII names and passwords as the JDK does (ISO-8859-1 when possible, else UTF-8)", async () => {
    for (const [user, password] of [["jürgen", "pässwörd"], ["用户", "密码-ü"]]) {
      const r = await jdkExchange(user, password, digestMd5({ username: user, password }));
      assert.equal(r.serverError, undefined, `${user}: ${r.serverError}`);
      assert.equal(r.authorized, user);
      assert.equal(r.complete, true);
    }
  }, 30_000);

  it("picks auth from a server offering auth-int and auth, and passes authzid through", async () => {
    const r = await jdkExchange("alice", "secret", digestMd5({ username: "alice", password: "secret", authzid: "bob" }), "auth-int,auth");
    assert.match(r.challenge, /qop="auth-int,auth"/);
    assert.equal(r.serverError, undefined);
    assert.equal(r.authorized, "bob");
    assert.equal(r.complete, true);
  }, 20_000);

  it("refuses a server that offers only auth-conf", async () => {
    const r = await jdkExchange("alice", "secret", digestMd5({ username: "alice", password: "secret" }), "auth-conf");
    assert.ok(r.clientError instanceof SaslError);
    assert.equal(r.clientError.reason, SaslErrorReason.Unsupported);
    assert.equal(r.complete, false);
  }, 20_000);
});

// --- The same against a real ZooKeeper 3.8.0 server that requires SASL, by hand over node:net. ---

describe("DIGEST-MD5 against a real ZooKeeper server (sessionRequireClientSASLAuth=true)", () => {
  const users = { alice: "alice-secret", bob: 'q"uo\\te', carol: "pässwörd-密码" };
  let zk: SaslServer;
  beforeAll(async () => { zk = await startSaslServer({ users }); }, 60_000);
  afterAll(async () => { await zk?.close(); }, 30_000);

  it("authenticates: ZooKeeper's challenge, our response, its rspauth, and identity sasl:alice", async () => {
    const s = await probeSession(zk.server.clientPort);
    try {
      const mech = digestMd5({ username: "alice", password: "alice-secret" });
      const t = await saslExchange(s, mech);
      assert.equal(t.err, 0);
      assert.equal(t.clientTokens[0], "");
      assert.match(t.serverTokens[0], /^realm="zk-sasl-md5",nonce="[^"]{20,}",charset=utf-8,algorithm=md5-sess$/);
      assert.match(t.serverTokens[1], /^rspauth=[0-9a-f]{32}$/);
      assert.equal(t.serverTokens.length, 2);
      assert.equal(mech.complete, true);
      const who = await s.whoAmI();
      assert.ok(Array.isArray(who), JSON.stringify(who));
      assert.deepEqual(who.filter((i) => i.scheme === "sasl"), [{ scheme: "sasl", id: "alice" }]);
    } finally {
      s.end();
    }
  }, 20_000);

  it("authenticates passwords with quotes, backslashes and non-ASCII", async () => {
    for (const user of ["bob", "carol"] as const) {
      const s = await probeSession(zk.server.clientPort);
      try {
        const t = await saslExchange(s, digestMd5({ username: user, password: users[user] }));
        assert.equal(t.err, 0, user);
        assert.equal(t.complete, true, user);
      } finally {
        s.end();
      }
    }
  }, 20_000);

  it("a wrong password gets SESSIONCLOSEDREQUIRESASLAUTH (-124), then the server closes", async () => {
    const s = await probeSession(zk.server.clientPort);
    try {
      const t = await saslExchange(s, digestMd5({ username: "alice", password: "wrong" }));
      assert.equal(t.err, -124);
      assert.equal(t.complete, false);
      await s.closed();
    } finally {
      s.end();
    }
  }, 20_000);
});
