// `npm run bench:election [-- --participants 1000 --procs 4 --rounds 40 --closes 5 --no-group]`:
// N LeaderElection participants, each on its own session, spread over a few child processes, against
// one standalone server (the tests' provisioning; ZK_CONNECT for an existing one). Measures the join,
// resign and close handovers, wake-ups ("watch" events) per deletion, watchers per candidate znode
// (the 4lw `wchp`), heap per participant, the server's CPU apart from the clients'; then N GroupMembers
// with one "change" listener per process (join time, convergence of the coalesced events, heap).
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { ZooKeeper } from "../../src/index.ts";
import { fourLetterWord, startStandalone, type ZkServer } from "../../test/support/servers/zk-server.ts";
import { countWatchers, parseWchp, percentile, type Event } from "./stats.ts";

const { values: opt } = parseArgs({
  options: {
    participants: { type: "string", default: "1000" },
    procs: { type: "string", default: "4" },
    rounds: { type: "string", default: "40" },
    closes: { type: "string", default: "5" },
    "no-group": { type: "boolean", default: false },
    json: { type: "string" },
  },
});
const N = Number(opt.participants);
const P = Math.max(1, Math.min(Number(opt.procs), N));
const started = performance.now();
const log = (m: string): void => void process.stderr.write(`[big ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${m}\n`);
const now = (): number => performance.timeOrigin + performance.now();
const root = `/bench-big-${randomUUID().slice(0, 8)}`;
const path = `${root}/election`;
const groupPath = `${root}/group`;

interface Worker {
  child: ChildProcessWithoutNullStreams;
  first: number;
  count: number;
}
const events: Event[] = [];
const waiters = new Set<() => void>();
const notify = (): void => waiters.forEach((w) => w());
function until<T>(what: string, check: () => T | undefined, timeoutMs: number): Promise<T> {
  return new Promise((res, rej) => {
    const timer = setTimeout(() => (waiters.delete(poll), rej(new Error(`timed out waiting for ${what}`))), timeoutMs);
    const poll = (): void => {
      const v = check();
      if (v !== undefined) (clearTimeout(timer), waiters.delete(poll), res(v));
    };
    waiters.add(poll);
    poll();
  });
}

function serverCpu(server: ZkServer | undefined): number {
  if (!server?.pid) return NaN;
  const f = readFileSync(`/proc/${server.pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, clock ticks of 10 ms
}
async function clientCpu(workers: Worker[]): Promise<number> {
  const mark = events.length;
  workers.forEach((w) => w.child.stdin.write(`{"cmd":"stats"}\n`));
  const s = await until("stats", () => { const got = events.slice(mark).filter((e) => e.ev === "stats"); return got.length === workers.length ? got : undefined; }, 60_000);
  return s.reduce((a, e) => a + Number(e.cpu), 0);
}

let server: ZkServer | undefined;
const workers: Worker[] = [];
const report: Record<string, unknown> = { participants: N, procs: P };
try {
  const connect = process.env.ZK_CONNECT ?? (server = await startStandalone({ jvmArgs: ["-Xmx1g"], startTimeoutMs: 120_000 })).connectString;
  const [host, port] = connect.split(",")[0].split(":");
  log(`server ${connect}; ${N} participants in ${P} processes`);
  const admin = await ZooKeeper.connect(connect, { sessionTimeout: 40_000 });
  const worker = resolve(import.meta.dirname, "worker.ts");
  for (let i = 0, first = 0; i < P; i++) {
    const count = Math.floor(N / P) + (i < N % P ? 1 : 0);
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", worker, connect, path, groupPath, String(first), String(count)], { stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: child.stdout }).on("line", (line) => {
      const e = { ...(JSON.parse(line) as Event), w: i };
      if (e.ev === "error" || e.ev === "retry" || e.ev === "progress") log(`worker ${i}: ${line}`);
      events.push(e);
      notify();
    });
    createInterface({ input: child.stderr }).on("line", (line) => log(`worker ${i}: ${line}`));
    workers.push({ child, first, count });
    first += count;
  }
  await until("workers ready", () => (events.filter((e) => e.ev === "ready").length === P ? true : undefined), 60_000);
  const owner = (id: string): Worker => workers.find((w) => Number(id.slice(1)) >= w.first && Number(id.slice(1)) < w.first + w.count)!;
  const errors = (): Event[] => events.filter((e) => e.ev === "error");

  // --- join ---
  let s0 = serverCpu(server);
  let c0 = await clientCpu(workers);
  const tJoin = now();
  workers.forEach((w) => w.child.stdin.write(`{"cmd":"join"}\n`));
  const joined = await until("every participant joined", () => { const j = events.filter((e) => e.ev === "joined"); return j.length === P ? j : undefined; }, 30 * 60_000);
  const firstLeader = await until("a leader", () => events.find((e) => e.ev === "elected"), 60_000);
  report.joinSeconds = (Math.max(...joined.map((e) => Number(e.t)), Number(firstLeader.t)) - tJoin) / 1000;
  report.heapPerParticipantKB = joined.reduce((a, e) => a + Number(e.heapPerParticipant), 0) / P / 1024;
  let s1 = serverCpu(server);
  let c1 = await clientCpu(workers);
  report.joinCpu = { server: s1 - s0, clients: c1 - c0 };
  log(`joined in ${Number(report.joinSeconds).toFixed(1)} s; leader ${String(firstLeader.id)}; errors ${errors().length}`);

  const watchers = async (): Promise<Record<string, number>> => countWatchers(await fourLetterWord(host, Number(port), "wchp", 60_000), path, await admin.getChildren(path));
  report.watchersAfterJoin = await watchers();
  log(`watchers per candidate znode (wchp): ${JSON.stringify(report.watchersAfterJoin)}`);

  // --- handovers ---
  let leader = String(firstLeader.id);
  const handover = async (cmd: "resign" | "close", times: number): Promise<{ ms: number[]; wakeups: number }> => {
    const ms: number[] = [];
    const mark = events.length;
    for (let r = 0; r < times; r++) {
      const from = events.length;
      owner(leader).child.stdin.write(JSON.stringify({ cmd, id: leader }) + "\n");
      const sent = await until(`${cmd} of ${leader}`, () => events.slice(from).find((e) => e.ev === cmd && e.id === leader), 60_000);
      const next = await until(`a leader after ${leader}'s ${cmd}`, () => events.slice(from).find((e) => e.ev === "elected" && e.id !== leader), 180_000);
      ms.push(Number(next.t) - Number(sent.t));
      log(`${cmd} ${r + 1}/${times}: ${leader} -> ${String(next.id)} in ${ms.at(-1)!.toFixed(1)} ms`);
      leader = String(next.id);
      await new Promise((r) => setTimeout(r, 30)); // the resigner's rejoin settles; any stray wake-up lands in this round
    }
    await new Promise((r) => setTimeout(r, 300));
    return { ms, wakeups: events.slice(mark).filter((e) => e.ev === "watch").length / times };
  };
  s0 = serverCpu(server);
  c0 = await clientCpu(workers);
  const resign = await handover("resign", Number(opt.rounds));
  s1 = serverCpu(server);
  c1 = await clientCpu(workers);
  report.resign = { rounds: resign.ms.length, p50Ms: percentile(resign.ms, 0.5), p99Ms: percentile(resign.ms, 0.99), maxMs: Math.max(...resign.ms), wakeupsPerDeletion: resign.wakeups, cpu: { server: s1 - s0, clients: c1 - c0 } };
  log(`resign handover: ${JSON.stringify(report.resign)}`);
  const close = await handover("close", Number(opt.closes));
  report.close = { rounds: close.ms.length, p50Ms: percentile(close.ms, 0.5), maxMs: Math.max(...close.ms), wakeupsPerDeletion: close.wakeups };
  log(`close handover: ${JSON.stringify(report.close)}`);
  report.watchersAfterHandovers = await watchers();
  log(`watchers per candidate znode after the handovers (wchp): ${JSON.stringify(report.watchersAfterHandovers)}`);
  report.errors = errors().length;

  // --- group ---
  if (!opt["no-group"]) {
    const mark = events.length;
    s0 = serverCpu(server);
    const tGroup = now();
    workers.forEach((w) => w.child.stdin.write(`{"cmd":"group"}\n`));
    const grouped = await until("every member joined", () => { const g = events.slice(mark).filter((e) => e.ev === "grouped"); return g.length === P ? g : undefined; }, 30 * 60_000);
    const full = await until("every listener sees all members", () => {
      const last = workers.map((_, i) => events.slice(mark).filter((e) => e.ev === "change" && e.w === i).at(-1));
      return last.every((e) => e && Number(e.size) === N) ? last : undefined;
    }, 10 * 60_000);
    const changes = events.slice(mark).filter((e) => e.ev === "change");
    const groupWchp = await fourLetterWord(host, Number(port), "wchp", 60_000);
    report.group = {
      members: N,
      joinSeconds: (Math.max(...grouped.map((e) => Number(e.t))) - tGroup) / 1000,
      convergedSeconds: (Math.max(...full.map((e) => Number(e!.t))) - tGroup) / 1000,
      changeEventsPerListener: changes.length / P,
      sessionsWatchingGroupPath: parseWchp(groupWchp).get(groupPath) ?? 0,
      heapPerMemberKB: grouped.reduce((a, e) => a + Number(e.heapPerMember), 0) / P / 1024,
      serverCpu: serverCpu(server) - s0,
    };
    log(`group: ${JSON.stringify(report.group)}`);
    workers.forEach((w) => w.child.stdin.write(`{"cmd":"ungroup"}\n`));
    await until("members left", () => (events.slice(mark).filter((e) => e.ev === "ungrouped").length === P ? true : undefined), 10 * 60_000);
  }
  const exitMark = events.length;
  workers.forEach((w) => w.child.stdin.write(`{"cmd":"exit"}\n`));
  await until("workers closed", () => (events.slice(exitMark).filter((e) => e.ev === "bye").length === P ? true : undefined), 10 * 60_000).catch((e: Error) => log(e.message));
  await admin.close();
  process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  if (opt.json) (await import("node:fs")).writeFileSync(opt.json, JSON.stringify(report, null, 2));
} catch (e) {
  if (server) log(`server: ${(readFileSync(`${server.dir}/server.log`, "utf8").match(/Expiring session/g) ?? []).length} sessions expired`);
  throw e;
} finally {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL");
  await server?.close();
}
