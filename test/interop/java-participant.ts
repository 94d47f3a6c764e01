// Runs test/interop/LatchParticipant.java (Apache Curator 5.4.0 LeaderLatch, Debian jars) as a
// child process and exposes its stdout lines as an async event queue.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("./LatchParticipant.java", (import.meta as { url: string }).url));
const RECIPES_JAR = "/usr/share/java/curator-recipes.jar"; // its manifest brings framework, client, zookeeper
const RUN_JARS = [RECIPES_JAR, "/usr/share/java/slf4j-nop.jar"];
const JVM_FLAGS = ["-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]; // small, quick to start

export interface ParticipantEvent {
  kind: string; // READY, ELECTED, REVOKED, STATE, LEADER, PARTICIPANTS, PATH, HAS, CLOCK, CLOSED, ERROR
  args: string[];
  line: string;
  monoNs: bigint | null; // System.nanoTime() (CLOCK_MONOTONIC) for stamped events; see localNs()
  epochMs: number | null;
  receivedNs: bigint; // process.hrtime.bigint() when the line arrived here
}

let compiled: Promise<string> | null = null;

// Compiles once per source content into a cache dir; another process racing us is harmless.
export function compileParticipant(): Promise<string> {
  compiled ??= (async () => {
    const src = await fs.readFile(SOURCE);
    const hash = createHash("sha256").update(src).digest("hex").slice(0, 16);
    const dir = path.join(os.tmpdir(), "zookeeper-ts-interop", hash);
    const fresh = await fs.stat(path.join(dir, "LatchParticipant.class")).then(
      async (cls) => cls.mtimeMs >= (await fs.stat(SOURCE)).mtimeMs,
      () => false,
    );
    if (fresh) return dir;
    await fs.mkdir(path.dirname(dir), { recursive: true });
    const tmp = await fs.mkdtemp(`${dir}-tmp-`);
    await run("javac", ["-nowarn", "-d", tmp, "-cp", RECIPES_JAR, SOURCE]);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(tmp, dir).catch(() => fs.rm(tmp, { recursive: true, force: true }));
    return dir;
  })();
  compiled.catch(() => (compiled = null));
  return compiled;
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, (err, _out, stderr) => (err ? reject(new Error(`${cmd} failed: ${stderr || err.message}`)) : resolve())),
  );
}

export interface ParticipantOptions {
  connectString: string;
  electionPath: string;
  id: string;
  sessionTimeoutMs?: number;
}

const live = new Set<JavaParticipant>();

export async function startParticipant(opts: ParticipantOptions): Promise<JavaParticipant> {
  const dir = await compileParticipant();
  const args = [...JVM_FLAGS, "-cp", [dir, ...RUN_JARS].join(":"), "LatchParticipant", opts.connectString, opts.electionPath, opts.id];
  if (opts.sessionTimeoutMs !== undefined) args.push(String(opts.sessionTimeoutMs));
  const p = new JavaParticipant(opts.id, spawn("java", args, { stdio: ["pipe", "pipe", "pipe"] }));
  await p.syncClock();
  return p;
}

// Kills every participant still running (for afterAll hooks).
export async function killAllParticipants(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill("SIGKILL")));
}

export class JavaParticipant {
  readonly id: string;
  readonly events: ParticipantEvent[] = []; // full history, in arrival order
  readonly exited: Promise<number | null>;
  private readonly proc: ChildProcess;
  private readonly pending: ParticipantEvent[] = []; // not yet taken by next()/waitFor()
  private waiters: Array<{ match: (e: ParticipantEvent) => boolean; resolve: (e: ParticipantEvent) => void; reject: (err: Error) => void }> = [];
  private stderr = "";
  private exitCode: number | null | undefined = undefined;

  constructor(id: string, proc: ChildProcess) {
    this.id = id;
    this.proc = proc;
    live.add(this);
    let partial = "";
    proc.stdout?.setEncoding("utf8");
    proc.stdout?.on("data", (s: string) => {
      const parts = (partial + s).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) if (line.trim()) this.onLine(line.trim());
    });
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (s: string) => (this.stderr = (this.stderr + s).slice(-4000)));
    proc.stdin?.on("error", () => {}); // EPIPE after the JVM exited
    this.exited = new Promise((resolve) => {
      proc.on("error", (err) => {
        this.stderr += String(err);
        this.onExit(null, resolve);
      });
      proc.on("exit", (code) => this.onExit(code, resolve));
    });
  }

  // The JVM's System.nanoTime() minus this process's process.hrtime.bigint(), ± clockErrorNs.
  // Under Node both read CLOCK_MONOTONIC (offset ≈ 0); Bun's and Deno's hrtime count from
  // their own process start, so stamps must be shifted before comparing.
  clockOffsetNs = 0n;
  clockErrorNs = 0n;

  async syncClock(samples = 5): Promise<void> {
    let best: { rtt: bigint; offset: bigint } | null = null;
    for (let i = 0; i < samples; i++) {
      const t0 = process.hrtime.bigint();
      const [javaNs] = await this.ask("clock?", "CLOCK", 30_000);
      const t1 = process.hrtime.bigint();
      const rtt = t1 - t0;
      if (!best || rtt < best.rtt) best = { rtt, offset: BigInt(javaNs) - (t0 + t1) / 2n };
    }
    if (best) {
      this.clockOffsetNs = best.offset;
      this.clockErrorNs = best.rtt / 2n + 1n;
    }
  }

  // An event's stamp on this process's process.hrtime.bigint() scale.
  localNs(e: ParticipantEvent): bigint | null {
    return e.monoNs === null ? null : e.monoNs - this.clockOffsetNs;
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  private onLine(line: string): void {
    const [kind, ...args] = line.split(" ");
    const stamped = kind === "ELECTED" || kind === "REVOKED" || kind === "STATE" || kind === "CLOCK";
    const at = kind === "STATE" ? 1 : 0;
    const e: ParticipantEvent = {
      kind,
      args,
      line,
      monoNs: stamped ? BigInt(args[at]) : null,
      epochMs: stamped ? Number(args[at + 1]) : null,
      receivedNs: process.hrtime.bigint(),
    };
    this.events.push(e);
    const w = this.waiters.find((x) => x.match(e));
    if (w) {
      this.waiters = this.waiters.filter((x) => x !== w);
      w.resolve(e);
    } else this.pending.push(e);
  }

  private onExit(code: number | null, resolve: (c: number | null) => void): void {
    if (this.exitCode !== undefined) return;
    this.exitCode = code;
    live.delete(this);
    for (const w of this.waiters) w.reject(new Error(`participant ${this.id} exited (${code}) ${this.describe()}`));
    this.waiters = [];
    resolve(code);
  }

  private describe(): string {
    return `lines: ${this.events.map((e) => e.line).join(" | ")}; stderr: ${this.stderr.trim().slice(-800)}`;
  }

  // Takes the first not-yet-taken event that matches (other events stay queued, in order).
  private take(match: (e: ParticipantEvent) => boolean, timeoutMs: number, what: string): Promise<ParticipantEvent> {
    const i = this.pending.findIndex(match);
    if (i >= 0) return Promise.resolve(this.pending.splice(i, 1)[0]);
    if (this.exitCode !== undefined) return Promise.reject(new Error(`participant ${this.id} exited (${this.exitCode}) before ${what}; ${this.describe()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`participant ${this.id}: no ${what} within ${timeoutMs} ms; ${this.describe()}`));
      }, timeoutMs);
      const w = {
        match,
        resolve: (e: ParticipantEvent) => (clearTimeout(timer), resolve(e)),
        reject: (err: Error) => (clearTimeout(timer), reject(err)),
      };
      this.waiters.push(w);
    });
  }

  next(timeoutMs = 10_000): Promise<ParticipantEvent> {
    return this.take(() => true, timeoutMs, "event");
  }

  waitFor(kind: string, timeoutMs = 10_000): Promise<ParticipantEvent> {
    return this.take((e) => e.kind === kind, timeoutMs, kind);
  }

  // Every event in order until the process has exited and the queue is empty.
  async *[Symbol.asyncIterator](): AsyncGenerator<ParticipantEvent> {
    for (;;) {
      try {
        yield await this.next(2 ** 31 - 1);
      } catch (err) {
        if (!this.running && this.pending.length === 0) return;
        throw err;
      }
    }
  }

  send(cmd: string): void {
    if (this.running) this.proc.stdin?.write(`${cmd}\n`);
  }

  async ask(cmd: string, replyKind: string, timeoutMs = 10_000): Promise<string[]> {
    this.send(cmd);
    const e = await this.take((x) => x.kind === replyKind || x.kind === "ERROR", timeoutMs, replyKind);
    if (e.kind === "ERROR") throw new Error(`participant ${this.id}: ${e.line}`);
    return e.args;
  }

  async leader(): Promise<string | null> {
    const [id] = await this.ask("leader?", "LEADER");
    return id === "-" ? null : id;
  }

  async participants(): Promise<string[]> {
    const [ids] = await this.ask("participants?", "PARTICIPANTS");
    return ids ? ids.split(",") : [];
  }

  async ourPath(): Promise<string> {
    return (await this.ask("path?", "PATH"))[0];
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    if (this.running) this.proc.kill(signal);
    return this.exited;
  }

  // latch.close() (Curator deletes our znode), then exit 0; SIGKILL if that takes too long.
  async close(timeoutMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.send("close");
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}
