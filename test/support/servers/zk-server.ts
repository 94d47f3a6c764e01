// Real ZooKeeper servers for tests. Provisioning order: ZK_CONNECT (sharedServer only) → Docker
// (testcontainers, standalone only) → $ZOOKEEPER_HOME → Debian's /usr/share/java/zookeeper.jar →
// `apt-get install zookeeper` when root → an Error naming all of these. Never a silent skip.
// ZK_HARNESS=local|docker forces a back end. ZK_SERVER=3.4|3.9.3|3.9 (or ServerOptions.line) picks another
// server line, fetched from Debian's archive on first use (zk-lines.ts); unset or 3.8 means the above.
//
// Defaults: standalone tickTime 2000 (sessions 4–40 s, like a stock server). Ensembles use
// tickTime 500 so elections and failure detection are quick (new leader after SIGSTOP of the leader
// ≈ syncLimit × tickTime = 3 s), with initLimit 20 (10 s, room for 3 JVMs starting on 2 cores) and
// maxSessionTimeout 40000 so clients get the same session timeouts as on a standalone server.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fourLetterWord, parseMode } from "./four-letter.ts";
import { dockerAvailable, startDockerStandalone } from "./zk-docker.ts";
import { EnsembleOf } from "./zk-ensemble.ts";
import { HOW_TO_GET_A_SERVER, localInstall } from "./zk-install.ts";
import { LocalServer, StartError } from "./zk-local.ts";
import { requestedLine, type ServerLine } from "./zk-lines.ts";
import { freePorts } from "./zk-ports.ts";
import type { EnsembleOptions, ServerOptions, ZkEnsemble, ZkServer } from "./zk-types.ts";

export type { EnsembleOptions, ServerOptions, ZkEnsemble, ZkServer } from "./zk-types.ts";
export { fourLetterWord, parseMode, HOW_TO_GET_A_SERVER };

const ATTEMPTS = 3; // fresh ports after a bind failure (another process took a port)

async function useDocker(line: ServerLine): Promise<boolean> {
  const forced = process.env.ZK_HARNESS;
  if (forced === "local" || line !== "3.8") return false; // other lines run from Debian's archive
  const ok = await dockerAvailable();
  if (forced === "docker" && !ok) throw new Error(`ZK_HARNESS=docker but no Docker engine answers. ${HOW_TO_GET_A_SERVER}`);
  return ok;
}

export function baseCfg(dir: string, clientPort: number, tickTime: number): Record<string, string> {
  return {
    tickTime: String(tickTime),
    dataDir: join(dir, "data"),
    clientPort: String(clientPort),
    clientPortAddress: "127.0.0.1",
    maxClientCnxns: "0", // default 60 per IP, and every test client is 127.0.0.1
    "4lw.commands.whitelist": "*",
    "admin.enableServer": "false",
    forceSync: "no",
  };
}

/** zoo.cfg of one ensemble member: the base keys, quorum limits, read-only support, the peers, extras. */
export function ensembleCfg(
  dir: string,
  clientPort: number,
  peers: Record<string, string>,
  opts: { tickTime?: number; readOnly?: boolean; config?: Record<string, string> },
): Record<string, string> {
  return {
    ...baseCfg(dir, clientPort, opts.tickTime ?? 500),
    initLimit: "20",
    syncLimit: "6",
    maxSessionTimeout: "40000",
    // A read-only server refuses global sessions; local sessions let it serve read-only clients.
    ...(opts.readOnly ? { localSessionsEnabled: "true", localSessionsUpgradingEnabled: "true" } : {}),
    ...peers,
    ...opts.config,
  };
}

const JVM_FLAGS_DOCKER = ["-Dzookeeper.extendedTypesEnabled=true", "-Dznode.container.checkIntervalMs=1000", "-Dreadonlymode.enabled=true"];

export async function startStandalone(opts: ServerOptions = {}): Promise<ZkServer> {
  const line = opts.line ?? requestedLine();
  const docker = await useDocker(line);
  const install = docker ? undefined : await localInstall(line);
  for (let attempt = 1; ; attempt++) {
    const [freePort, ...extraPorts] = await freePorts(1 + (opts.ports ?? 0));
    const clientPort = opts.clientPort ?? freePort;
    const dir = mkdtempSync(join(tmpdir(), "zk-ts-"));
    const cfg = { ...baseCfg(dir, clientPort, opts.tickTime ?? 2000), ...opts.config };
    if (!install) return startDockerStandalone(dir, clientPort, extraPorts, cfg, opts, [...JVM_FLAGS_DOCKER, ...(opts.jvmArgs ?? [])]);
    const server = new LocalServer({
      id: 1, dir, clientPort, extraPorts, zooCfg: cfg, myid: false, files: opts.files ?? {},
      jvmArgs: opts.jvmArgs ?? [], classpath: opts.classpath ?? [], startTimeoutMs: opts.startTimeoutMs ?? 60_000,
    }, install);
    try {
      await server.start();
      return server;
    } catch (err) {
      await server.close();
      if (!(err instanceof StartError && err.bindFailure) || attempt >= ATTEMPTS || opts.clientPort !== undefined) throw err;
    }
  }
}

export async function startEnsemble(opts: EnsembleOptions = {}): Promise<ZkEnsemble> {
  const size = opts.size ?? 3;
  const install = await localInstall(opts.line ?? requestedLine()); // ensembles always run as local JVMs
  const perServer = 3 + (opts.ports ?? 0); // client, quorum, election, extras
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(size * perServer);
    const mine = (i: number) => ports.slice(i * perServer, (i + 1) * perServer);
    const peers: Record<string, string> = {};
    for (let i = 0; i < size; i++) peers[`server.${i + 1}`] = `127.0.0.1:${mine(i)[1]}:${mine(i)[2]}`;
    const servers = Array.from({ length: size }, (_, i) => {
      const [clientPort, , , ...extraPorts] = mine(i);
      const dir = mkdtempSync(join(tmpdir(), `zk-ts-${i + 1}-`));
      const zooCfg = ensembleCfg(dir, clientPort, peers, opts);
      return new LocalServer({
        id: i + 1, dir, clientPort, extraPorts, zooCfg, myid: true, files: opts.files ?? {},
        jvmArgs: opts.jvmArgs ?? [], classpath: opts.classpath ?? [], startTimeoutMs: opts.startTimeoutMs ?? 60_000,
      }, install);
    });
    for (const s of servers) s.launch(); // members only serve once a quorum exists: start all, then wait
    const ensemble = new EnsembleOf(servers);
    try {
      await Promise.all(servers.map((s) => s.waitServing()));
      await ensemble.waitForQuorum();
      return ensemble;
    } catch (err) {
      await ensemble.close();
      if (!(err instanceof StartError && err.bindFailure) || attempt >= ATTEMPTS) throw err;
    }
  }
}

let shared: Promise<{ connectString: string }> | undefined;

/** ZK_CONNECT if set, else one standalone server per process, started lazily and killed at exit. */
export function sharedServer(): Promise<{ connectString: string }> {
  const env = process.env.ZK_CONNECT;
  if (env) return Promise.resolve({ connectString: env });
  shared ??= startStandalone().then((s) => ({ connectString: s.connectString }));
  shared.catch(() => (shared = undefined));
  return shared;
}
