// Certificate rotation under running clients (issue 42 item 4), against a real ZooKeeper TLS client port
// that requires client certificates: the CA, the server's certificate and the client's certificate are all
// replaced on disk, the server restarts with them, and clients whose `tls` names files (caFile, certFile,
// keyFile) or is a function reconnect with the new material, keeping their sessions. A file caught truncated
// fails that attempt with a clear error; a later attempt, after the file is whole again, connects.
import { describe, it } from "../support/bdd.ts";
import { beforeAll, afterAll } from "../support/secure/secure-hooks.ts";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, ZooKeeper, ZooKeeperError, type ConnectOptions, type Logger, type TlsOptions } from "../../src/index.ts";
import { startFaultProxy } from "../support/fakes/fault-proxy.ts";
import { rotatingCertificates, type Certificates } from "../support/secure/secure.ts";
import { startTlsServer, type TlsServer } from "../support/secure/secure-server.ts";
import { until, untilState } from "../support/wait.ts";

let root: string;
let gen1: Certificates;
let gen2: Certificates;
let clientDir: string; // the clients' files: ca.crt, client.crt, client.key
/** Puts a generation's material in place: the server's files and the clients' three. */
let install: (g: Certificates) => void;
let server: TlsServer;
const open: ZooKeeper[] = [];

const clientFile = (name: "ca.crt" | "client.crt" | "client.key"): string => join(clientDir, name);
const fileTls: TlsOptions = {};

/** A logger keeping the debug lines (the session logs each failed attempt there). */
function recorder(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (m: string): void => void lines.push(m);
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

async function connect(connectString: string, options: ConnectOptions): Promise<ZooKeeper> {
  const zk = await ZooKeeper.connect(connectString, { connectTimeout: 15_000, sessionTimeout: 30_000, ...options });
  open.push(zk);
  return zk;
}

describe("TLS material rotated under running clients (real ZooKeeper 3.8.0, ssl.clientAuth=need)", () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "zk-ts-rotation-"));
    const certs = await rotatingCertificates(root);
    ({ gen1, gen2, install } = certs);
    clientDir = certs.client.dir;
    Object.assign(fileTls, { caFile: certs.client.caFile, certFile: certs.client.certFile, keyFile: certs.client.keyFile });
    server = await startTlsServer({ certs: certs.live, clientAuth: "need" });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(open.map((zk) => zk.close().catch(() => {})));
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  }, 60_000);

  it("a new CA, server and client certificate: clients with files or a function reconnect with them, sessions kept", async () => {
    let calls = 0;
    const fnTls = async (): Promise<TlsOptions> => {
      calls++;
      const [ca, cert, key] = await Promise.all([clientFile("ca.crt"), clientFile("client.crt"), clientFile("client.key")].map((f) => readFile(f, "utf8")));
      return { ca, cert, key };
    };
    const byFiles = await connect(server.connectString, { tls: fileTls });
    const byFunction = await connect(server.connectString, { tls: fnTls });
    assert.equal(calls, 1);
    const path = `/rotation-${Date.now()}`;
    await byFiles.create(path, "before");
    const ids = [byFiles.sessionId, byFunction.sessionId];
    assert.ok((await byFiles.whoAmI()).some((i) => i.scheme === "x509" && i.id === gen1.clientX509Id));

    const t0 = performance.now();
    const at = (): string => `${Math.round(performance.now() - t0)} ms`;
    const timeline: string[] = [];
    const reconnected = [byFiles, byFunction].map((zk, i) => untilState(zk, "disconnected", 20_000)
      .then(() => untilState(zk, "connected", 60_000))
      .then(() => void timeline.push(`${at()} ${i === 0 ? "caFile/certFile/keyFile" : "tls function"} client reconnected`)));
    install(gen2);
    timeline.push(`${at()} rotation: new CA, server and client certificates on disk`);
    // The live links still use the old material: requests go on.
    assert.equal(new TextDecoder().decode((await byFunction.getData(path)).data!), "before");
    await server.server.kill();
    timeline.push(`${at()} server stopped`);
    await server.server.start();
    timeline.push(`${at()} server restarted with the new CA and certificate`);
    await Promise.all(reconnected);
    console.log(`rotation timeline:\n  ${timeline.join("\n  ")}`);

    assert.deepEqual([byFiles.sessionId, byFunction.sessionId], ids, "the sessions survive the rotation");
    assert.ok(calls >= 2, `the tls function was called again (${calls})`);
    assert.ok((await byFiles.whoAmI()).some((i) => i.scheme === "x509" && i.id === gen2.clientX509Id), "the new client certificate is presented");
    await byFunction.setData(path, "after");
    assert.equal(new TextDecoder().decode((await byFiles.getData(path)).data!), "after");

    // The server really refuses the old material: a client still holding gen1's PEM contents gets a certificate error.
    const old: TlsOptions = { ca: readFileSync(gen1.caCert, "utf8"), cert: readFileSync(gen1.clientCert, "utf8"), key: readFileSync(gen1.clientKey, "utf8") };
    const err = await ZooKeeper.connect(server.connectString, { tls: old, connectTimeout: 8000 }).then(async (zk) => (await zk.close(), null), (e: unknown) => e);
    assert.ok(err instanceof ZooKeeperError && err.code === ErrorCode.CONNECTIONLOSS, String(err));
  }, 180_000);

  it("a file caught truncated fails that attempt with a clear error; the next attempt after it is whole connects", async () => {
    const proxy = await startFaultProxy("127.0.0.1", server.securePort);
    try {
      const { logger, lines } = recorder();
      const zk = await connect(proxy.connectString, { tls: fileTls, logger });
      const id = zk.sessionId;
      const key = readFileSync(clientFile("client.key"));
      writeFileSync(clientFile("client.key"), key.subarray(0, 100)); // half-written: a BEGIN line, no END
      const t0 = performance.now();
      const at = (): string => `${Math.round(performance.now() - t0)} ms`;
      const timeline = [`0 ms keyFile truncated to 100 bytes`];
      proxy.cut();
      await untilState(zk, "disconnected");
      timeline.push(`${at()} link cut`);
      const bad = (l: string): boolean => l.includes("client.key holds no complete PEM block");
      await until("an attempt failed on the truncated keyFile", () => lines.some(bad), 20_000);
      timeline.push(`${at()} attempt failed: ${lines.find(bad)!.replace(/^.*failed: /, "")}`);
      assert.equal(zk.state, "disconnected", "a bad file is not fatal: the client keeps trying");
      writeFileSync(clientFile("client.key"), key);
      timeline.push(`${at()} keyFile whole again`);
      await untilState(zk, "connected", 20_000);
      timeline.push(`${at()} reconnected`);
      console.log(`truncated-file timeline:\n  ${timeline.join("\n  ")}`);
      assert.equal(zk.sessionId, id);
      assert.ok(!lines.some((l) => l.includes("-----BEGIN")), "no file content in the log");
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it("connect() fails with a clear error while a file is unreadable, and rejects bad file options at once", async () => {
    const missing = join(clientDir, "missing.crt");
    const err = await ZooKeeper.connect(server.connectString, { tls: { ...fileTls, caFile: missing }, connectTimeout: 3000 })
      .then(async (zk) => (await zk.close(), null), (e: unknown) => e);
    assert.ok(err instanceof ZooKeeperError && err.code === ErrorCode.CONNECTIONLOSS, String(err));
    assert.match(err.message, /caFile .*missing\.crt could not be read \(ENOENT\)/);
    const bad = await ZooKeeper.connect(server.connectString, { tls: { caFile: "" } }).then(() => null, (e: unknown) => e);
    assert.ok(bad instanceof ZooKeeperError && bad.code === ErrorCode.BADARGUMENTS, String(bad));
  }, 30_000);
});
