// Launches test/support/participant.ts as its own OS process (under Node, Bun or Deno) and turns its
// stdout lines into an event queue: waitFor(kind), send(cmd), ask(cmd), kill(signal).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("./participant.ts", (import.meta as { url: string }).url));
const REPO = fileURLToPath(new URL("../../", (import.meta as { url: string }).url));

export type Runtime = "node" | "bun" | "deno";

export interface ParticipantLine {
  kind: string; // READY, ELECTED, REVOKED, WATCH, STATE, LEADER, PARTICIPANTS, PATH, HAS, CLOCK, CLOSED, ERROR
  args: string[];
  line: string;
  monoNs: bigint | null; // the participant's process.hrtime.bigint() for stamped lines
  epochMs: number | null;
  receivedNs: bigint; // our process.hrtime.bigint() when the line arrived
}

export interface ParticipantSpec {
  connectString: string;
  path: string;
  id: string;
  sessionTimeoutMs?: number;
  runtime?: Runtime;
}

function command(runtime: Runtime): [string, string[]] {
  switch (runtime) {
    case "node":
      return ["node", ["--import", "tsx", SCRIPT]];
    case "bun":
      return [`${REPO}node_modules/.bin/bun`, [SCRIPT]];
    case "deno":
      return [`${REPO}node_modules/.bin/deno`, ["run", "-A", SCRIPT]];
  }
}

const running = new Set<ParticipantProcess>();

/** Spawns a participant and waits for READY. */
export async function spawnParticipant(spec: ParticipantSpec): Promise<ParticipantProcess> {
  const [cmd, base] = command(spec.runtime ?? "node");
  const args = [...base, spec.connectString, spec.path, spec.id];
  if (spec.sessionTimeoutMs !== undefined) args.push(String(spec.sessionTimeoutMs));
  const p = new ParticipantProcess(spec.id, spawn(cmd, args, { cwd: REPO, stdio: ["pipe", "pipe", "pipe"] }));
  try {
    await p.waitFor("READY", 30_000);
  } catch (e) {
    await p.kill("SIGKILL");
    throw e;
  }
  return p;
}

/** SIGKILLs every participant still running (afterAll hooks, Ctrl-C handlers). */
export async function killAllParticipants(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill("SIGKILL")));
}

export class ParticipantProcess {
  readonly id: string;
  readonly lines: ParticipantLine[] = []; // everything, in arrival order
  readonly exited: Promise<number | null>;
  private readonly proc: ChildProcess;
  private readonly unread: ParticipantLine[] = [];
  private waiters: { match(l: ParticipantLine): boolean; resolve(l: ParticipantLine): void; reject(e: Error): void }[] = [];
  private readonly listeners = new Set<(l: ParticipantLine) => void>();
  private stderr = "";
  private exit: number | null | undefined = undefined;
  /** The participant's clock minus ours (ns), once syncClock() ran; 0 assumes one CLOCK_MONOTONIC. */
  clockOffsetNs = 0n;

  constructor(id: string, proc: ChildProcess) {
    this.id = id;
    this.proc = proc;
    running.add(this);
    let partial = "";
    proc.stdout?.setEncoding("utf8");
    proc.stdout?.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) if (line.trim()) this.handleLine(line.trim());
    });
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (s: string) => (this.stderr = (this.stderr + s).slice(-4000)));
    proc.stdin?.on("error", () => {}); // EPIPE once it has exited
    this.exited = new Promise((resolve) => {
      proc.on("error", (e) => {
        this.stderr += String(e);
        this.onExit(null, resolve);
      });
      proc.on("exit", (code) => this.onExit(code, resolve));
    });
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  get alive(): boolean {
    return this.exit === undefined;
  }

  private handleLine(line: string): void {
    const [kind, ...args] = line.split(" ");
    const at = kind === "STATE" ? 1 : 0;
    const stamped = kind === "ELECTED" || kind === "REVOKED" || kind === "CLOCK" || kind === "STATE";
    const l: ParticipantLine = {
      kind,
      args,
      line,
      monoNs: stamped ? BigInt(args[at]) : null,
      epochMs: stamped ? Number(args[at + 1]) : null,
      receivedNs: process.hrtime.bigint(),
    };
    this.lines.push(l);
    for (const fn of this.listeners) fn(l);
    const w = this.waiters.find((x) => x.match(l));
    if (w) {
      this.waiters = this.waiters.filter((x) => x !== w);
      w.resolve(l);
    } else this.unread.push(l);
  }

  private onExit(code: number | null, resolve: (c: number | null) => void): void {
    if (this.exit !== undefined) return;
    this.exit = code;
    running.delete(this);
    for (const w of this.waiters.splice(0)) w.reject(new Error(`participant ${this.id} exited (${code}); ${this.describe()}`));
    resolve(code);
  }

  describe(): string {
    return `lines: ${this.lines.map((l) => l.line).join(" | ")}; stderr: ${this.stderr.trim().slice(-800)}`;
  }

  /** The first unread line of `kind` (earlier unread lines of other kinds stay queued). */
  waitFor(kind: string | ((l: ParticipantLine) => boolean), timeoutMs = 10_000): Promise<ParticipantLine> {
    const match = typeof kind === "string" ? (l: ParticipantLine) => l.kind === kind : kind;
    const what = typeof kind === "string" ? kind : "a matching line";
    const i = this.unread.findIndex(match);
    if (i >= 0) return Promise.resolve(this.unread.splice(i, 1)[0]);
    if (!this.alive) return Promise.reject(new Error(`participant ${this.id} exited before ${what}; ${this.describe()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`participant ${this.id}: no ${what} within ${timeoutMs} ms; ${this.describe()}`));
      }, timeoutMs);
      const w = {
        match,
        resolve: (l: ParticipantLine) => (clearTimeout(timer), resolve(l)),
        reject: (e: Error) => (clearTimeout(timer), reject(e)),
      };
      this.waiters.push(w);
    });
  }

  /** Calls `fn` with every line from now on (besides the queue); returns the unsubscribe. */
  onLine(fn: (l: ParticipantLine) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  send(cmd: string): void {
    if (this.alive) this.proc.stdin?.write(`${cmd}\n`);
  }

  async ask(cmd: string, reply: string, timeoutMs = 10_000): Promise<string[]> {
    this.send(cmd);
    const l = await this.waitFor((x) => x.kind === reply || x.kind === "ERROR", timeoutMs);
    if (l.kind === "ERROR") throw new Error(`participant ${this.id}: ${l.line}`);
    return l.args;
  }

  async leader(): Promise<string | null> {
    const [id] = await this.ask("leader?", "LEADER");
    return id === "-" ? null : id;
  }

  async participants(): Promise<string[]> {
    const [ids] = await this.ask("participants?", "PARTICIPANTS");
    return ids ? ids.split(",") : [];
  }

  /** Measures the participant's clock against ours (Bun's and Deno's hrtime start at their process start). */
  async syncClock(samples = 5): Promise<void> {
    let best: { rtt: bigint; offset: bigint } | null = null;
    for (let i = 0; i < samples; i++) {
      const t0 = process.hrtime.bigint();
      const [ns] = await this.ask("clock?", "CLOCK");
      const t1 = process.hrtime.bigint();
      if (!best || t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: BigInt(ns) - (t0 + t1) / 2n };
    }
    if (best) this.clockOffsetNs = best.offset;
  }

  /** A stamped line's time on our process.hrtime.bigint() scale. */
  localNs(l: ParticipantLine): bigint | null {
    return l.monoNs === null ? null : l.monoNs - this.clockOffsetNs;
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    if (this.alive) this.proc.kill(signal);
    return this.exited;
  }

  /** Asks it to leave the election and exit; SIGKILL when that takes longer than timeoutMs. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (!this.alive) return;
    this.send("close");
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}
