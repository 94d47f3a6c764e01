// zkts elect / zkts lock: run any program while this process leads a LeaderElection (holds a Lock, a side of a
// ReadWriteLock or a Semaphore lease), and stop it as soon as that is lost or in doubt, always before the server
// could expire the session and let a successor in (docs/supervisor.md). The child runs in its own process group under
// `setpriv --pdeathsig KILL` (Linux), so a SIGKILLed supervisor takes it along.
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants as fsConstants } from "node:fs";
import { constants as osConstants, hostname } from "node:os";
import { delimiter, join } from "node:path";
import { LeaderElection, Lock, ReadWriteLock, Semaphore, type LockNaming, type SemaphoreLease, type ZooKeeper } from "../index.ts";
import { UsageError } from "./errors.ts";
import { type Context, type Parsed, type Run, intOption } from "./command.ts";
import { errorText, toJson } from "./output.ts";

/** The exit status when leadership (the lock) was lost and the child stopped for it. */
const LOST_STATUS = 3;

type Sig = "SIGTERM" | "SIGINT";

/** Session states after which a recipe on that session is over. */
const ENDED: ReadonlySet<string> = new Set(["expired", "closed", "authFailed"]);

/** `128 + n` for signal n, as a shell reports it. */
function signalStatus(signal: string): number {
  const n = (osConstants.signals as Record<string, number | undefined>)[signal];
  return 128 + (n ?? 0);
}

/** `setpriv` from util-linux (Linux only): gives the child a parent-death signal. */
function findSetpriv(): string | null {
  if (process.platform !== "linux") return null;
  for (const dir of [...(process.env.PATH ?? "").split(delimiter), "/usr/bin", "/bin"]) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, "setpriv"), fsConstants.X_OK);
      return join(dir, "setpriv");
    } catch {
      // not here
    }
  }
  return null;
}

/** Status lines on stderr: plain, or one JSON object per line with --json. */
class Status {
  private readonly ctx: Context;
  readonly command: string;
  constructor(ctx: Context, command: string) {
    this.ctx = ctx;
    this.command = command;
  }
  line(event: string, fields: Record<string, unknown>, text: string): void {
    if (this.ctx.out.json) this.ctx.out.note(toJson({ event, command: this.command, ...fields, at: Date.now() }));
    else this.ctx.out.note(`zkts ${this.command}: ${text}`);
  }
}

/** The supervised program: its own process group, status on exit, and stop (SIGTERM, then SIGKILL). */
class Child {
  readonly pid: number;
  /** The exit status (128+n for signal n; 127 when it could not be started). */
  readonly ended: Promise<number>;
  private readonly proc: ChildProcess | null;
  private exited = false;
  private killAt = Infinity;
  private killTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(argv: readonly string[], env: Record<string, string>) {
    const setpriv = findSetpriv();
    const [file, args] = setpriv ? [setpriv, ["--pdeathsig", "KILL", "--", ...argv]] : [argv[0], argv.slice(1)];
    let proc: ChildProcess | null = null;
    try {
      proc = spawn(file, args, { stdio: "inherit", detached: true, env: { ...process.env, ...env } });
    } catch {
      // some runtimes throw at once for a program that cannot be started: status 127, as a shell says
    }
    this.proc = proc;
    this.pid = proc?.pid ?? -1;
    this.ended = new Promise<number>((resolve) => {
      if (!proc) return resolve(127);
      proc.once("error", () => {
        this.exited = true;
        resolve(127);
      });
      proc.once("exit", (code, signal) => {
        this.exited = true;
        if (this.killTimer !== undefined) clearTimeout(this.killTimer);
        resolve(code ?? (signal ? signalStatus(signal) : 1));
      });
    });
  }

  /** Signals the child's whole process group (the child alone where groups cannot be signalled). */
  signal(sig: NodeJS.Signals): void {
    if (this.pid <= 0) return;
    try {
      process.kill(-this.pid, sig);
    } catch {
      // ESRCH: the group is gone (or this runtime cannot signal groups: the child alone then)
      if (!this.exited) this.proc?.kill(sig);
    }
  }

  /**
   * `sig` to the group now and SIGKILL in `killInMs` (at once when 0) if the child has not ended by then; a
   * SIGKILL already due earlier stays. `onKill` runs when SIGKILL has to be sent.
   */
  terminate(sig: NodeJS.Signals, killInMs: number, onKill: () => void): void {
    if (this.exited) return;
    const at = Date.now() + Math.max(0, killInMs);
    if (at >= this.killAt) return this.signal(sig);
    this.killAt = at;
    if (this.killTimer !== undefined) clearTimeout(this.killTimer);
    const kill = (): void => {
      this.killTimer = undefined;
      if (this.exited) return;
      onKill();
      this.signal("SIGKILL");
    };
    if (killInMs <= 0) return kill();
    this.signal(sig);
    this.killTimer = setTimeout(kill, killInMs);
  }

  /**
   * SIGTERM to the group, SIGKILL after `killInMs` (at once when 0), then SIGKILL to anything left in the group
   * once the child has ended. Resolves with the child's status; `onKill` runs if SIGKILL had to be sent.
   */
  async stop(killInMs: number, onKill: () => void): Promise<number> {
    this.terminate("SIGTERM", killInMs, onKill);
    const status = await this.ended;
    this.signal("SIGKILL"); // grandchildren that outlived it must not outlive the leadership
    return status;
  }
}

/** SIGTERM/SIGINT while supervising: forwarded to a running child (`forward`), else they end the wait. */
class Signals {
  received: Sig | null = null;
  readonly waiting = new AbortController();
  forward: ((sig: Sig) => void) | null = null;
  private readonly handlers = new Map<Sig, () => void>();

  constructor() {
    for (const sig of ["SIGTERM", "SIGINT"] as const) {
      const h = (): void => {
        this.received = sig;
        if (this.forward) this.forward(sig);
        else this.waiting.abort(new Error(`interrupted by ${sig}`));
      };
      this.handlers.set(sig, h);
      process.on(sig, h);
    }
  }

  dispose(): void {
    for (const [sig, h] of this.handlers) process.off(sig, h);
  }
}

interface Options {
  path: string;
  argv: string[];
  graceMs: number;
}

/** The command line parseCommand checked (a `--`, a COMMAND after it). */
function options(command: string, a: Parsed): Options {
  return { path: a.positionals[0], argv: a.rest ?? [], graceMs: intOption(a, "grace", `${command} --grace MS`, 0) ?? 5000 };
}

/** Fires `onLapse` when the lease (heard from within the read timeout) lapses: on a timer and on a resume. */
function watchLease(zk: ZooKeeper, onLapse: () => void): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const left = zk.leaseRemaining(zk.readTimeout);
    if (left <= 0) onLapse();
    else timer = setTimeout(check, Math.ceil(left) + 1);
  };
  zk.on("resumed", check);
  check();
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    zk.off("resumed", check);
  };
}

/** ms before the server could expire the session (counted from the last send it acknowledged), less a margin. */
function killDeadline(zk: ZooKeeper): number {
  const margin = Math.min(1000, zk.negotiatedTimeout / 10);
  return Math.max(0, Math.floor(zk.leaseRemaining(zk.negotiatedTimeout) - margin));
}

type Outcome = { kind: "exited"; status: number } | { kind: "lost"; why: string; status: number };

/**
 * Runs the child while leading: resolves when it exited by itself (or after a forwarded signal), or when
 * leadership was lost and the child has been stopped. `lost` registers the recipe's loss event.
 */
async function supervise(
  zk: ZooKeeper, o: Options, env: Record<string, string>, status: Status, signals: Signals, lost: (cb: (why: string) => void) => () => void,
): Promise<Outcome> {
  let onLost: (why: string) => void = () => {};
  const lostNow = new Promise<string>((resolve) => (onLost = resolve));
  const unlisten = lost(onLost);
  const unwatch = watchLease(zk, () => onLost("lease lapsed"));
  const child = new Child(o.argv, env);
  const killed = (): void => status.line("child-killed", { pid: child.pid }, `child ${child.pid}: SIGKILL`);
  status.line("child-started", { pid: child.pid, program: o.argv[0] }, `child ${child.pid} started (${o.argv[0]})`);
  // A signal to the supervisor goes to the child's group, and SIGKILL follows after --grace.
  signals.forward = (sig) => {
    status.line("signal", { signal: sig, pid: child.pid, killInMs: o.graceMs }, `${sig}: forwarded to child ${child.pid} (SIGKILL in ${o.graceMs} ms)`);
    child.terminate(sig, o.graceMs, killed);
  };
  if (signals.received) signals.forward(signals.received); // a signal that came in the meantime
  try {
    const first = await Promise.race([child.ended.then((s) => ({ kind: "exited" as const, status: s })), lostNow.then((why) => ({ kind: "lost" as const, why }))]);
    if (first.kind === "exited") {
      status.line("child-ended", { pid: child.pid, status: first.status }, `child ${child.pid} ended with status ${first.status}`);
      child.signal("SIGKILL"); // leftovers in its process group
      return first;
    }
    const killIn = Math.min(o.graceMs, killDeadline(zk));
    const loss = status.command === "lock" ? "lost" : "revoked";
    status.line(loss, { reason: first.why, pid: child.pid, killInMs: killIn }, `${loss} (${first.why}): stopping child ${child.pid} (SIGTERM, SIGKILL in ${killIn} ms)`);
    const s = await child.stop(killIn, killed);
    status.line("child-ended", { pid: child.pid, status: s }, `child ${child.pid} ended with status ${s}`);
    return { kind: "lost", why: first.why, status: s };
  } finally {
    signals.forward = null;
    unwatch();
    unlisten();
  }
}

function requireCommandLine(ctx: Context, command: string): () => Promise<ZooKeeper> {
  if (!ctx.connect) throw new UsageError(`${command} runs only as a command of its own, not in the shell`);
  return ctx.connect;
}

async function elect(ctx: Context, a: Parsed): Promise<number> {
  const reconnect = requireCommandLine(ctx, "elect");
  const o = options("elect", a);
  const id = typeof a.values.id === "string" ? a.values.id : `${hostname()}:${process.pid}`;
  const status = new Status(ctx, "elect");
  const signals = new Signals();
  let zk = ctx.zk;
  const leave = async (election: LeaderElection, exit: number): Promise<number> => {
    await election.close().catch(() => {});
    return exit;
  };
  try {
    for (let first = true; ; first = false) {
      if (ENDED.has(zk.state)) {
        if (zk !== ctx.zk) await zk.close().catch(() => {});
        const next = await newSession(reconnect, status, signals);
        if (next === null) return signalStatus(signals.received ?? "SIGTERM");
        zk = next;
      }
      const election = new LeaderElection(zk, o.path, { id });
      try {
        await election.start();
      } catch (e) {
        if (first) throw e; // a ZooKeeper error at start: exit 1
        status.line("error", { message: errorText(e) }, `cannot join: ${errorText(e)}`);
        await election.close().catch(() => {});
        if (!(await pause(1000, signals))) return signalStatus(signals.received ?? "SIGTERM");
        continue;
      }
      status.line("waiting", { path: o.path, id }, `waiting to lead ${o.path} as ${id}`);
      for (;;) {
        try {
          await election.waitForLeadership({ signal: signals.waiting.signal });
        } catch {
          if (signals.received) return await leave(election, signalStatus(signals.received));
          break; // the election ended with its session: a new session, and join again
        }
        const token = election.token;
        if (token === undefined) continue; // lost again before the child could start
        status.line("elected", { path: o.path, id, token: token.toString() }, `elected at ${o.path} as ${id} (token ${token})`);
        const env = { ZK_FENCING_TOKEN: token.toString(), ZK_ELECTION_PATH: o.path, ZK_LEADER_ID: id };
        const r = await supervise(zk, o, env, status, signals, (cb) => {
          election.on("revoked", cb);
          return () => election.off("revoked", cb);
        });
        if (r.kind === "exited" || signals.received) return await leave(election, r.status);
        if (a.values.once === true) {
          // As lock: our candidate is deleted once the link is back, or goes with the session; exit now, not then.
          void election.close().catch(() => {});
          return LOST_STATUS;
        }
        if (ENDED.has(zk.state)) break; // the session is over, and the election with it
        status.line("rejoining", { path: o.path, id }, `waiting to lead ${o.path} again`);
      }
      await election.close().catch(() => {});
    }
  } finally {
    signals.dispose();
    if (zk !== ctx.zk) await zk.close().catch(() => {});
  }
}

/** Waits `ms`; false when a signal ended the wait. */
function pause(ms: number, signals: Signals): Promise<boolean> {
  const abort = signals.waiting.signal;
  if (abort.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const done = (): void => {
      clearTimeout(t);
      abort.removeEventListener("abort", done);
      resolve(!abort.aborted);
    };
    const t = setTimeout(done, ms);
    abort.addEventListener("abort", done, { once: true });
  });
}

/** After an ended session: connects again (with a growing pause) until it works; null when a signal ends the wait. */
async function newSession(reconnect: () => Promise<ZooKeeper>, status: Status, signals: Signals): Promise<ZooKeeper | null> {
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    status.line("reconnecting", {}, "the session ended: connecting again");
    try {
      const zk = await reconnect();
      if (!signals.received) return zk;
      await zk.close().catch(() => {});
      return null;
    } catch (e) {
      status.line("error", { message: errorText(e) }, `cannot connect: ${errorText(e)}`);
    }
    if (!(await pause(delay, signals))) return null;
  }
}

/**
 * What `zkts lock` holds: a Lock, a side of a ReadWriteLock (--shared: read, --exclusive: write), or a Semaphore lease
 * (--semaphore N). A plain Lock is not a ReadWriteLock's write side: its names differ (Curator's InterProcessMutex and
 * InterProcessReadWriteLock are two recipes), so only --exclusive keeps --shared holders out.
 */
interface Holding {
  /** How the status lines name it: "the lock /x", "the read lock /x", "a lease of /x (N permits)". */
  what: string;
  /** --json fields of the waiting and acquired lines. */
  fields: Record<string, unknown>;
  /** Resolves once held; the environment for the child, or null when it was lost again before the child could start. */
  acquire(signal: AbortSignal): Promise<{ env: Record<string, string>; fields: Record<string, unknown>; text: string } | null>;
  /** Registers the "lost" listener; returns its removal. */
  onLost(cb: (why: string) => void): () => void;
  /** Gives it back (or gives up the wait); resolves once its znode is gone. */
  release(): Promise<void>;
}

function lockHolding(l: Lock, path: string, what: string, fields: Record<string, unknown>): Holding {
  return {
    what,
    fields,
    async acquire(signal) {
      await l.acquire({ signal });
      const token = l.token;
      if (token === undefined) return null;
      return { env: { ZK_FENCING_TOKEN: token.toString(), ZK_LOCK_PATH: path }, fields: { token: token.toString() }, text: `token ${token}` };
    },
    onLost: (cb) => (l.on("lost", cb), () => l.off("lost", cb)),
    release: () => l.release(),
  };
}

function semaphoreHolding(zk: ZooKeeper, path: string, permits: number, naming: LockNaming, id: string): Holding {
  const semaphore = new Semaphore(zk, path, { permits, naming, id });
  let lease: SemaphoreLease | null = null;
  return {
    what: `a lease of ${path} (${permits} permit${permits === 1 ? "" : "s"})`,
    fields: { mode: "semaphore", permits, naming },
    async acquire(signal) {
      lease = await semaphore.acquire({ signal });
      if (!lease.isHeld) return null;
      return { env: { ZK_LOCK_PATH: path, ZK_LEASE_PATH: lease.path }, fields: { lease: lease.path }, text: lease.path };
    },
    onLost: (cb) => {
      const l = lease!;
      l.on("lost", cb);
      return () => l.off("lost", cb);
    },
    release: () => lease?.release() ?? Promise.resolve(),
  };
}

async function lock(ctx: Context, a: Parsed): Promise<number> {
  requireCommandLine(ctx, "lock");
  const o = options("lock", a);
  const status = new Status(ctx, "lock");
  const signals = new Signals();
  const zk = ctx.zk;
  const id = `${hostname()}:${process.pid}`;
  const naming: LockNaming = a.values.naming === "kazoo" ? "kazoo" : "curator"; // checked by parseCommand
  const permits = intOption(a, "semaphore", "lock --semaphore N", 1);
  try {
    const h =
      permits !== undefined
        ? semaphoreHolding(zk, o.path, permits, naming, id)
        : a.values.shared === true
          ? lockHolding(new ReadWriteLock(zk, o.path, { id, naming }).readLock, o.path, `the read lock ${o.path}`, { mode: "shared", naming })
          : a.values.exclusive === true
            ? lockHolding(new ReadWriteLock(zk, o.path, { id, naming }).writeLock, o.path, `the write lock ${o.path}`, { mode: "exclusive", naming })
            : lockHolding(new Lock(zk, o.path, { id, naming }), o.path, `the lock ${o.path}`, { mode: "lock", naming });
    status.line("waiting", { path: o.path, id, ...h.fields }, `waiting for ${h.what} as ${id}`);
    let held;
    try {
      held = await h.acquire(signals.waiting.signal);
    } catch (e) {
      if (signals.received) return signalStatus(signals.received);
      throw e;
    }
    if (held === null) {
      status.line("lost", { reason: "disconnected" }, `lost ${h.what} before the child could start`);
      await h.release().catch(() => {});
      return LOST_STATUS;
    }
    status.line("acquired", { path: o.path, ...h.fields, ...held.fields }, `holding ${h.what} (${held.text})`);
    const r = await supervise(zk, o, held.env, status, signals, (cb) => h.onLost(cb));
    if (r.kind === "exited" || signals.received) {
      await h.release().catch(() => {});
      return r.status;
    }
    void h.release().catch(() => {}); // deleted once the link is back, or gone with the session
    return LOST_STATUS;
  } finally {
    signals.dispose();
  }
}

export const commands: Record<string, Run> = { elect, lock };
