// A Jepsen-style history run against a real ensemble: clients, each through fault proxies of its own (one
// per server), read (linearizable getData), write (unversioned setData, unique values) and cas (setData with the
// version last seen) on a few znodes while rounds of faults hit links and servers. Every operation is
// recorded with its invoke and complete times on one monotonic clock (performance.now) and an outcome
// read from the client's answer; the history is then checked per key (test/support/chaos/linearizability.ts).
//
// Outcomes: a resolved call is ok; a ZooKeeperError naming a server's definite answer (BADVERSION, NONODE,
// ...) is fail, and so is an error saying the request was never written to any link (`sent === false`);
// anything else (CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, an abort) is unknown: it
// may have applied, at any later time.
//
// Reads: getData is served by the server the client is on and may be stale (ZooKeeper promises
// sequential consistency for reads, not linearizability), and sync + getData is not enough either: runs
// here saw a sync + getData on (most likely) the leader return the version before one that a follower had
// acknowledged to another client 0.2 ms before the read began. So the read checked is the client's
// getData(path, { linearizable: true }) (the read, then a check of its version that the leader orders, sent
// again while it fails). A sync + getData before it is checked as well and reported, not asserted
// (HistoryRun.syncLine). CAS writes go through withRetry, as the docs advise.
//
// Holders (lock-participant.ts processes, each through fault proxies of its own): lockers take a Lock in turns
// and electors lead a LeaderElection in turns, each writing its fencing token to a fence znode through the
// recipe's guarded transaction (lock.transaction(), election.transaction()) while it holds. Each link fault
// hits a register client's link and a holder's (in turn; a holder's dropped reply is its guarded multi's).
// Their holds, by their own logs, must never overlap and their tokens must grow (checkExclusive), and the
// tokens on the fence, in commit order, must never go back (checkFence): a holder cut off must stop writing
// before another can take over, or have its write refused by the server.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ZooKeeper, isZooKeeperError, withRetry } from "../../../src/index.ts";
import { OpCode } from "../../../src/protocol/constants.ts";
import { startFaultProxy, type FaultProxy } from "../fakes/fault-proxy.ts";
import { checkExclusive, checkLinearizable, registerModel, type CheckResult, type Hold, type Operation, type Outcome, type RegisterInput, type RegisterOutput } from "./linearizability.ts";
import { rng } from "../prng.ts";
import { hold } from "../wait.ts";
import { LineProcess, REPO_DIR, runtimeCommand, type Runtime } from "../processes/line-process.ts";
import { RUNTIME } from "../processes/cli-run.ts";
import type { ZkEnsemble, ZkServer } from "../servers/zk-types.ts";

export type HistoryOp = Operation<RegisterInput, RegisterOutput>;

/** The faults a run cycles through, one per round. */
export const FAULTS = ["cut", "drop-reply", "half-close", "blackhole", "kill-follower", "stop-leader", "reset"] as const;
export type Fault = (typeof FAULTS)[number];

export interface HistoryOptions {
  root: string; // a fresh parent path; the keys are its children
  keys: readonly string[];
  clients: number;
  rounds: number; // faults injected, cycling through `faults`
  faults?: readonly Fault[]; // default FAULTS
  steadyMs: number; // workload without faults before, between and after the rounds
  seed: number;
  sessionTimeout?: number; // default 6000
  opDeadlineMs?: number; // an op not settled by then is a hang (default 30000)
  blackholeMs?: number; // default 5000 (beyond the read timeout, so the client moves)
  stopMs?: readonly number[]; // how long the leader stays SIGSTOPped, per pass through FAULTS (default [1500])
  children?: readonly Runtime[]; // more clients, each a child process under this runtime (history-participant.ts)
  lockers?: readonly Runtime[]; // processes taking a Lock on root/lock in turns (lock-participant.ts), each under this runtime
  electors?: readonly Runtime[]; // processes leading a LeaderElection on root/election in turns (lock-participant.ts), each under this runtime
}

/** The holds of the lockers or of the electors, checked (checkHolders). */
export interface HoldCheck {
  /** Overlapping holds, tokens going back (checkExclusive), guarded writes out of token order; empty when none. */
  problems: string[];
  /** One line for the run's report (empty without such holders). */
  line: string;
  /** The holds as checked (for planted checks). */
  holds: Hold[];
  /** The guarded writes whose commit the holders saw: the fence's version each made, and the token it wrote (for planted checks). */
  fenced: Fenced[];
}

/** One guarded write of a holder's token to its fence, as committed. */
export interface Fenced {
  version: number;
  token: bigint;
  by: string;
}

/** Guarded writes in fence-version order must carry tokens that never go back (a stale holder's write would); one line per problem. */
export function checkFence(fenced: readonly Fenced[]): string[] {
  const byVersion = [...fenced].sort((x, y) => x.version - y.version);
  const problems: string[] = [];
  for (let i = 1; i < byVersion.length; i++) {
    const [a, b] = [byVersion[i - 1], byVersion[i]];
    if (b.version === a.version) problems.push(`two guarded writes at fence version ${a.version} (${a.by}, ${b.by})`);
    if (b.token < a.token) problems.push(`fence v${b.version}: token ${b.token} (${b.by}) after ${a.token} (${a.by})`);
  }
  return problems;
}

export interface HistoryRun {
  history: HistoryOp[];
  faults: string[]; // what was injected, in order
  hangs: string[]; // operations that never settled
  result: CheckResult;
  checkMs: number;
  summary: string;
  /** The lockers' holds (a Lock's) and their writes through lock.transaction(), checked. */
  lock: HoldCheck;
  /** The electors' holds (leaderships) and their writes through election.transaction(), checked. */
  election: HoldCheck;
  /** The verdict when each read is its sync + getData alone (not its check); the first lines of a violation. */
  syncLine: string;
}

const DEFINITE = new Set(["BADVERSION", "NONODE", "NODEEXISTS", "NOTEMPTY", "BADARGUMENTS", "NOAUTH", "INVALIDACL", "NOCHILDRENFOREPHEMERALS"]);

/** The outcome of a call that rejected with `e`. */
export function outcomeOf(e: unknown): Outcome {
  if ((e as { sent?: boolean } | null)?.sent === false) return "fail"; // never written to any link
  if (isZooKeeperError(e) && DEFINITE.has(e.codeName)) return "fail";
  return "unknown";
}

const text = (d: Uint8Array | null): string => new TextDecoder().decode(d ?? new Uint8Array());

/** What a client's workload reports for one operation (`at` left out: the parent maps `remote` to a server). */
export interface OpReport {
  op: HistoryOp;
  remote: string | null; // the link the client was on when the op settled
  error?: string; // how the call rejected (code name)
  resent?: boolean; // a write withRetry sent again after a loss
  hung?: boolean; // not settled by the deadline (the client stops)
  syncRead?: HistoryOp; // a read's sync + getData alone, for the report
}

/** One client's workload: in this process (runHistory) or in a child process (history-participant.ts). */
export interface Workload {
  name: string;
  root: string;
  keys: readonly string[];
  random: () => number;
  deadlineMs: number;
  now: () => number; // the clock the op's invoke/complete stamps are on (ms)
  running: () => boolean;
  connect: () => Promise<ZooKeeper>; // a new session (after an expiry)
  report: (r: OpReport) => void;
}

/** Runs reads, writes and cas on `w.keys` until `w.running()` turns false or an op hangs; returns the session in use. */
export async function driveClient(w: Workload, first: ZooKeeper): Promise<ZooKeeper> {
  let zk = first;
  let seq = 0;
  const version = new Map<string, number>(); // last version of each key this client saw
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(w.random() * xs.length)];
  // One operation: invoked now, settled (or declared hung) by the deadline, reported.
  // out maps a result to the op's output.
  const call = async <T>(key: string, input: RegisterInput, run: () => Promise<T>, out: (v: T) => RegisterOutput, extra: Partial<OpReport> = {}): Promise<{ output?: RegisterOutput; hung?: true }> => {
    const invoke = w.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), w.deadlineMs)));
    const settled = run().then((v) => ({ v }), (e: unknown) => ({ e }));
    const r = await Promise.race([settled, hung]);
    clearTimeout(timer);
    const complete = w.now();
    const base = { client: w.name, key, invoke, input };
    const remote = zk.remoteAddress;
    if (r === "hung") {
      w.report({ op: { ...base, complete: Infinity, outcome: "unknown" }, remote, hung: true, ...extra });
      return { hung: true };
    }
    if ("v" in r) {
      const output = out(r.v);
      w.report({ op: { ...base, complete, outcome: "ok", output }, remote, ...extra });
      return { output };
    }
    const why = isZooKeeperError(r.e) ? r.e.codeName : r.e instanceof Error ? r.e.name : String(r.e);
    const outcome = outcomeOf(r.e);
    w.report({ op: { ...base, complete: outcome === "unknown" ? Infinity : complete, outcome }, remote, error: why, ...extra });
    return {};
  };

  while (w.running()) {
    if (zk.state === "expired" || zk.state === "closed" || zk.state === "authFailed") {
      await zk.close();
      try {
        zk = await w.connect();
      } catch {
        await hold(200); // every link down for now: try again
        continue;
      }
    }
    const key = pick(w.keys);
    const path = `${w.root}/${key}`;
    const known = version.get(key);
    const dice = w.random();
    const session = zk;
    let r: { output?: RegisterOutput; hung?: true };
    if (dice < 0.4 || known === undefined) {
      // The sync + getData alone is reported; the read checked is the client's linearizable one.
      let syncRead: HistoryOp | undefined;
      try {
        const invoke = w.now();
        await session.sync(path);
        const { data, stat } = await session.getData(path);
        syncRead = { client: w.name, key, invoke, complete: w.now(), outcome: "ok", input: { f: "read" }, output: { value: text(data), version: stat.version } };
      } catch {
        // a lost sync or read: nothing to report
      }
      r = await call(key, { f: "read" }, () => session.getData(path, undefined, { linearizable: true }), ({ data, stat }) => ({ value: text(data), version: stat.version }), syncRead ? { syncRead } : {});
    } else {
      const value = `${w.name}-${++seq}`;
      const input: RegisterInput = dice < 0.7 ? { f: "write", value } : { f: "cas", expected: known, value };
      const expected = input.f === "cas" ? input.expected : undefined;
      // Through withRetry, as the docs advise: a lost reply is sent again and judged by the client, so a CAS
      // that happened is never recorded as failed (the checker would find its value read later).
      let attempts = 0;
      const extra: Partial<OpReport> = {};
      r = await call(key, input, () => withRetry(() => ((extra.resent = ++attempts > 1), session.setData(path, value, expected, { uniqueData: true })), { retries: 3, baseDelay: 20, maxDelay: 200 }), (stat) => ({ version: stat.version }), extra);
    }
    if (r.hung) return zk;
    if (r.output) version.set(key, r.output.version);
    await hold(2 + w.random() * 10); // the workload's pace
  }
  return zk;
}

interface Client {
  name: string;
  runtime: Runtime;
  child: boolean; // a child process (history-participant.ts), else in this process
  proxies: FaultProxy[]; // one per server, in the order of ens.servers
  remote: string | null; // the link it was last on
  done: Promise<unknown>;
}

/** Runs the workload and the faults, then checks the history. Leaves the ensemble with a quorum. */
export async function runHistory(ens: ZkEnsemble, o: HistoryOptions): Promise<HistoryRun> {
  const random = rng(o.seed);
  const cycle = o.faults ?? FAULTS;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const sessionTimeout = o.sessionTimeout ?? 6000;
  const deadline = o.opDeadlineMs ?? 30_000;
  const history: HistoryOp[] = [];
  const hangs: string[] = [];
  const errors = new Map<string, number>(); // how calls rejected, by code name
  const resent = new Map<Outcome, number>(); // writes withRetry sent again after a loss, by final outcome
  const syncReads: HistoryOp[] = []; // each read's sync + getData alone, completed at its getData
  const faults: string[] = [];
  const connectOpts = { sessionTimeout, connectTimeout: 30_000 };
  const runtimesOf = (kind: HoldKind): readonly Runtime[] => (kind === "lock" ? o.lockers : o.electors) ?? [];

  const setup = await ZooKeeper.connect(ens.connectString, connectOpts);
  try {
    await setup.create(o.root);
    for (const k of o.keys) await setup.create(`${o.root}/${k}`, "");
    for (const kind of HOLDS) if (runtimesOf(kind).length) await setup.create(`${o.root}/${kind}-fence`, "");
  } finally {
    await setup.close();
  }

  let running = true;
  const record = (c: Client, r: OpReport): void => {
    c.remote = r.remote;
    const i = c.proxies.findIndex((p) => p.connectString === r.remote);
    const op: HistoryOp = { ...r.op, ...(i >= 0 ? { at: `zk${ens.servers[i].id}` } : {}) };
    history.push(op);
    if (r.syncRead) syncReads.push(r.syncRead);
    if (r.error) errors.set(r.error, (errors.get(r.error) ?? 0) + 1);
    if (r.resent) resent.set(op.outcome, (resent.get(op.outcome) ?? 0) + 1);
    if (r.hung) hangs.push(`${c.name} (${c.runtime}) ${op.input.f} ${op.key} invoked at ${op.invoke.toFixed(0)} ms: not settled after ${deadline} ms`);
  };
  const clients: Client[] = [];
  const children = o.children ?? [];
  const holders: Holder[] = []; // lockers and electors, interleaved (l1, e1, l2, ...): the link faults take them in turn
  try {
    const ids = HOLDS.flatMap((kind) => runtimesOf(kind).map((runtime, i) => ({ kind, runtime, i })));
    ids.sort((a, b) => a.i - b.i); // stable: l1, e1, l2, e2, ...
    const started = await Promise.allSettled(ids.map(({ kind, runtime, i }) => spawnHolder(ens, kind, runtime, o.root, `${kind[0]}${i + 1}`, sessionTimeout)));
    for (const r of started) if (r.status === "fulfilled") holders.push(r.value);
    for (const r of started) if (r.status === "rejected") throw r.reason; // the others are stopped below
    for (let i = 0; i < o.clients + children.length; i++) {
      const proxies = await Promise.all(ens.servers.map((s) => startFaultProxy(s.host, s.clientPort)));
      const child = i >= o.clients;
      const c: Client = { name: `c${i + 1}`, runtime: child ? children[i - o.clients] : RUNTIME, child, proxies, remote: null, done: Promise.resolve() };
      clients.push(c);
      const connectString = proxies.map((p) => p.connectString).join(",");
      if (i >= o.clients) {
        c.done = (await spawnHistoryClient({ runtime: children[i - o.clients], connectString, root: o.root, keys: o.keys, name: c.name, seed: o.seed * 31 + i, sessionTimeout, deadlineMs: deadline }, (r) => record(c, r), () => running)).done;
        continue;
      }
      const first = await ZooKeeper.connect(connectString, connectOpts);
      c.remote = first.remoteAddress;
      const w: Workload = {
        name: c.name, root: o.root, keys: o.keys, random: rng(o.seed * 31 + i), deadlineMs: deadline, now: () => performance.now(),
        running: () => running, connect: () => ZooKeeper.connect(connectString, connectOpts), report: (r) => record(c, r),
      };
      c.done = driveClient(w, first).then((zk) => zk.close());
    }

    const linkOf = (c: Client): FaultProxy => c.proxies.find((p) => p.connectString === c.remote) ?? pick(c.proxies);
    const follower = async (): Promise<ZkServer> => {
      const leader = await ens.leader();
      return pick(ens.servers.filter((s) => s !== leader && s.running));
    };
    // A link fault hits the link of one register client and, when there are any, of one holder (in turn).
    let linkFaults = 0;
    const inject = async (f: Fault, round: number): Promise<void> => {
      const c = clients[round % clients.length];
      const targets: { who: string; link: FaultProxy; opcode: number; op: string }[] = [{ who: c.name, link: linkOf(c), opcode: OpCode.setData, op: "setData" }];
      if (holders.length && !["kill-follower", "stop-leader"].includes(f)) {
        const h = holders[linkFaults++ % holders.length];
        targets.push({ who: h.p.id, link: h.proxies.find((p) => p.connections > 0) ?? pick(h.proxies), opcode: OpCode.multi, op: "guarded multi" });
      }
      const on = targets.map((t) => `${t.who}'s link ${t.link.connectString}`).join(" and ");
      switch (f) {
        case "cut":
          for (const t of targets) t.link.cut();
          faults.push(`cut ${on}`);
          break;
        case "reset":
          for (const t of targets) t.link.reset();
          faults.push(`reset ${on}`);
          break;
        case "drop-reply": {
          // the next setData (a holder's: its next guarded multi) reaches the server; its reply never reaches the client
          const fired = await Promise.all(targets.map(async (t) => {
            const cut = t.link.cutAfterRequest(t.opcode, { forward: true });
            const ok = await Promise.race([cut.then((r) => r.fired), hold(3000).then(() => false)]);
            return ok ? `dropped a ${t.op} reply on ${t.who}'s link ${t.link.connectString}` : `drop-reply on ${t.who}'s link ${t.link.connectString} armed, no ${t.op} passed within 3 s`;
          }));
          faults.push(fired.join(" and "));
          break;
        }
        case "half-close":
          for (const t of targets) t.link.halfClose();
          faults.push(`half-closed ${on} (replies dropped)`);
          break;
        case "blackhole":
          for (const t of targets) t.link.blackhole(true);
          await hold(o.blackholeMs ?? 5000);
          for (const t of targets) t.link.blackhole(false);
          faults.push(`blackholed ${on} for ${o.blackholeMs ?? 5000} ms`);
          break;
        case "kill-follower": {
          const s = await follower();
          await s.kill("SIGKILL");
          await hold(1500);
          await s.start();
          await ens.waitForQuorum();
          faults.push(`kill -9 follower ${s.id}, restarted`);
          break;
        }
        case "stop-leader": {
          const stops = o.stopMs ?? [1500];
          const ms = stops[Math.floor(round / cycle.length) % stops.length];
          const s = await ens.leader();
          await s.pause();
          await hold(ms);
          await s.resume();
          await ens.waitForQuorum();
          faults.push(`SIGSTOP leader ${s.id} for ${ms} ms, SIGCONT`);
          break;
        }
      }
    };

    try {
      await hold(o.steadyMs);
      for (let round = 0; round < o.rounds; round++) {
        await inject(cycle[round % cycle.length], round);
        await hold(o.steadyMs);
      }
    } finally {
      running = false;
    }
  } finally {
    running = false;
    await Promise.all(holders.map((h) => h.p.kill("SIGKILL").then(() => h.p.drained)));
    await Promise.all(clients.map((c) => c.done.catch((e: Error) => hangs.push(`${c.name} (${c.runtime}): ${e.message}`))));
    await Promise.all([...clients, ...holders].flatMap((c) => c.proxies.map((p) => p.close())));
  }

  const t0 = performance.now();
  const result = checkLinearizable(history, registerModel(), { maxMs: 30_000 });
  const checkMs = performance.now() - t0;
  // The same writes with each read's sync + getData alone (what ZooKeeper's docs offer for reading what
  // another client wrote): reported, not asserted (a leader serves them from its own tree).
  const bySync = checkLinearizable([...history.filter((op) => op.input.f !== "read"), ...syncReads], registerModel(), { maxMs: 15_000 });
  const syncLine = `sync+getData reads alone (${syncReads.length}): ${bySync.verdict}${bySync.verdict === "linearizable" ? "" : `\n${bySync.message.split("\n").slice(0, 12).join("\n")}`}`;
  const perKey = o.keys.map((k) => `key ${k} ${history.filter((op) => op.key === k).length}`).join(", ");
  const count = (x: Outcome) => history.filter((op) => op.outcome === x).length;
  // An unknown write whose (unique) value some ok read returned certainly took effect.
  const readBack = new Set(history.flatMap((op) => (op.outcome === "ok" && op.output && "value" in op.output ? [`${op.key}\u0000${op.output.value}`] : [])));
  const applied = history.filter((op) => op.outcome === "unknown" && op.input.f !== "read" && readBack.has(`${op.key}\u0000${op.input.value}`)).length;
  const why = [...errors].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(", ");
  const byClient = clients.map((c) => `${c.name} ${c.runtime}${c.child ? " process" : ""} ${history.filter((op) => op.client === c.name).length}`).join(", ");
  const summary = `history: ${o.keys.length} keys, ${history.length} ops (${perKey}; clients ${byClient}), ${count("unknown")} unknown (${applied} of them read back), ${count("fail")} fail (errors: ${why || "none"}), ` +
    `writes sent again by withRetry ${[...resent].map(([k, n]) => `${k} ${n}`).join(", ") || "none"}, ${faults.length} faults, verdict ${result.verdict} (${result.keys.map((k) => k.states).reduce((a, b) => a + b, 0)} states, ${checkMs.toFixed(0)} ms; seed ${o.seed})`;
  const fences = new Map<HoldKind, number>(); // each fence's version at the end: every guarded write committed, seen or not
  if (holders.length) {
    const zk = await ZooKeeper.connect(ens.connectString, connectOpts);
    try {
      for (const kind of HOLDS) if (runtimesOf(kind).length) fences.set(kind, (await zk.getData(`${o.root}/${kind}-fence`)).stat.version);
    } finally {
      await zk.close();
    }
  }
  const [lock, election] = HOLDS.map((kind) => checkHolders(kind, holders.filter((h) => h.kind === kind), fences.get(kind) ?? 0));
  if (result.verdict !== "linearizable") {
    // The whole history, for a look with the checker offline (Infinity is written as null).
    const file = join(mkdtempSync(join(tmpdir(), "zk-history-")), "history.json");
    writeFileSync(file, JSON.stringify({ seed: o.seed, faults, history }));
    result.message += `\nwhole history: ${file}`;
  }
  return { history, faults, hangs, result, checkMs, summary, syncLine, lock, election };
}

/** Starts `script` under `runtime`, waits for its READY and measures its hrtime against ours (as the chaos harness does). */
async function startChild(runtime: Runtime, script: string, id: string, args: string[]): Promise<LineProcess> {
  const [cmd, base] = runtimeCommand(runtime, script);
  const p = new LineProcess(id, spawn(cmd, [...base, ...args], { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] }));
  try {
    await p.expect("READY", 30_000);
    // Node's hrtime is CLOCK_MONOTONIC, like ours on Node (offset 0, exactly); Bun's and Deno's start at their process start.
    if (runtime !== "node" || RUNTIME !== "node") await p.syncClock(5);
    return p;
  } catch (e) {
    await p.kill("SIGKILL");
    throw e;
  }
}

const PARTICIPANT = fileURLToPath(new URL("./history-participant.ts", (import.meta as { url: string }).url));

/** What history-participant.ts is given on its command line. */
export interface HistoryClientSpec {
  runtime: Runtime;
  connectString: string; // its fault proxies
  root: string;
  keys: readonly string[];
  name: string;
  seed: number;
  sessionTimeout: number;
  deadlineMs: number;
}

/** The command line history-participant.ts parses back (historyClientSpec). */
export function historyClientArgs(s: HistoryClientSpec): string[] {
  return [s.connectString, s.root, s.keys.join(","), s.name, String(s.seed), String(s.sessionTimeout), String(s.deadlineMs)];
}

/**
 * Starts a client as a child process and waits for its READY; each of its OP lines is mapped onto this
 * process's performance.now() clock and given to `report`. Resolves once `running()` has turned false, the
 * child has been told to stop, and every line it wrote is in. A child's stamps are on its own hrtime: the
 * offset is measured (syncClock, as for the chaos participants) and each interval widened by its error,
 * which can only make the check more lenient, never report a violation that did not happen.
 */
export async function spawnHistoryClient(spec: HistoryClientSpec, report: (r: OpReport) => void, running: () => boolean): Promise<{ done: Promise<void> }> {
  const p = await startChild(spec.runtime, PARTICIPANT, spec.name, historyClientArgs(spec));
  // performance.now() = hrtime - hrBase (ms); the child's hrtime = ours + clockOffsetNs.
  const hrBaseMs = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  const shiftMs = Number(p.clockOffsetNs) / 1e6 + hrBaseMs;
  const errMs = Number(p.clockErrorNs) / 1e6;
  const map = (op: HistoryOp): HistoryOp => ({ ...op, invoke: op.invoke - shiftMs - errMs, complete: op.complete === null ? Infinity : op.complete - shiftMs + errMs });
  const off = p.onLine((l) => {
    if (l.kind !== "OP") return;
    const r = JSON.parse(l.line.slice(3)) as OpReport;
    report({ ...r, op: map(r.op), ...(r.syncRead ? { syncRead: map(r.syncRead) } : {}) });
  });
  const done = (async () => {
    while (running() && p.alive) await hold(100);
    p.send("stop");
    const timer = setTimeout(() => void p.kill("SIGKILL"), spec.deadlineMs + 15_000);
    const code = await p.exited;
    await p.drained;
    clearTimeout(timer);
    off();
    if (code !== 0) throw new Error(`${spec.runtime} client exited ${code}; ${p.describe().slice(-1500)}`);
  })();
  return { done };
}

const HOLDER = fileURLToPath(new URL("../processes/lock-participant.ts", (import.meta as { url: string }).url));

/** What a holder holds in turns: a Lock, or the leadership of a LeaderElection. */
type HoldKind = "lock" | "election";
const HOLDS: readonly HoldKind[] = ["lock", "election"];

interface Holder {
  kind: HoldKind;
  runtime: Runtime;
  p: LineProcess;
  proxies: FaultProxy[]; // one per server, in the order of ens.servers (its links)
  toMs: (ns: bigint, widen: -1 | 1) => number; // a stamp of the child's on our performance.now() clock
}

/**
 * A lock-participant.ts process, through fault proxies of its own, taking a Lock on root/lock (lock:curator)
 * or leading a LeaderElection on root/election (election:curator-latch) in turns, writing its token to
 * root/<kind>-fence through the recipe's guarded transaction while it holds.
 */
async function spawnHolder(ens: ZkEnsemble, kind: HoldKind, runtime: Runtime, root: string, id: string, sessionTimeout: number): Promise<Holder> {
  const proxies = await Promise.all(ens.servers.map((s) => startFaultProxy(s.host, s.clientPort)));
  const connectString = proxies.map((p) => p.connectString).join(",");
  try {
    const p = await startChild(runtime, HOLDER, id, [connectString, `${root}/${kind}`, id, String(sessionTimeout), kind === "lock" ? "lock:curator" : "election:curator-latch", "30", `${root}/${kind}-fence`]);
    const hrBaseNs = process.hrtime.bigint() - BigInt(Math.round(performance.now() * 1e6));
    return { kind, runtime, p, proxies, toMs: (ns, widen) => Number(ns - p.clockOffsetNs - hrBaseNs + BigInt(widen) * p.clockErrorNs) / 1e6 };
  } catch (e) {
    await Promise.all(proxies.map((x) => x.close()));
    throw e;
  }
}

/**
 * The holders' holds from their own logs: HOLD (learnt it holds) to FREE (the last moment it still held; a hold
 * cut short by the end of the run ends at its last FENCED stamp). Holds are narrowed by the clock error (a
 * hold is only claimed where it surely was), then checkExclusive; and the tokens the guarded writes left on
 * the fence, in version order, must never go back (a stale holder's write would). `fenceVersion`: the
 * fence's version at the end, which counts the guarded writes committed, their replies seen or not.
 */
function checkHolders(kind: HoldKind, holders: readonly Holder[], fenceVersion: number): HoldCheck {
  if (holders.length === 0) return { problems: [], line: "", holds: [], fenced: [] };
  const holds: Hold[] = [];
  const fenced: Fenced[] = [];
  const refused = new Map<string, number>(); // guarded writes that did not commit (or may not have), by code
  for (const l of holders) {
    let open: Hold | null = null;
    let lastNs = 0n;
    for (const line of l.p.lines) {
      const [what, ...a] = line.line.split(" ");
      if (what === "HOLD") {
        open = { holder: l.p.id, acquired: l.toMs(BigInt(a[0]), 1), released: Infinity, token: BigInt(a[2]) };
        lastNs = BigInt(a[0]);
      } else if (what === "FREE" && open) {
        holds.push({ ...open, released: l.toMs(BigInt(a[0]), -1) });
        open = null;
      } else if (what === "FENCED") {
        fenced.push({ version: Number(a[0]), token: BigInt(a[1]), by: l.p.id });
        if (open) lastNs = BigInt(a[2]);
      } else if (what === "UNFENCED") refused.set(a[0], (refused.get(a[0]) ?? 0) + 1);
    }
    if (open) holds.push({ ...open, released: l.toMs(lastNs, -1) });
  }
  const checked = holds.filter((h) => h.released >= h.acquired);
  const exclusive = checkExclusive(checked);
  const problems = [...exclusive, ...checkFence(fenced).map((p) => `${kind} ${p}`)];
  const who = holders.map((l) => `${l.p.id} ${l.runtime} ${holds.filter((h) => h.holder === l.p.id).length}`).join(", ");
  const reversed = exclusive.filter((p) => p.startsWith("fencing token")).length;
  const why = [...refused].map(([k, n]) => `${k} ${n}`).join(", ") || "none";
  return {
    problems,
    holds: checked,
    fenced,
    // Holds shorter than twice a Bun/Deno child's clock error are left out: where they were is not sure.
    line: `${kind}: ${holds.length} holds (${who}; ${checked.length} checked, the rest too short for the clock error), tokens ${reversed ? `went back ${reversed} times` : "increasing"}, ` +
      `${fenced.length} writes through ${kind}.transaction() committed (+${Math.max(0, fenceVersion - fenced.length)} with the reply lost), refused or lost ${why}, ` +
      `${exclusive.filter((p) => !p.startsWith("fencing token")).length} overlaps, ${problems.length} problems`,
  };
}

/** The guarded writes with a stale one added (plantHoldViolations): the holder of one write writes again after the next holder's first (the write fencing must refuse), or null when the fence never changed hands. */
function plantStaleWrite(fenced: readonly Fenced[]): Fenced[] | null {
  const sorted = [...fenced].sort((x, y) => x.version - y.version);
  const j = sorted.findIndex((f, k) => k > 0 && f.by !== sorted[k - 1].by);
  if (j <= 0) return null;
  const stale = { ...sorted[j - 1], version: sorted[j].version + 0.5 }; // committed between the new holder's first write and its next
  return [...sorted.slice(0, j + 1), stale, ...sorted.slice(j + 1)];
}

/** The holds with one stretched into the next hold of another holder (plantHoldViolations) (a planted overlap, to be caught), or null when no two successive holds are of different holders. */
function plantOverlap(holds: readonly Hold[]): Hold[] | null {
  const sorted = [...holds].sort((a, b) => a.acquired - b.acquired);
  const j = sorted.findIndex((h, k) => k > 0 && h.holder !== sorted[k - 1].holder);
  return j > 0 ? sorted.map((h, k) => (k === j - 1 ? { ...h, released: sorted[j].acquired + 0.001 } : h)) : null;
}

/**
 * The holds and guarded writes made wrong in one place, each way, for planted checks (each must be caught):
 * a hold stretched into the next hold of another holder (checkExclusive), and a stale holder's guarded write
 * committed after the next holder's (checkFence). Each comes with what its check found.
 */
export function plantHoldViolations(c: HoldCheck): { what: string; problems: string[] }[] {
  const out: { what: string; problems: string[] }[] = [];
  const overlap = plantOverlap(c.holds);
  if (overlap) out.push({ what: "a hold stretched into the next holder's", problems: checkExclusive(overlap) });
  const stale = plantStaleWrite(c.fenced);
  if (stale) out.push({ what: "a stale holder's guarded write after the next holder's", problems: checkFence(stale) });
  return out;
}

/**
 * The recorded history made wrong in one place, twice over, for planted checks (each must be rejected):
 * an ok write whose value a later ok read returned, relabelled fail (a failed write that took effect); and
 * an ok read given a value never written. Each picks the candidate nearest the middle of the history, so
 * the search has to get there first. Returns the key each one changed and what it did.
 */
export function plantMislabels(history: readonly HistoryOp[]): { history: HistoryOp[]; key: string; what: string }[] {
  const middle = <T>(xs: T[]): T | undefined => xs[Math.floor(xs.length / 2)];
  const readBack = new Set<string>(); // key + value an ok read returned
  for (const op of history) if (op.outcome === "ok" && op.output && "value" in op.output) readBack.add(`${op.key}\u0000${op.output.value}`);
  const plants: { history: HistoryOp[]; key: string; what: string }[] = [];
  const w = middle([...history.keys()].filter((i) => {
    const op = history[i];
    return op.outcome === "ok" && op.input.f !== "read" && readBack.has(`${op.key}\u0000${op.input.value}`);
  }));
  if (w !== undefined) {
    const copy = [...history];
    const op = history[w];
    copy[w] = { client: op.client, key: op.key, invoke: op.invoke, complete: op.complete, outcome: "fail", input: op.input };
    const value = op.input.f === "read" ? "" : JSON.stringify(op.input.value);
    plants.push({ history: copy, key: op.key, what: `op ${w}: ok ${op.input.f} of ${value} on ${op.key} relabelled fail (it was read back)` });
  }
  const r = middle([...history.keys()].filter((i) => history[i].outcome === "ok" && history[i].input.f === "read"));
  if (r !== undefined) {
    const copy = [...history];
    const op = history[r];
    const version = op.output && "version" in op.output ? op.output.version : 0;
    copy[r] = { ...op, output: { value: "never-written", version } };
    plants.push({ history: copy, key: op.key, what: `op ${r}: an ok read on ${op.key} given a value never written` });
  }
  return plants;
}
