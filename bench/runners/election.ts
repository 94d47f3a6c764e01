// Workload (f), zookeeper-ts only: `participants` LeaderElections in one process, each on its own
// session; the leader resigns cleanly and we time until another participant is elected. Same CLI
// and JSON line as the other runners: <connectString> election [participants=100 rounds=20 root=/x].
import { ZooKeeper } from "../../src/index.ts";
import { LeaderElection } from "../../src/recipes/index.ts";
import { readCpuSeconds } from "./cpu.ts";
import { parseParams } from "./params.ts";

const [cs, workload, ...rest] = process.argv.slice(2);
if (!cs || workload !== "election") {
  process.stderr.write("usage: election.ts <connectString> election [participants=100 rounds=20 root=/path]\n");
  process.exit(2);
}
const params = parseParams(rest);
const n = params.participants ?? 100;
const rounds = params.rounds ?? 20;
const warm = 2; // unmeasured failovers first
const path = `${params.root ?? `/bench/election-${process.pid}`}/election`;

const sessions = await Promise.all(Array.from({ length: n }, () => ZooKeeper.connect(cs, { sessionTimeout: 30_000 })));
const elections = sessions.map((zk, i) => new LeaderElection(zk, path, { id: `p${i}` }));
let onElected: ((i: number) => void) | undefined;
elections.forEach((e, i) => e.on("elected", () => onElected?.(i)));
for (const e of elections) await e.start(); // in order, so the queue is p0, p1, ...
const leaderIndex = (): number => elections.findIndex((e) => e.isLeader);
await elections[0].waitForLeadership({ timeout: 30_000 });

const lat: number[] = [];
let cpu = 0;
let total = 0;
for (let r = 0; r < warm + rounds; r++) {
  const old = leaderIndex();
  if (old < 0) throw new Error("no leader before a resign");
  const next = new Promise<number>((resolve) => (onElected = (i) => i !== old && resolve(i)));
  const c0 = readCpuSeconds();
  const t0 = performance.now();
  void elections[old].resign();
  await next;
  const dt = performance.now() - t0;
  const dc = readCpuSeconds() - c0;
  if (r >= warm) {
    lat.push(dt);
    cpu += dc;
    total += dt;
  }
}
await Promise.all(elections.map((e) => e.close()));
await Promise.all(sessions.map((zk) => zk.close()));

lat.sort((a, b) => a - b);
const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
process.stdout.write(
  JSON.stringify({
    peer: "zookeeper-ts",
    runtime,
    workload,
    params,
    ops: rounds,
    seconds: r3(total / 1000),
    opsPerSec: Math.round(rounds / (total / 1000)),
    p50Ms: r3(lat[Math.floor(lat.length * 0.5)]),
    p99Ms: r3(lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.99))]),
    cpuSec: r3(cpu),
    cpuPer10k: r3((cpu / rounds) * 10_000),
  }) + "\n",
);
process.exit(0);
