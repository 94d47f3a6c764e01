// TLS against real ZooKeeper 3.8.0 secure client ports (Netty factory, PEM stores, openssl-made
// certificates): CA-only and mutual TLS, the x509 identity and x509 ACLs, reconnects through TLS,
// and certificate failures that must end connect() quickly with a message naming the TLS problem.
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure/secure-hooks.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, Perms, ZooKeeper, ZooKeeperError, type ConnectOptions } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { clientTlsOptions, makeCertificates, type Certificates } from "../support/secure/secure.ts";
import { startTlsServer, type TlsServer } from "../support/secure/secure-server.ts";

const ROOT = `/tls-${randomUUID()}`;
let certDir: string;
let certs: Certificates;
let want: TlsServer; // ssl.clientAuth=want: CA-only and mutual TLS both accepted
let need: TlsServer; // ssl.clientAuth=need: a client certificate is required
const open: ZooKeeper[] = [];

async function connect(connectString: string, options: ConnectOptions): Promise<ZooKeeper> {
  const zk = await ZooKeeper.connect(connectString, { connectTimeout: 10_000, sessionTimeout: 10_000, ...options });
  open.push(zk);
  return zk;
}

/** connect() must reject with CONNECTIONLOSS naming the TLS problem, long before connectTimeout. */
async function assertTlsFailure(connectString: string, tls: ConnectOptions["tls"], expected: RegExp): Promise<void> {
  const started = performance.now();
  let zk: ZooKeeper | undefined;
  const err = await ZooKeeper.connect(connectString, { tls, connectTimeout: 8000 }).then(
    (z) => {
      zk = z;
      return null;
    },
    (e: unknown) => e,
  );
  await zk?.close();
  const ms = performance.now() - started;
  assert.ok(err instanceof ZooKeeperError, `connect() should have failed, got ${String(err)}`);
  assert.equal(err.code, ErrorCode.CONNECTIONLOSS);
  assert.match(err.message, expected);
  assert.ok(ms < 2000, `a certificate error should fail fast, took ${Math.round(ms)} ms (${err.message})`);
}

describe("TLS client port (real ZooKeeper 3.8.0)", () => {
  beforeAll(async () => {
    certDir = mkdtempSync(join(tmpdir(), "zk-ts-tls-test-"));
    certs = await makeCertificates(certDir);
    [want, need] = await Promise.all([startTlsServer({ certs }), startTlsServer({ certs, clientAuth: "need" })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(open.map((zk) => zk.close().catch(() => {})));
    await Promise.all([want?.close(), need?.close()]);
    rmSync(certDir, { recursive: true, force: true });
  }, 60_000);

  it("connects with the CA only and serves requests; the only identity is ip", async () => {
    const zk = await connect(want.connectString, { tls: clientTlsOptions(certs) });
    assert.equal(zk.state, "connected");
    await zk.create(ROOT, "over tls");
    const { data } = await zk.getData(ROOT);
    assert.equal(new TextDecoder().decode(data!), "over tls");
    assert.deepEqual(await zk.whoAmI(), [{ scheme: "ip", id: "127.0.0.1" }]);
  }, 30_000);

  it("mutual TLS: the server sees the client certificate as an x509 identity", async () => {
    const zk = await connect(want.connectString, { tls: clientTlsOptions(certs, "client") });
    const ids = await zk.whoAmI();
    assert.deepEqual(ids.find((i) => i.scheme === "x509"), { scheme: "x509", id: certs.clientX509Id });
  }, 30_000);

  it("x509 ACLs: the certificate's owner reads, a CA-only client gets NOAUTH", async () => {
    const owner = await connect(want.connectString, { tls: clientTlsOptions(certs, "client") });
    const path = `${ROOT}/x509-only`;
    await owner.create(path, "mine", { acl: [{ perms: Perms.ALL, id: { scheme: "x509", id: certs.clientX509Id } }] });
    assert.equal(new TextDecoder().decode((await owner.getData(path)).data!), "mine");
    const other = await connect(want.connectString, { tls: clientTlsOptions(certs) });
    await assert.rejects(other.getData(path), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
  }, 30_000);

  it("a server that needs client certificates accepts mutual TLS", async () => {
    const zk = await connect(need.connectString, { tls: clientTlsOptions(certs, "client") });
    const ids = await zk.whoAmI();
    assert.ok(ids.some((i) => i.scheme === "x509" && i.id === certs.clientX509Id), JSON.stringify(ids));
  }, 30_000);

  it("mutual TLS with a PKCS#12 bundle (pfx + passphrase) instead of PEM", async () => {
    const p12 = join(certDir, "client.p12");
    execFileSync("openssl", ["pkcs12", "-export", "-in", certs.clientCert, "-inkey", certs.clientKey, "-out", p12, "-passout", "pass:changeit"]);
    const zk = await connect(want.connectString, { tls: { ca: readFileSync(certs.caCert), pfx: readFileSync(p12), passphrase: "changeit" } });
    const ids = await zk.whoAmI();
    assert.ok(ids.some((i) => i.scheme === "x509" && i.id === certs.clientX509Id), JSON.stringify(ids));
  }, 30_000);

  it("servername is what the certificate is checked against (localhost is in its SAN)", async () => {
    const zk = await connect(want.connectString, { tls: { ...clientTlsOptions(certs), servername: "localhost" } });
    assert.equal(zk.state, "connected");
  }, 30_000);

  it("reconnects through TLS after the link is cut and keeps its x509 identity", async () => {
    let accepted = 0;
    const proxy: FaultProxy = await startFaultProxy("127.0.0.1", want.securePort, { onConnection: () => accepted++ });
    try {
      // The proxy's address is 127.0.0.1 too, so the certificate's IP SAN still matches.
      const zk = await connect(proxy.connectString, { tls: clientTlsOptions(certs, "client") });
      const before = zk.sessionId;
      const states: string[] = [];
      const back = new Promise<void>((resolve) =>
        zk.on("state", (s) => {
          states.push(s);
          if (s === "connected") resolve();
        }),
      );
      proxy.cut();
      await back;
      const ids = await zk.whoAmI();
      assert.ok(ids.some((i) => i.scheme === "x509" && i.id === certs.clientX509Id), JSON.stringify(ids));
      assert.equal(zk.sessionId, before);
      assert.deepEqual(states, ["disconnected", "connected"]);
      assert.equal(accepted, 2, "one TLS connection before the cut, one after");
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it("a CA that did not sign the server certificate fails fast and says so", async () => {
    await assertTlsFailure(want.connectString, clientTlsOptions(certs, "wrong-ca"), /UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
  }, 30_000);

  it("tls: true (system trust store) rejects the test CA's server fast and says so", async () => {
    await assertTlsFailure(want.connectString, true, /UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
  }, 30_000);

  it("a servername not in the certificate fails fast and says so", async () => {
    await assertTlsFailure(want.connectString, { ...clientTlsOptions(certs), servername: "wrong.invalid" }, /ERR_TLS_CERT_ALTNAME_INVALID|altnames/);
  }, 30_000);

  it("no client certificate for a server that needs one fails fast and says so", async () => {
    await assertTlsFailure(need.connectString, clientTlsOptions(certs), /BAD_CERTIFICATE|bad certificate|BadCertificate/i);
  }, 30_000);

  it("a client certificate from an unrelated CA is refused fast and the error says so", async () => {
    await assertTlsFailure(need.connectString, clientTlsOptions(certs, "stranger"), /CERTIFICATE_UNKNOWN|certificate unknown|CertificateUnknown/i);
  }, 30_000);
});
