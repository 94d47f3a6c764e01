// Shapes shared by the local (JVM) and Docker server back ends; re-exported by zk-server.ts.
import type { ServerLine } from "./zk-lines.ts";

export interface ZkServer {
  readonly id: number; // myid (1..n) in an ensemble, 1 standalone
  readonly host: string; // "127.0.0.1"
  readonly clientPort: number;
  readonly connectString: string; // "127.0.0.1:PORT"
  readonly dir: string; // its temp dir (zoo.cfg, data, server.log)
  readonly pid: number | undefined; // JVM pid while running (undefined for Docker)
  readonly running: boolean;
  readonly paused: boolean; // SIGSTOPped (pause()) and not resumed yet
  readonly extraPorts: readonly number[]; // ServerOptions.ports reserved ports
  readonly backend: "local" | "docker";
  kill(signal?: "SIGKILL" | "SIGTERM"): Promise<void>; // default SIGKILL; resolves when exited
  pause(): Promise<void>; // SIGSTOP
  resume(): Promise<void>; // SIGCONT
  start(): Promise<void>; // (re)start after kill; resolves when `srvr` shows a Mode: line
  mode(): Promise<string | null>; // "standalone" | "leader" | "follower" | "read-only" | null
  fourLetter(cmd: string): Promise<string>;
  logTail(lines?: number): string; // last lines of server.log, for failure messages
  close(): Promise<void>; // stop (SIGCONT first if paused) and remove its dir
}

export interface ZkEnsemble {
  readonly servers: ZkServer[];
  readonly connectString: string;
  leader(): Promise<ZkServer>; // polls until exactly one server reports "leader"
  waitForQuorum(): Promise<void>; // every running server serves and one of them leads
  close(): Promise<void>;
}

export interface ServerOptions {
  /** Server line (default ZK_SERVER, else 3.8); other lines are fetched from Debian's archive on first use. */
  line?: ServerLine;
  /** Default 2000 standalone, 500 ensemble (fast elections; see zk-server.ts). */
  tickTime?: number;
  /** Extra or overriding zoo.cfg keys (secureClientPort, ssl.*, authProvider.*, ...). */
  config?: Record<string, string>;
  /** Extra JVM flags, e.g. -Djava.security.auth.login.config=... */
  jvmArgs?: string[];
  /** Extra jars for the local back end (the Docker image already has them all). */
  classpath?: string[];
  /** Files written into the server dir before start (name -> content). */
  files?: Record<string, string>;
  /** Number of extra free ports to reserve, exposed as server.extraPorts. */
  ports?: number;
  /** Milliseconds to wait for readiness (default 60000). */
  startTimeoutMs?: number;
  /** The client port (standalone only; default a free one). A port in use fails the start, no retry on another. */
  clientPort?: number;
}

export interface EnsembleOptions extends ServerOptions {
  size?: number; // default 3
  readOnly?: boolean; // local sessions on, so a minority server serves read-only clients
}
