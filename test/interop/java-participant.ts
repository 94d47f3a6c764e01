// Runs test/interop/LatchParticipant.java (Apache Curator LeaderLatch: 5.4.0, or 5.7.1 with ZK_CURATOR=5.7.1) as a
// child process and exposes its stdout lines as an async event queue (see test/support/processes/line-process.ts).
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { LineProcess, type LineEvent } from "../support/processes/line-process.ts";
import { fetchLine } from "../support/servers/zk-lines.ts";

const SOURCE = fileURLToPath(new URL("./LatchParticipant.java", (import.meta as { url: string }).url));
const RECIPES_JAR = "/usr/share/java/curator-recipes.jar"; // its manifest brings framework, client, zookeeper

/** Which Curator: ZK_CURATOR=5.4 (default: bookworm's 5.4.0 in /usr/share/java) or 5.7.1 (trixie, fetched). */
export type CuratorLine = "5.4" | "5.7.1";
export function curatorLine(env = process.env.ZK_CURATOR): CuratorLine {
  const v = env?.trim() || "5.4";
  if (v === "5.4" || v === "5.4.0") return "5.4";
  if (v === "5.7.1") return "5.7.1";
  throw new Error(`ZK_CURATOR=${v}: known Curator lines are 5.4 (system) and 5.7.1 (Debian trixie, fetched)`);
}

// 5.7.1's jars (and its 3.9.3 ZooKeeper client) come without their manifests' Class-Path, so nothing
// from the system's 5.4.0 / 3.8.0 in /usr/share/java can be loaded in their place.
export async function curatorClasspath(): Promise<string[]> {
  if (curatorLine() === "5.4") return [RECIPES_JAR, "/usr/share/java/slf4j-nop.jar"];
  const dir = await fetchLine("curator-5.7.1");
  return (await fs.readFile(path.join(dir, "classpath"), "utf8")).split("\n").filter(Boolean);
}
export const JVM_FLAGS = ["-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]; // small, quick to start

/** monoNs is the JVM's System.nanoTime() (CLOCK_MONOTONIC); see localNs(). */
export type ParticipantEvent = LineEvent;

const compiled = new Map<string, Promise<string>>();

// Compiles once per source content and classpath into a cache dir named by their hash. The dir only ever appears
// complete (a rename of a finished temporary dir) and is never removed: other processes may be running from it, and
// two test files racing to compile the same source both end up with the first dir renamed into place.
export function compileParticipant(): Promise<string> {
  return compileJava(SOURCE);
}

/** Compiles a participant's .java source (against the selected Curator's jars); resolves to the classes dir. */
export function compileJava(source: string): Promise<string> {
  let job = compiled.get(source);
  if (job) return job;
  job = (async () => {
    const src = await fs.readFile(source);
    const cp = await curatorClasspath();
    const hash = createHash("sha256").update(src).update(cp.join(":")).digest("hex").slice(0, 16);
    const dir = path.join(os.tmpdir(), "zookeeper-ts-interop", hash);
    const main = path.join(dir, `${path.basename(source, ".java")}.class`);
    const built = () => fs.stat(main).then(() => true, () => false);
    if (await built()) return dir;
    await fs.mkdir(path.dirname(dir), { recursive: true });
    const tmp = await fs.mkdtemp(`${dir}-tmp-`);
    try {
      await run("javac", ["-nowarn", "-d", tmp, "-cp", cp.join(":"), source]);
      await fs.rename(tmp, dir).catch(async (err: unknown) => {
        if (!(await built())) throw err; // not another compiler's finished dir in the way
      });
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
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
  const args = [...JVM_FLAGS, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", [dir, ...(await curatorClasspath())].join(":"), "LatchParticipant", opts.connectString, opts.electionPath, opts.id];
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

  /** The Curator jar this JVM loaded LeaderLatch from, and its ZooKeeper client's version. */
  async versions(): Promise<{ curatorJar: string; zookeeperClient: string }> {
    const [curatorJar, zookeeperClient] = await this.ask("versions?", "VERSIONS");
    return { curatorJar, zookeeperClient };
  }

  async ourPath(): Promise<string> {
    return (await this.ask("path?", "PATH"))[0];
  }
}
