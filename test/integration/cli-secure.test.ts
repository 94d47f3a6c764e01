// zkts on secure servers (real ZooKeeper 3.8.0): mutual TLS from --tls-ca/--tls-cert/--tls-key, and
// SASL DIGEST-MD5 from --sasl-user with the password in a file or $ZK_SASL_PASSWORD; a wrong password
// or a missing CA is exit 1 with the reason on stderr.
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure-hooks.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSaslServer, startTlsServer, type SaslServer, type TlsServer } from "../support/secure-server.ts";
import { zkts } from "../support/cli-run.ts";

describe("zkts with TLS and SASL (real ZooKeeper 3.8.0)", () => {
  let tls: TlsServer;
  let sasl: SaslServer;
  const dir = mkdtempSync(join(tmpdir(), "zkts-secure-"));

  beforeAll(async () => {
    [tls, sasl] = await Promise.all([startTlsServer(), startSaslServer({ users: { alice: "alice-Pa55" } })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([tls?.close(), sasl?.close()]);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("mutual TLS: the session carries the client certificate's x509 identity", async () => {
    const c = tls.certs;
    const args = ["--server", tls.connectString, "--tls-ca", c.caCert, "--tls-cert", c.clientCert, "--tls-key", c.clientKey, "--tls-servername", "localhost"];
    const who = await zkts([...args, "--json", "whoami"]);
    assert.equal(who.code, 0, who.err);
    assert.ok(JSON.parse(who.out).some((i: { scheme: string; id: string }) => i.scheme === "x509" && i.id === c.clientX509Id), who.out);
    const made = await zkts([...args, "create", "/cli-tls", "over tls"]);
    assert.deepEqual([made.code, made.out], [0, "/cli-tls\n"]);
    const wrongCa = await zkts(["--server", tls.connectString, "--tls-ca", c.otherCaCert, "--timeout", "3000", "ls", "/"]);
    assert.equal(wrongCa.code, 1);
    assert.notEqual(wrongCa.err, "");
    const noFile = await zkts(["--server", tls.connectString, "--tls-ca", join(dir, "absent.pem"), "ls", "/"]);
    assert.equal(noFile.code, 2);
    assert.match(noFile.err, /--tls-ca: cannot read/);
  }, 60_000);

  it("SASL DIGEST-MD5: password from a file or $ZK_SASL_PASSWORD; a wrong one is AUTHFAILED (exit 1)", async () => {
    const pwFile = join(dir, "pw");
    writeFileSync(pwFile, "alice-Pa55\n", { mode: 0o600 });
    const who = await zkts(["--server", sasl.connectString, "--sasl-user", "alice", "--sasl-password-file", pwFile, "whoami"]);
    assert.equal(who.code, 0, who.err);
    assert.match(who.out, /^sasl:alice$/m);
    const env = await zkts(["--server", sasl.connectString, "--sasl-user", "alice", "create", "/cli-sasl", "x"], { env: { ZK_SASL_PASSWORD: "alice-Pa55" } });
    assert.deepEqual([env.code, env.out], [0, "/cli-sasl\n"]);
    const wrong = await zkts(["--server", sasl.connectString, "--sasl-user", "alice", "ls", "/"], { env: { ZK_SASL_PASSWORD: "nope" } });
    assert.equal(wrong.code, 1);
    assert.match(wrong.err, /^AUTHFAILED/);
    const none = await zkts(["--server", sasl.connectString, "--sasl-user", "alice", "ls", "/"], { env: { ZK_SASL_PASSWORD: undefined } });
    assert.equal(none.code, 2);
    assert.match(none.err, /needs --sasl-password-file FILE or \$ZK_SASL_PASSWORD/);
  }, 60_000);
});
