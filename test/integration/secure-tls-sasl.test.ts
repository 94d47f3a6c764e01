// TLS and SASL together, as Kafka/HBase deployments run them: a real ZooKeeper 3.8.0 with a TLS
// client port that also requires SASL DIGEST-MD5. The SASL exchange runs inside TLS, on every connection.
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure/secure-hooks.ts";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, ZooKeeper, ZooKeeperError, type SessionState } from "../../src/index.ts";
import { startFaultProxy } from "../support/fakes/fault-proxy.ts";
import { clientTlsOptions, saslJaas } from "../support/secure/secure.ts";
import { saslServerConfig, startTlsServer, type TlsServer } from "../support/secure/secure-server.ts";

const PASSWORD = "tls-and-sasl-pw";
let jaasDir: string;
let srv: TlsServer;

describe("TLS + SASL DIGEST-MD5 on one port (real ZooKeeper 3.8.0)", () => {
  beforeAll(async () => {
    jaasDir = mkdtempSync(join(tmpdir(), "zk-ts-tls-sasl-"));
    const jaas = join(jaasDir, "jaas.conf");
    writeFileSync(jaas, saslJaas({ users: { alice: PASSWORD } }));
    srv = await startTlsServer({ config: saslServerConfig(true), jvmArgs: [`-Djava.security.auth.login.config=${jaas}`] });
  }, 120_000);

  afterAll(async () => {
    await srv?.close();
    rmSync(jaasDir, { recursive: true, force: true });
  }, 60_000);

  it("mutual TLS plus SASL: the connection carries both the x509 and the sasl identity, also after a reconnect", async () => {
    const proxy = await startFaultProxy("127.0.0.1", srv.securePort);
    const zk = await ZooKeeper.connect(proxy.connectString, {
      tls: clientTlsOptions(srv.certs, "client"),
      sasl: { mechanism: "DIGEST-MD5", username: "alice", password: PASSWORD },
      connectTimeout: 10_000,
    });
    try {
      const check = async (): Promise<void> => {
        const ids = await zk.whoAmI();
        assert.ok(ids.some((i) => i.scheme === "sasl" && i.id === "alice"), JSON.stringify(ids));
        assert.ok(ids.some((i) => i.scheme === "x509" && i.id === srv.certs.clientX509Id), JSON.stringify(ids));
      };
      await check();
      const back = new Promise<void>((resolve) => zk.on("state", (s: SessionState) => s === "connected" && resolve()));
      proxy.cut();
      await back;
      await check();
    } finally {
      await zk.close();
      await proxy.close();
    }
  }, 30_000);

  it("a wrong SASL password over TLS is refused with AUTHFAILED", async () => {
    await assert.rejects(
      ZooKeeper.connect(srv.connectString, {
        tls: clientTlsOptions(srv.certs),
        sasl: { mechanism: "DIGEST-MD5", username: "alice", password: "nope" },
        connectTimeout: 10_000,
      }),
      (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.AUTHFAILED && /SASL/.test(e.message),
    );
  }, 30_000);

  it("TLS without SASL: connect() rejects with SESSIONCLOSEDREQUIRESASLAUTH, naming the missing sasl option", async () => {
    // The server refuses the session's first request (the client's feature probe) with -124 and closes:
    // the client ends the session at once instead of retrying a session no request can use.
    const t0 = performance.now();
    await assert.rejects(
      ZooKeeper.connect(srv.connectString, { tls: clientTlsOptions(srv.certs, "client"), connectTimeout: 10_000 }),
      (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.SESSIONCLOSEDREQUIRESASLAUTH && /sasl/.test(e.message),
    );
    assert.ok(performance.now() - t0 < 5_000, "refused without waiting out the connect timeout");
  }, 30_000);
});
