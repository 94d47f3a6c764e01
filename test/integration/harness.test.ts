// Checks the real-server harness itself: servers start, elect, fail over, pause, and leave nothing behind.
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fourLetterWord, startEnsemble, startStandalone, } from "../support/servers/zk-server.ts";
import { findInstall, localInstall } from "../support/servers/zk-install.ts";
import { LocalServer, StartError } from "../support/servers/zk-local.ts";
import { freePorts } from "../support/servers/zk-ports.ts";
import { serverLine } from "../support/servers/zk-line.ts";
import { requestedLine } from "../support/servers/zk-lines.ts";
import { fourLetterWordAt } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

const T = 60_000; // per test; Bun would default to 5 s
// Servers start inside the first test that needs them, not in beforeAll: Bun's node:test ignores
// hook timeouts (5 s), and three JVMs on two busy cores can take longer than that.
function lazy<V>(make: () => Promise<V>): { get: () => Promise<V>; made: () => V | undefined } {
  let p: Promise<V> | undefined;
  let v: V | undefined;
  return { get: () => (p ??= make().then((x) => (v = x))), made: () => v };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// A raw Jute ConnectRequest (readOnly=true); resolves with the reply's negotiated timeout and readOnly
// flag, or null when the server closes the link without granting a session.
function readOnlyHandshake(port: number): Promise<{ timeout: number; readOnly: boolean } | null> {
  const body = Buffer.alloc(45);
  body.writeInt32BE(0, 0); // protocolVersion
  body.writeBigInt64BE(0n, 4); // lastZxidSeen
  body.writeInt32BE(10_000, 12); // timeOut
  body.writeBigInt64BE(0n, 16); // sessionId
  body.writeInt32BE(16, 24); // passwd length, 16 zero bytes follow
  body.writeUInt8(1, 44); // readOnly
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 45]), body]);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = connect({ host: "127.0.0.1", port }, () => sock.write(frame));
    const timer = setTimeout(() => sock.destroy(new Error("handshake timed out")), 5000);
    sock.on("data", (c: Buffer) => {
      chunks.push(c);
      const buf = Buffer.concat(chunks);
      if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
        clearTimeout(timer);
        sock.destroy();
        const len = buf.readInt32BE(0);
        resolve({ timeout: buf.readInt32BE(8), readOnly: buf[4 + len - 1] === 1 });
      }
    });
    sock.on("error", (e) => (clearTimeout(timer), reject(e)));
    sock.on("close", () => (clearTimeout(timer), resolve(null)));
  });
}

describe("zk harness: standalone", () => {
  const standalone = lazy(() => startStandalone());
  afterAll(async () => {
    await standalone.made()?.close();
  }, T);

  it("serves as standalone on a loopback port, srvr shows the mode", async () => {
    const server = await standalone.get();
    assert.equal(server.host, "127.0.0.1");
    assert.equal(server.connectString, `127.0.0.1:${server.clientPort}`);
    assert.ok(server.running);
    assert.match(await fourLetterWord("127.0.0.1", server.clientPort, "srvr"), /^Mode: standalone$/m);
    assert.equal(await server.mode(), "standalone");
    assert.match(await server.fourLetter("conf"), /maxClientCnxns=0/);
    assert.ok(existsSync(join(server.dir, "zoo.cfg")) && existsSync(join(server.dir, "server.log")));
  }, T);

  it("pause stops answering, resume serves again", async () => {
    const server = await standalone.get();
    await server.pause();
    assert.ok(server.paused);
    assert.equal(await server.mode(), null);
    await server.resume();
    assert.equal(await server.mode(), "standalone");
  }, T);

  it("kill then start serves again on the same port", async () => {
    const server = await standalone.get();
    const pid = server.pid!;
    await server.kill();
    assert.equal(server.running, false);
    assert.equal(alive(pid), false);
    assert.equal(await server.mode(), null);
    await server.start();
    assert.equal(await server.mode(), "standalone");
    assert.notEqual(server.pid, pid);
  }, T);
});

describe("zk harness: ensemble of 3", () => {
  const ensemble = lazy(() => startEnsemble());
  afterAll(async () => {
    await ensemble.made()?.close();
  }, T);

  it("forms a quorum with exactly one leader", async () => {
    const ens = await ensemble.get();
    const modes = await Promise.all(ens.servers.map((s) => s.mode()));
    assert.deepEqual([...modes].sort(), ["follower", "follower", "leader"]);
    assert.equal(ens.connectString, ens.servers.map((s) => s.connectString).join(","));
    assert.deepEqual(ens.servers.map((s) => s.id), [1, 2, 3]);
  }, T);

  it("kill -9 of the leader yields a new leader; the old one rejoins as follower", async () => {
    const ens = await ensemble.get();
    const old = await ens.leader();
    await old.kill("SIGKILL");
    const next = await ens.leader();
    assert.notEqual(next.id, old.id);
    await old.start();
    assert.equal(await old.mode(), "follower");
    await ens.waitForQuorum();
  }, T);

  it("a paused follower stops answering, the quorum holds, and it rejoins after resume", async () => {
    const ens = await ensemble.get();
    const leader = await ens.leader();
    const follower = ens.servers.find((s) => s !== leader)!;
    await follower.pause();
    assert.equal(await follower.mode(), null);
    assert.equal((await ens.leader()).id, leader.id); // 2 of 3 still form a quorum
    await follower.resume();
    await ens.waitForQuorum();
  }, T);
});

describe("zk harness: read-only ensemble", () => {
  const ensemble = lazy(() => startEnsemble({ readOnly: true }));
  afterAll(async () => {
    await ensemble.made()?.close();
  }, T);

  it("a server that lost its quorum turns read-only and grants read-only sessions", async () => {
    const [survivor, a, b] = (await ensemble.get()).servers;
    await Promise.all([a.kill(), b.kill()]);
    await until("isro = ro", async () => (await survivor.fourLetter("isro").catch(() => "")) === "ro", 30_000, 100);
    assert.equal(await survivor.mode(), "read-only");
    const reply = await readOnlyHandshake(survivor.clientPort);
    assert.ok(reply, "server closed the link instead of granting a read-only session");
    assert.ok(reply.timeout > 0);
    assert.equal(reply.readOnly, true);
  }, T);
});

describe(`zk harness: server line ${serverLine().line} (ZK_SERVER)`, () => {
  it("the server runs the exact version serverLine() reports, with no class from another line", async () => {
    const { line, version } = serverLine();
    const s = await startStandalone({ jvmArgs: ["-verbose:class"] });
    try {
      const srvr = await s.fourLetter("srvr");
      assert.equal(/^Zookeeper version: (\d+\.\d+\.\d+)/m.exec(srvr)?.[1], version, srvr);
      if (s.backend === "docker") return; // the image has its own class path
      const log = s.logTail(1_000_000);
      const server = /\[class,load\] org\.apache\.zookeeper\.server\.ZooKeeperServer source: (\S+)/.exec(log)?.[1];
      assert.ok(server, "-verbose:class shows where ZooKeeperServer came from");
      if (line === "3.8") return;
      // A fetched line: its own stripped jar, and nothing at all from the system's /usr/share/java.
      assert.match(server, new RegExp(`/lines/${line.replace(".", "\\.")}/jars/zookeeper\\.jar$`));
      assert.deepEqual(log.split("\n").filter((l) => / source: (jar:)?file:\/usr\/share\/java\//.test(l)), []);
    } finally {
      await s.close();
    }
  }, T);

  it("an unknown ZK_SERVER is an error naming the known lines, never a silent default", () => {
    assert.throws(() => requestedLine("3.7"), /ZK_SERVER=3\.7 .*3\.4, 3\.8, 3\.9\.3, 3\.9/);
    assert.equal(requestedLine(""), "3.8"); // unset
    assert.equal(requestedLine("3.9.3"), "3.9.3");
  });
});

describe("zk harness: cleanup and failures", () => {
  it("close() removes the dir and ends the JVM, also when paused", async () => {
    const s = await startStandalone();
    const pid = s.pid!;
    await s.pause();
    await s.close();
    assert.equal(alive(pid), false);
    assert.equal(existsSync(s.dir), false);
    assert.equal(s.running, false);
  }, T);

  it("a failed start reports the server.log tail and leaves no dir", async () => {
    const err = await startStandalone({ config: { tickTime: "not-a-number" } }).then(
      () => assert.fail("started with a bad config"),
      (e: Error) => e,
    );
    assert.match(err.message, /server\.log tail/);
    assert.match(err.message, /NumberFormatException|ConfigException|not-a-number/);
    const dir = /\((127\.0\.0\.1:\d+), ([^)]+)\)/.exec(err.message)?.[2];
    assert.ok(dir && !existsSync(dir));
  }, T);

  it("a client port taken by another process is a bind failure (startStandalone retries those)", async () => {
    const [port] = await freePorts(1);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    const dir = mkdtempSync(join(tmpdir(), "zk-ts-bind-"));
    const server = new LocalServer({
      id: 1, dir, clientPort: port, extraPorts: [], myid: false, files: {}, jvmArgs: [], classpath: [], startTimeoutMs: 30_000,
      zooCfg: { tickTime: "2000", dataDir: join(dir, "data"), clientPort: String(port), clientPortAddress: "127.0.0.1" },
    }, await localInstall());
    try {
      const err = await server.start().then(() => assert.fail("started on a taken port"), (e: unknown) => e);
      assert.ok(err instanceof StartError);
      assert.equal(err.bindFailure, true);
      assert.equal(server.running, false);
    } finally {
      await server.close();
      blocker.close();
    }
  }, T);

  it("no install found: the error names every way to get a server", async () => {
    const empty = mkdtempSync(join(tmpdir(), "zk-empty-"));
    try {
      await assert.rejects(findInstall(empty, false), (e: Error) =>
        ["ZK_CONNECT", "Docker", "ZOOKEEPER_HOME", "apt-get install -y zookeeper"].every((w) => e.message.includes(w)));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, T);

  /** zk-shared-main.ts under this runtime, once it printed its server's address. */
  async function sharedMain(args: string[], stdin: "pipe" | "ignore") {
    const main = fileURLToPath(new URL("../support/servers/zk-shared-main.ts", (import.meta as unknown as { url: string }).url));
    const g = globalThis as { Bun?: unknown; Deno?: unknown };
    const cmd = g.Deno ? ["run", "-A", main] : g.Bun ? [main] : ["--import", "tsx", main];
    const child = spawn(process.execPath, [...cmd, ...args], { stdio: [stdin, "pipe", "inherit"] });
    // Deno's child_process reports a child it sent SIGTERM as killed by it, also when the child handled it and exited 0.
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code, signal) => resolve(g.Deno && signal === "SIGTERM" ? 0 : code)));
    const line = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout!.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes("\n")) resolve(out.split("\n")[0]);
      });
      child.on("exit", (code) => reject(new Error(`helper exited (${code}) before printing`)));
    });
    return { child, exited, info: JSON.parse(line) as { connectString: string; pid: number; dir: string } };
  }

  it("zk-shared-main: --port N; with stdin closed it serves until SIGTERM; --until-stdin-closes stops when stdin ends", async () => {
    const [port] = await freePorts(1);
    const bg = await sharedMain(["--port", String(port)], "ignore"); // as `</dev/null` or `&`
    assert.equal(bg.info.connectString, `127.0.0.1:${port}`);
    assert.match(await fourLetterWord("127.0.0.1", port, "srvr"), /Mode: standalone/);
    assert.equal(bg.child.exitCode, null, "still running with stdin closed");
    bg.child.kill("SIGTERM");
    assert.equal(await bg.exited, 0);
    assert.ok(!alive(bg.info.pid) && !existsSync(bg.info.dir), "SIGTERM stopped the server and removed its dir");
    const piped = await sharedMain(["--until-stdin-closes"], "pipe");
    piped.child.stdin!.end();
    assert.equal(await piped.exited, 0);
    assert.ok(!alive(piped.info.pid) && !existsSync(piped.info.dir), "the end of stdin stopped the server");
  }, T);

  it("servers die with their process, even on SIGKILL", async () => {
    const { child, info } = await sharedMain([], "pipe");
    assert.ok(alive(info.pid));
    assert.match(await fourLetterWordAt(info.connectString, "srvr"), /Mode: standalone/);
    child.kill("SIGKILL"); // no exit hook runs: the watchdog must do it
    await until("JVM gone", () => !alive(info.pid), 10_000);
    await until("dir removed", () => !existsSync(info.dir), 10_000);
  }, T);
});
