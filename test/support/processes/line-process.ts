// A child process that speaks the participant line protocol (participant.ts, chaos-participant.ts,
// LatchParticipant.java): its stdout lines become an event queue (waitFor), stdin takes commands
// (send, ask), and its stamps are mapped onto this process's hrtime clock (syncClock, localNs).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../../../", (import.meta as { url: string }).url));

export type Runtime = "node" | "bun" | "deno";

/** The command that runs a TypeScript file under `runtime`, from the repo root (its node_modules/.bin). */
export function runtimeCommand(runtime: Runtime, script: string): [string, string[]] {
  switch (runtime) {
    case "node":
      return ["node", ["--import", "tsx", script]];
    case "bun":
      return [`${REPO}node_modules/.bin/bun`, [script]];
    case "deno":
      return [`${REPO}node_modules/.bin/deno`, ["run", "-A", script]];
  }
}

export const REPO_DIR = REPO;

export interface LineEvent {
  kind: string; // READY, ELECTED, REVOKED, WATCH, STATE, LEADER, PARTICIPANTS, PATH, HAS, CLOCK, CLOSED, ERROR, ...
  args: string[];
  line: string;
  monoNs: bigint | null; // the child's monotonic clock (hrtime / System.nanoTime) for stamped lines
  epochMs: number | null;
  receivedNs: bigint; // our process.hrtime.bigint() when the line arrived
}

// A child must never outlive the test process, also when a test fails, times out or the runner is
// killed: an 'exit' hook SIGKILLs what is still running, and a tiny sh watchdog per child (as for the
// JVMs in zk-local.ts) SIGCONTs and SIGKILLs it once our process is gone (its parent pid changes). A
// stopped child (SIGSTOP in the chaos runs) would otherwise never read the stdin EOF that ends it.
const WATCHDOG = `P=$1 C=$2
while [ -e /proc/$C ]; do
  read -r _ _ _ pp _ < /proc/$$/stat
  if [ "$pp" != "$P" ]; then kill -CONT $C 2>/dev/null; kill -9 $C 2>/dev/null; exit 0; fi
  sleep 1
done`;
const alive = new Set<ChildProcess>();
let hooked = false;
function guard(proc: ChildProcess): void {
  if (proc.pid === undefined) return;
  alive.add(proc);
  proc.once("exit", () => alive.delete(proc));
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const c of alive) {
        try {
          if (c.pid !== undefined) process.kill(c.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    });
  }
  const dog = spawn("sh", ["-c", WATCHDOG, "sh", String(process.pid), String(proc.pid)], { stdio: "ignore" });
  dog.on("error", () => {});
  dog.unref();
}

type Waiter = { match(l: LineEvent): boolean; resolve(l: LineEvent): void; reject(e: Error): void };

export class LineProcess {
  readonly id: string;
  readonly lines: LineEvent[] = []; // everything, in arrival order
  readonly exited: Promise<number | null>;
  /** Resolves once the child's stdout has ended: every line it wrote is in `lines` (`exited` may come first). */
  readonly drained: Promise<void>;
  protected readonly proc: ChildProcess;
  protected readonly unread: LineEvent[] = []; // not yet taken by waitFor()
  private waiters: Waiter[] = [];
  private readonly listeners = new Set<(l: LineEvent) => void>();
  private stderr = "";
  private exit: number | null | undefined = undefined;
  /** The child's clock minus ours (ns), ± clockErrorNs, once syncClock() ran; 0 assumes one CLOCK_MONOTONIC. */
  clockOffsetNs = 0n;
  clockErrorNs = 0n;

  /** `registry` holds the instance while it runs (for kill-all hooks). */
  constructor(id: string, proc: ChildProcess, registry?: Set<LineProcess>) {
    this.id = id;
    this.proc = proc;
    guard(proc);
    registry?.add(this);
    let partial = "";
    proc.stdout?.setEncoding("utf8");
    this.drained = new Promise((resolve) => (proc.stdout ? proc.stdout.once("close", () => resolve()) : resolve()));
    proc.stdout?.on("data", (chunk: string) => {
      const parts = (partial + chunk).split("\n");
      partial = parts.pop() ?? "";
      for (const line of parts) if (line.trim()) this.handleLine(line.trim());
    });
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (s: string) => (this.stderr = (this.stderr + s).slice(-4000)));
    proc.stdin?.on("error", () => {}); // EPIPE once it has exited
    this.exited = new Promise((resolve) => {
      const onExit = (code: number | null): void => {
        if (this.exit !== undefined) return;
        this.exit = code;
        registry?.delete(this);
        for (const w of this.waiters.splice(0)) w.reject(new Error(`participant ${this.id} exited (${code}); ${this.describe()}`));
        resolve(code);
      };
      proc.on("error", (e) => {
        this.stderr += String(e);
        onExit(null);
      });
      proc.on("exit", onExit);
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
    // STATE <state> <ns> <ms>; WATCH <path> [<ns> <ms>] (a lock contender stamps its wake-ups); the rest lead with <ns>.
    const at = kind === "STATE" || kind === "WATCH" ? 1 : 0;
    const stamped = kind === "ELECTED" || kind === "REVOKED" || kind === "CLOCK" || kind === "STATE" || kind === "ZKWATCH" || kind === "SLOW" || kind === "STALL" || (kind === "WATCH" && /^\d+$/.test(args[1] ?? ""));
    const l: LineEvent = {
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

  describe(): string {
    return `lines: ${this.lines.map((l) => l.line).join(" | ")}; stderr: ${this.stderr.trim().slice(-800)}`;
  }

  /** The first unread line of `kind` (earlier unread lines of other kinds stay queued). */
  waitFor(kind: string | ((l: LineEvent) => boolean), timeoutMs = 10_000): Promise<LineEvent> {
    if (typeof kind === "string") return this.take((l) => l.kind === kind, timeoutMs, kind);
    return this.take(kind, timeoutMs, "a matching line");
  }

  /** The first unread line of `kind`; rejects with the line when an ERROR line comes first. */
  async expect(kind: string, timeoutMs = 10_000): Promise<string[]> {
    const l = await this.take((x) => x.kind === kind || x.kind === "ERROR", timeoutMs, kind);
    if (l.kind === "ERROR") throw new Error(`participant ${this.id}: ${l.line}`);
    return l.args;
  }

  protected take(match: (l: LineEvent) => boolean, timeoutMs: number, what: string): Promise<LineEvent> {
    const i = this.unread.findIndex(match);
    if (i >= 0) return Promise.resolve(this.unread.splice(i, 1)[0]);
    if (!this.alive) return Promise.reject(new Error(`participant ${this.id} exited (${this.exit}) before ${what}; ${this.describe()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`participant ${this.id}: no ${what} within ${timeoutMs} ms; ${this.describe()}`));
      }, timeoutMs);
      const w: Waiter = {
        match,
        resolve: (l) => (clearTimeout(timer), resolve(l)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      };
      this.waiters.push(w);
    });
  }

  /** Calls `fn` with every line from now on (besides the queue); returns the unsubscribe. */
  onLine(fn: (l: LineEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  send(cmd: string): void {
    if (this.alive) this.proc.stdin?.write(`${cmd}\n`);
  }

  async ask(cmd: string, reply: string, timeoutMs = 10_000): Promise<string[]> {
    this.send(cmd);
    const l = await this.take((x) => x.kind === reply || x.kind === "ERROR", timeoutMs, reply);
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

  /** Measures the child's clock against ours (Bun's and Deno's hrtime start at their process start). */
  async syncClock(samples = 5, timeoutMs = 10_000): Promise<void> {
    let best: { rtt: bigint; offset: bigint } | null = null;
    for (let i = 0; i < samples; i++) {
      const t0 = process.hrtime.bigint();
      const [ns] = await this.ask("clock?", "CLOCK", timeoutMs);
      const t1 = process.hrtime.bigint();
      if (!best || t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: BigInt(ns) - (t0 + t1) / 2n };
    }
    if (best) {
      this.clockOffsetNs = best.offset;
      this.clockErrorNs = best.rtt / 2n + 1n;
    }
  }

  /** A stamped line's time on our process.hrtime.bigint() scale. */
  localNs(l: LineEvent): bigint | null {
    return l.monoNs === null ? null : l.monoNs - this.clockOffsetNs;
  }

  kill(signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
    if (this.alive) this.proc.kill(signal);
    return this.exited;
  }

  /** Sends "close" (leave, then exit); SIGKILL when that takes longer than timeoutMs. */
  async close(timeoutMs = 10_000): Promise<void> {
    if (!this.alive) return;
    this.send("close");
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }
}
