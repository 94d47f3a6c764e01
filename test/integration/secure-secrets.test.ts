// Credentials never leak: everything the client logs (every level, every argument), everything it
// prints to the console, and every error it raises (message, stack, cause chain, inspected fields)
// is collected while it authenticates, fails, reconnects and closes against real secure servers,
// then searched for the SASL password, the digest auth secret, the DIGEST-MD5 response digest and
// the TLS private key.
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure/secure-hooks.ts";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { ZooKeeper, type ConnectOptions, type Logger, type SessionState } from "../../src/index.ts";
import { startFaultProxy } from "../support/fakes/fault-proxy.ts";
import { clientTlsOptions } from "../support/secure/secure.ts";
import { startSaslServer, startTlsServer, type SaslServer, type TlsServer } from "../support/secure/secure-server.ts";

const SASL_PASSWORD = "sasl-Secret-7f3a";
const DIGEST_SECRET = "digest-Secret-91c2";
const BAD_SCHEME_SECRET = "bad-scheme-Secret-55e0";
const WRONG_PASSWORD = "wrong-Secret-0b6d";

let sasl: SaslServer;
let tls: TlsServer;
const seen: string[] = [];
/** Session passwords of the clients made here: secrets too (whoever reads one can take the session over). */
const sessionPasswords: Uint8Array[] = [];

/** A client in every form a user might print it: inspected to the bottom (hidden fields too), as JSON, as a string. */
function dump(zk: ZooKeeper): void {
  sessionPasswords.push(zk.sessionPassword.slice());
  seen.push(inspect(zk, { depth: Infinity, showHidden: true }), JSON.stringify(zk), String(zk), `${zk}`);
}

const show = (v: unknown): string => (typeof v === "string" ? v : inspect(v, { depth: 8, showHidden: true }));
const logger: Logger = {
  debug: (m, ...a) => void seen.push(show(m), ...a.map(show)),
  info: (m, ...a) => void seen.push(show(m), ...a.map(show)),
  warn: (m, ...a) => void seen.push(show(m), ...a.map(show)),
  error: (m, ...a) => void seen.push(show(m), ...a.map(show)),
};

/** An error in every form a user might print it. */
function record(e: unknown): void {
  seen.push(show(e), String(e));
  for (let c: unknown = e; c instanceof Error; c = c.cause) seen.push(c.message, c.stack ?? "");
}

async function capture<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    record(e);
    return undefined;
  }
}

// Whatever the client might print on its own goes to the console: collect that too.
const CONSOLE = ["log", "info", "warn", "error", "debug", "trace"] as const;
type Printer = (...a: unknown[]) => void;
const out = (globalThis as unknown as { console: Record<(typeof CONSOLE)[number], Printer> }).console;
const saved = new Map<string, Printer>();

function whenState(zk: ZooKeeper, wanted: SessionState): Promise<void> {
  return new Promise((resolve) => {
    const on = (s: SessionState): void => {
      if (s === wanted) (zk.off("state", on), resolve());
    };
    zk.on("state", on);
  });
}

async function cutAndRecover(zk: ZooKeeper, cut: () => void): Promise<void> {
  const up = whenState(zk, "connected");
  cut();
  await up;
}

const base = (o: ConnectOptions): ConnectOptions => ({ connectTimeout: 10_000, sessionTimeout: 10_000, logger, ...o });

describe("no credentials in logs or errors", () => {
  beforeAll(async () => {
    [sasl, tls] = await Promise.all([startSaslServer({ users: { alice: SASL_PASSWORD } }), startTlsServer()]);
    for (const k of CONSOLE) {
      saved.set(k, out[k]);
      out[k] = (...a: unknown[]) => void seen.push(...a.map(show));
    }
  }, 120_000);

  afterAll(async () => {
    for (const k of CONSOLE) out[k] = saved.get(k) as Printer;
    await Promise.all([sasl?.close(), tls?.close()]);
  }, 60_000);

  it("exercises SASL, digest auth and TLS through success, failure and reconnects", async () => {
    const proxy = await startFaultProxy("127.0.0.1", sasl.server.clientPort);
    try {
      // SASL + digest, a cut link (both redone), requests, close.
      const zk = await ZooKeeper.connect(proxy.connectString, base({
        sasl: { mechanism: "DIGEST-MD5", username: "alice", password: SASL_PASSWORD },
        auth: [{ scheme: "digest", auth: `carol:${DIGEST_SECRET}` }],
      }));
      dump(zk);
      await cutAndRecover(zk, () => proxy.cut());
      await cutAndRecover(zk, () => proxy.reset());
      await capture(zk.getData("/no-such-node"));
      await zk.addAuthInfo("digest", `dave:${DIGEST_SECRET}`);
      dump(zk);
      // A scheme the server does not know: refused, the session ends in authFailed.
      await capture(zk.addAuthInfo("nosuchscheme", `eve:${BAD_SCHEME_SECRET}`));
      assert.equal(zk.state, "authFailed");
      await capture(zk.exists("/"));
      await zk.close();
    } finally {
      await proxy.close();
    }
    // Wrong SASL password.
    assert.equal(await capture(ZooKeeper.connect(sasl.connectString, base({ sasl: { mechanism: "DIGEST-MD5", username: "alice", password: WRONG_PASSWORD } }))), undefined);
    // Mutual TLS through a cut, then a wrong CA while presenting the client key.
    const tproxy = await startFaultProxy("127.0.0.1", tls.securePort);
    try {
      const zk = await ZooKeeper.connect(tproxy.connectString, base({ tls: clientTlsOptions(tls.certs, "client") }));
      await cutAndRecover(zk, () => tproxy.cut());
      dump(zk);
      await zk.close();
    } finally {
      await tproxy.close();
    }
    const wrongCaWithKey = { ...clientTlsOptions(tls.certs, "client"), ca: readFileSync(tls.certs.otherCaCert, "utf8") };
    assert.equal(await capture(ZooKeeper.connect(tls.connectString, base({ tls: wrongCaWithKey, connectTimeout: 3000 }))), undefined);
    assert.ok(seen.length > 5, `expected the client to have logged or thrown something, got ${seen.length} entries`);
  }, 60_000);

  it("none of the secrets appear in anything collected", () => {
    const all = seen.join("\n");
    const squeezed = all.replace(/\s/g, "");
    const asBytes = [...[SASL_PASSWORD, WRONG_PASSWORD, DIGEST_SECRET, BAD_SCHEME_SECRET].map((s) => Buffer.from(s, "utf8")), ...sessionPasswords.map((p) => Buffer.from(p))];
    assert.equal(sessionPasswords.length, 3);
    for (const secret of [SASL_PASSWORD, WRONG_PASSWORD, DIGEST_SECRET, BAD_SCHEME_SECRET]) assert.ok(!all.includes(secret), `secret ${secret.slice(0, 4)}… leaked:\n${all}`);
    for (const bytes of asBytes) {
      // As bytes in hex, base64 or the decimal list a Uint8Array dump prints.
      const name = `${bytes.toString("hex").slice(0, 4)}…`;
      assert.ok(!all.includes(bytes.toString("base64")), `secret ${name} leaked as base64`);
      assert.ok(!all.replace(/[\s,]/g, "").includes(bytes.toString("hex")), `secret ${name} leaked as hex`);
      assert.ok(!squeezed.includes([...bytes].join(",")), `secret ${name} leaked as a byte list`);
    }
    // DIGEST-MD5 response and rspauth are 32 hex digits; nothing else the client prints is.
    assert.equal(/\b[0-9a-f]{32}\b/i.exec(all), null, "a 32-hex digest (DIGEST-MD5 response?) appears");
    // The TLS private key: no line of its base64 body.
    const keyLines = readFileSync(tls.certs.clientKey, "utf8").split("\n").filter((l) => l.length > 40 && !l.startsWith("-----"));
    assert.ok(keyLines.length > 5);
    for (const line of keyLines) assert.ok(!all.includes(line), "a line of the client private key appears");
  });
});
