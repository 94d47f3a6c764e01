// One ZooKeeper JVM on 127.0.0.1. Output goes to DIR/server.log; a tiny sh watchdog and an 'exit'
// hook make sure the JVM dies with the test process, even when that process is SIGKILLed.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { LocalInstall } from "./zk-install.ts";
import { ServerEndpoint } from "./zk-endpoint.ts";
import type { ZkServer } from "./zk-types.ts";
import { hold } from "../wait.ts";

export interface LocalSpec {
  id: number;
  dir: string;
  clientPort: number;
  extraPorts: number[];
  zooCfg: Record<string, string>;
  myid: boolean; // ensemble member: write data/myid
  files: Record<string, string>;
  jvmArgs: string[];
  classpath: string[];
  startTimeoutMs: number;
}

const BASE_JVM_ARGS = [
  "-Xmx64m",
  "-XX:+UseSerialGC",
  "-Dzookeeper.extendedTypesEnabled=true", // TTL nodes
  "-Dznode.container.checkIntervalMs=1000", // reap containers/TTL nodes every second, not every minute
  "-Dreadonlymode.enabled=true",
];

// Kills the JVM and removes its dir once our process is gone (its parent pid changes).
const WATCHDOG = `P=$1 J=$2 D=$3
while [ -e /proc/$J ]; do
  read -r _ _ _ pp _ < /proc/$$/stat
  if [ "$pp" != "$P" ]; then
    grep -qF -- "$D" /proc/$J/cmdline 2>/dev/null && kill -9 $J
    rm -rf -- "$D"; exit 0
  fi
  sleep 1
done`;

const live = new Set<LocalServer>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => {
    for (const s of live) s.killSync();
  });
}

export class StartError extends Error {
  readonly bindFailure: boolean;
  constructor(message: string, bindFailure: boolean) {
    super(message);
    this.bindFailure = bindFailure;
  }
}

/** One-letter state of each thread of pid (R, S, T ...), or undefined without a readable /proc. */
function threadStates(pid: number): string[] | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  return tasks.flatMap((t) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, "utf8");
      return [stat.charAt(stat.lastIndexOf(")") + 2)];
    } catch {
      return []; // the thread ended meanwhile
    }
  });
}


export class LocalServer extends ServerEndpoint implements ZkServer {
  readonly id: number;
  readonly backend = "local" as const;
  readonly #spec: LocalSpec;
  readonly #install: LocalInstall;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #paused = false;
  #closed = false;

  constructor(spec: LocalSpec, install: LocalInstall) {
    super(spec.clientPort, spec.dir, spec.extraPorts);
    this.#spec = spec;
    this.#install = install;
    this.id = spec.id;
    mkdirSync(join(spec.dir, "data"), { recursive: true });
    const cfg = Object.entries(spec.zooCfg).map(([k, v]) => `${k}=${v}`);
    writeFileSync(join(spec.dir, "zoo.cfg"), cfg.join("\n") + "\n");
    if (spec.myid) writeFileSync(join(spec.dir, "data", "myid"), `${spec.id}\n`);
    for (const [name, content] of Object.entries(spec.files)) writeFileSync(join(spec.dir, name), content);
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    return this.#child !== undefined;
  }

  get paused(): boolean {
    return this.running && this.#paused;
  }

  /** Spawns the JVM without waiting for it to serve (an ensemble member cannot serve alone). */
  launch(): void {
    if (this.#closed) throw new Error(`server ${this.id} is closed`);
    if (this.#child) return;
    const cp = [...this.#install.classpath, ...this.#spec.classpath].join(":");
    const args = [...BASE_JVM_ARGS, ...this.#install.jvmArgs, ...this.#spec.jvmArgs, "-cp", cp,
      "org.apache.zookeeper.server.quorum.QuorumPeerMain", join(this.dir, "zoo.cfg")];
    const log = join(this.dir, "server.log");
    // exec keeps the pid: the sh process becomes the JVM, with both streams appended to server.log.
    const child = spawn("sh", ["-c", 'exec "$@" >>"$ZK_LOG" 2>&1', "sh", this.#install.java, ...args], {
      stdio: "ignore", cwd: this.dir, env: { ...process.env, ZK_LOG: log },
    });
    this.#child = child;
    this.#paused = false;
    this.#exited = new Promise<void>((resolve) => {
      const done = () => {
        if (this.#child === child) this.#child = undefined;
        live.delete(this);
        resolve();
      };
      child.once("exit", done);
      child.once("error", done);
    });
    child.unref();
    live.add(this);
    hookExit();
    if (child.pid !== undefined) {
      const dog = spawn("sh", ["-c", WATCHDOG, "sh", String(process.pid), String(child.pid), this.dir], { stdio: "ignore" });
      dog.on("error", () => {});
      dog.unref();
    }
  }

  /** Resolves once `srvr` reports a Mode: line; kills the JVM and throws (with the log tail) otherwise. */
  async waitServing(timeoutMs = this.#spec.startTimeoutMs): Promise<void> {
    const child = this.#child;
    child?.ref(); // keep the event loop alive while we wait on it
    try {
      const got = await this.serving(timeoutMs, () => !this.running);
      if (got === "gone") throw this.#startError("exited before serving");
      if (got === "timeout") {
        await this.kill();
        throw this.#startError(`not serving after ${timeoutMs} ms`);
      }
    } finally {
      child?.unref();
    }
  }

  async start(): Promise<void> {
    this.launch();
    await this.waitServing();
  }

  async kill(signal: "SIGKILL" | "SIGTERM" = "SIGKILL"): Promise<void> {
    const child = this.#child;
    if (!child?.pid) return;
    child.ref();
    try {
      if (this.#paused) this.#signal("SIGCONT"); // a stopped JVM cannot run its shutdown
      this.#signal(signal);
      if (signal === "SIGTERM") {
        const t = setTimeout(() => this.#signal("SIGKILL"), 15_000);
        await this.#exited;
        clearTimeout(t);
      } else {
        await this.#exited;
      }
    } finally {
      child.unref();
    }
  }

  // Signals stop threads asynchronously: a JVM may still answer for a moment after kill(2)
  // returns, so wait until every thread shows the wanted state in /proc.
  async pause(): Promise<void> {
    if (!this.running) throw new Error(`server ${this.id} is not running`);
    this.#signal("SIGSTOP");
    this.#paused = true;
    await this.#threadsStopped(true);
  }

  async resume(): Promise<void> {
    if (!this.running) throw new Error(`server ${this.id} is not running`);
    this.#signal("SIGCONT");
    this.#paused = false;
    await this.#threadsStopped(false);
  }

  async #threadsStopped(stopped: boolean): Promise<void> {
    const pid = this.#child?.pid;
    const deadline = Date.now() + 5000;
    while (pid !== undefined && Date.now() < deadline) {
      const states = threadStates(pid);
      if (states === undefined) return; // no /proc: nothing better to do than trust the signal
      if (states.every((st) => (st === "T") === stopped)) return;
      await hold(5);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.kill("SIGKILL");
    this.#closed = true;
    await rm(this.dir, { recursive: true, force: true });
  }

  /** For the process 'exit' hook: no awaiting possible there. */
  killSync(): void {
    this.#signal("SIGKILL");
    rmSync(this.dir, { recursive: true, force: true });
  }

  #signal(sig: NodeJS.Signals): void {
    const pid = this.#child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }

  #startError(what: string): StartError {
    const tail = this.logTail();
    const bind = /BindException|Address already in use/.test(tail);
    return new StartError(`ZooKeeper server ${this.id} (${this.connectString}, ${this.dir}) ${what}. server.log tail:\n${tail}`, bind);
  }
}
