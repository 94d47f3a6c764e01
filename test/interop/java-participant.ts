// Runs test/interop/LatchParticipant.java (Apache Curator 5.4.0 LeaderLatch, Debian jars) as a
// child process and exposes its stdout lines as an async event queue (see test/support/line-process.ts).
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LineProcess, type LineEvent } from "../support/line-process.ts";

const SOURCE = fileURLToPath(new URL("./LatchParticipant.java", (import.meta as { url: string }).url));
const RECIPES_JAR = "/usr/share/java/curator-recipes.jar"; // its manifest brings framework, client, zookeeper
export const RUN_JARS = [RECIPES_JAR, "/usr/share/java/slf4j-nop.jar"];
export const JVM_FLAGS = ["-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]; // small, quick to start

/** monoNs is the JVM's System.nanoTime() (CLOCK_MONOTONIC); see localNs(). */
export type ParticipantEvent = LineEvent;

const compiled = new Map<string, Promise<string>>();

// Compiles once per source content into a cache dir; another process racing us is harmless.
export function compileParticipant(): Promise<string> {
  return compileJava(SOURCE);
}

/** Compiles a participant's .java source (against the Curator jars); resolves to the classes dir. */
export function compileJava(source: string): Promise<string> {
  let job = compiled.get(source);
  if (job) return job;
  job = (async () => {
    const src = await fs.readFile(source);
    const hash = createHash("sha256").update(src).digest("hex").slice(0, 16);
    const dir = path.join(os.tmpdir(), "zookeeper-ts-interop", hash);
    const main = `${path.basename(source, ".java")}.class`;
    const fresh = await fs.stat(path.join(dir, main)).then(
      async (cls) => cls.mtimeMs >= (await fs.stat(source)).mtimeMs,
      () => false,
    );
    if (fresh) return dir;
    await fs.mkdir(path.dirname(dir), { recursive: true });
    const tmp = await fs.mkdtemp(`${dir}-tmp-`);
    await run("javac", ["-nowarn", "-d", tmp, "-cp", RECIPES_JAR, source]);
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rename(tmp, dir).catch(() => fs.rm(tmp, { recursive: true, force: true }));
    return dir;
  })();
  compiled.set(source, job);
  job.catch(() => compiled.delete(source));
  return job;
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

const live = new Set<LineProcess>();

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

export class JavaParticipant extends LineProcess {
  constructor(id: string, proc: ChildProcess) {
    super(id, proc, live);
  }

  /** Full history, in arrival order. */
  get events(): ParticipantEvent[] {
    return this.lines;
  }

  get running(): boolean {
    return this.alive;
  }

  // The JVM's System.nanoTime() minus this process's process.hrtime.bigint(), ± clockErrorNs.
  // Under Node both read CLOCK_MONOTONIC (offset ≈ 0); Bun's and Deno's hrtime count from
  // their own process start, so stamps must be shifted before comparing. A cold JVM answers slowly.
  override syncClock(samples = 5, timeoutMs = 30_000): Promise<void> {
    return super.syncClock(samples, timeoutMs);
  }

  next(timeoutMs = 10_000): Promise<ParticipantEvent> {
    return this.take(() => true, timeoutMs, "event");
  }

  // Every event in order until the process has exited and the queue is empty.
  async *[Symbol.asyncIterator](): AsyncGenerator<ParticipantEvent> {
    for (;;) {
      try {
        yield await this.next(2 ** 31 - 1);
      } catch (err) {
        if (!this.running && this.unread.length === 0) return;
        throw err;
      }
    }
  }

  async ourPath(): Promise<string> {
    return (await this.ask("path?", "PATH"))[0];
  }
}
