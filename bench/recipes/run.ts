// Recipes benchmark: LeaderElection with N participants (sessions) spread over a few processes.
//   node --import tsx bench/recipes/run.ts [--sizes 100,1000] [--procs 4] [--rounds 5] [--session-timeout 2000]
// Measured per size, from this process (every time is wall clock, comparable across local processes):
//  - elect: from "join" (every participant starts at once) to the first "elected", and until all joined;
//  - failover after a clean resign (median of --rounds): from the leader's resign to another's "elected";
//  - failover after a crash: SIGKILL of the process holding the leader until another is elected (bounded
//    below by the session timeout: the server must expire the dead sessions first);
//  - the server's share of the CPU (server JVM ÷ server + every worker, from /proc) for each phase.
// The server is one standalone ZooKeeper 3.8.0 started for the run (tickTime 500: sessions from 1 s),
// or ZK_CONNECT (then the server's CPU is not measured).
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { startStandalone, type ZkServer } from "../../test/support/servers/zk-server.ts";

const { values: opt } = parseArgs({
  options: {
    sizes: { type: "string", default: "100,1000" },
    procs: { type: "string", default: "4" },
    rounds: { type: "string", default: "5" },
    "session-timeout": { type: "string", default: "2000" },
  },
});
const ROOT = resolve(import.meta.dirname, "..", "..");
const wall = (): number => performance.timeOrigin + performance.now();
const log = (m: string): void => void process.stderr.write(`[recipes] ${m}\n`);

function cpuOf(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, USER_HZ
  } catch {
    return NaN;
  }
}

interface Worker {
  child: ChildProcessWithoutNullStreams;
  ids: Set<string>;
  alive: boolean;
}
type Msg = { ready?: true; joined?: true; elected?: string; t?: number; from: Worker };

function startWorker(cs: string, path: string, count: number, first: number, timeout: string, onMsg: (m: Msg) => void): Worker {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "bench", "recipes", "worker.ts"), cs, path, String(count), String(first), timeout], { cwd: ROOT });
  const w: Worker = { child, ids: new Set(Array.from({ length: count }, (_, i) => `p${first + i}`)), alive: true };
  createInterface({ input: child.stdout }).on("line", (l) => onMsg({ ...(JSON.parse(l) as object), from: w }));
  child.stderr.on("data", (c: Buffer) => process.stderr.write(c));
  child.on("exit", () => (w.alive = false));
  return w;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
const ms = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : "-");
const pct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : "-");

async function bench(cs: string, server: ZkServer | undefined, size: number, procs: number, rounds: number): Promise<string[]> {
  const path = `/recipes-${randomUUID().slice(0, 8)}/e${size}`;
  const waiters: ((m: Msg) => boolean)[] = [];
  const onMsg = (m: Msg): void => {
    for (let i = 0; i < waiters.length; i++) if (waiters[i]!(m)) waiters.splice(i--, 1);
  };
  const next = (pred: (m: Msg) => boolean, what: string, timeoutMs = 120_000): Promise<Msg> =>
    new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
      waiters.push((m) => (pred(m) ? (clearTimeout(timer), res(m), true) : false));
    });
  const per = Math.ceil(size / procs);
  const ready = Array.from({ length: procs }, () => next((m) => m.ready === true, "ready"));
  const workers = Array.from({ length: procs }, (_, k) => startWorker(cs, path, Math.min(per, size - k * per), k * per, opt["session-timeout"]!, onMsg));
  const readyAll = Promise.all(ready.map((p, k) => p.then(() => k)));
  await readyAll;
  log(`${size}: ${procs} processes, ${size} sessions ready`);
  const cpu = (): { server: number; all: number } => {
    const s = cpuOf(server?.pid);
    return { server: s, all: s + workers.reduce((a, w) => a + (w.alive ? cpuOf(w.child.pid) : 0), 0) };
  };
  const share = (a: { server: number; all: number }, b: { server: number; all: number }): number => (b.server - a.server) / (b.all - a.all);
  try {
    // Elect.
    let c0 = cpu();
    const t0 = wall();
    const firstElected = next((m) => m.elected !== undefined, "elected");
    const joined = workers.map((w) => next((m) => m.joined === true && m.from === w, "joined"));
    for (const w of workers) w.child.stdin.write("join\n");
    let leader = await firstElected;
    const tElect = leader.t! - t0;
    const tJoined = Math.max(...(await Promise.all(joined)).map((m) => m.t!)) - t0;
    const shareElect = share(c0, cpu());
    // Failover after a clean resign.
    c0 = cpu();
    const resign: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const old = leader.elected;
      const p = next((m) => m.elected !== undefined && m.elected !== old, "elected after resign");
      const t = wall();
      leader.from.child.stdin.write("resign\n");
      leader = await p;
      resign.push(leader.t! - t);
    }
    const shareResign = share(c0, cpu());
    // Failover after a crash of the leader's process.
    let crash = NaN;
    if (procs > 1) {
      const victim = leader.from;
      const p = next((m) => m.elected !== undefined && m.from !== victim, "elected after crash", 60_000);
      const t = wall();
      victim.child.kill("SIGKILL");
      leader = await p;
      crash = leader.t! - t;
    }
    log(`${size}: elect ${ms(tElect)} ms, resign p50 ${ms(median(resign))} ms, crash ${ms(crash)} ms`);
    return [String(size), String(procs), ms(tElect), ms(tJoined), ms(median(resign)), ms(Math.max(...resign)), ms(crash), pct(shareElect), pct(shareResign)];
  } finally {
    for (const w of workers) if (w.alive) w.child.stdin.write("close\n");
    await Promise.all(workers.map((w) => (w.alive ? new Promise((r) => w.child.once("exit", r)) : undefined)));
  }
}

let server: ZkServer | undefined;
try {
  const cs = process.env.ZK_CONNECT ?? (server = await startStandalone({ tickTime: 500 })).connectString;
  const head = ["participants", "processes", "elect ms", "all joined ms", "resign→next p50 ms", "resign max ms", "crash→next ms", "server CPU (elect)", "server CPU (resigns)"];
  const rows: string[][] = [];
  for (const size of opt.sizes!.split(",").map(Number)) rows.push(await bench(cs, server, size, Number(opt.procs), Number(opt.rounds)));
  const md = (cells: string[]): string => `| ${cells.join(" | ")} |`;
  process.stdout.write([md(head), md(head.map(() => "---")), ...rows.map(md)].join("\n") + "\n");
  process.stdout.write(`(session timeout ${opt["session-timeout"]} ms; crash failover includes the server expiring the dead sessions)\n`);
} finally {
  await server?.close();
}
