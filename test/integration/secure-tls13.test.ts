// TLS 1.3 only, client certificate required (ssl.clientAuth=need) on a real ZooKeeper 3.8.0.
// The difference from TLS 1.2: the handshake "succeeds" for a client without a certificate and
// the server's refusal (alert 42) arrives afterwards, while the client waits for its
// ConnectResponse. That late refusal must still end connect() quickly and name the problem.
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure/secure-hooks.ts";
import assert from "node:assert/strict";
import { ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { clientTlsOptions } from "../support/secure/secure.ts";
import { startTlsServer, type TlsServer } from "../support/secure/secure-server.ts";

let srv: TlsServer;

describe("TLS 1.3 only, client certificate required (real ZooKeeper 3.8.0)", () => {
  beforeAll(async () => {
    srv = await startTlsServer({ clientAuth: "need", tls13Only: true });
  }, 120_000);

  afterAll(async () => {
    await srv?.close();
  }, 60_000);

  it("mutual TLS over TLS 1.3 connects and carries the x509 identity", async () => {
    const zk = await ZooKeeper.connect(srv.connectString, { tls: { ...clientTlsOptions(srv.certs, "client"), minVersion: "TLSv1.3" }, connectTimeout: 10_000 });
    try {
      const ids = await zk.whoAmI();
      assert.ok(ids.some((i) => i.scheme === "x509" && i.id === srv.certs.clientX509Id), JSON.stringify(ids));
    } finally {
      await zk.close();
    }
  }, 30_000);

  it("a client limited to TLS 1.2 is refused with a clear protocol error", async () => {
    const started = performance.now();
    const err = await ZooKeeper.connect(srv.connectString, { tls: { ...clientTlsOptions(srv.certs, "client"), maxVersion: "TLSv1.2" }, connectTimeout: 8000 }).then(
      async (zk) => (await zk.close(), null),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ZooKeeperError, `connect() should have failed, got ${String(err)}`);
    assert.equal(err.code, ErrorCode.CONNECTIONLOSS);
    assert.match(err.message, /TLS/);
    assert.match(err.message, /PROTOCOL_VERSION|protocol version|ProtocolVersion/i);
    assert.ok(performance.now() - started < 8000, "must not be the plain connectTimeout");
  }, 30_000);

  it("no client certificate: the late alert ends connect() fast with a message naming it", async () => {
    const started = performance.now();
    const err = await ZooKeeper.connect(srv.connectString, { tls: clientTlsOptions(srv.certs), connectTimeout: 8000 }).then(
      async (zk) => (await zk.close(), null),
      (e: unknown) => e,
    );
    const ms = performance.now() - started;
    assert.ok(err instanceof ZooKeeperError, `connect() should have failed, got ${String(err)}`);
    assert.equal(err.code, ErrorCode.CONNECTIONLOSS);
    assert.match(err.message, /BAD_CERTIFICATE|bad certificate|BadCertificate/i);
    assert.ok(ms < 2000, `a certificate refusal should fail fast, took ${Math.round(ms)} ms (${err.message})`);
  }, 30_000);
});
