// `npm run bench`: one standalone server (or ZK_CONNECT), every workload for every client, each client
// in its own process, then ONE table with every peer's figures and our ratios. Speed is compared only
// inside one run, by ratio (REAL-SERVERS.md: absolute figures swing from run to run on 2 cores).
//
// Options: --ms N (measured window, default 2500) --warmup N (default 1000) --peers id,id --only key,key
//          --passes N (run everything N times, interleaved, and report medians; default 1)
//          --json FILE (write every result) --no-java
import { randomUUID } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Op, ZooKeeper, type ZooKeeperError } from "../src/index.ts";
import { startStandalone, type ZkServer } from "../test/support/servers/zk-server.ts";
import { runChild } from "./lib/child.ts";
import { allPeers, compileJava, compileRunners, type Peer } from "./lib/peers.ts";
import { ensurePeerPackages } from "./lib/peer-deps.ts";
import { medianRows } from "./lib/median.ts";
import { renderTable, renderTargets, type Row } from "./lib/table.ts";
import { formatParams, type Params } from "./runners/params.ts";

interface Workload {
  key: string;
  label: string;
  workload: string;
  params: Params;
  timed: boolean; // takes ms / warmupMs
  oursOnly?: boolean;
  /** The least warm-up (ms) whatever --warmup says. */
  minWarmupMs?: number;
}

const WORKLOADS: Workload[] = [
  { key: "get-1", label: "(a) getData 100 B, 1 outstanding", workload: "get", params: { outstanding: 1 }, timed: true },
  { key: "get-100", label: "(a) getData 100 B, 100 outstanding", workload: "get", params: { outstanding: 100 }, timed: true },
  { key: "get-1000", label: "(a) getData 100 B, 1000 outstanding", workload: "get", params: { outstanding: 1000 }, timed: true },
  { key: "set-100", label: "(b) setData 100 B, 100 outstanding", workload: "set", params: { outstanding: 100 }, timed: true },
  { key: "create-delete", label: "(c) create+delete eph-seq, 100 outst.", workload: "createDelete", params: { outstanding: 100 }, timed: true },
  // Each session runs its once-per-session functions once: V8 optimizes them only after thousands of sessions, and
  // its compiler's CPU (background threads) is counted in the process's. A shorter warm-up measured that phase as
  // much as the client (bench/README.md, "connect + close warms up 15 s").
  { key: "connect", label: "(d) connect + close session", workload: "connect", params: {}, timed: true, minWarmupMs: 15_000 },
  { key: "watch-latency", label: "(g) watch latency: setData → watcher", workload: "watchLatency", params: {}, timed: true },
  { key: "watch-storm", label: "(e) watch storm, 10,000 watches", workload: "watch", params: { count: 10_000 }, timed: false },
  { key: "election", label: "(f) election failover, 100 particip.", workload: "election", params: { participants: 100, rounds: 20 }, timed: false, oursOnly: true },
];

const { values: opt } = parseArgs({
  options: {
    ms: { type: "string", default: "2500" },
    passes: { type: "string", default: "1" },
    warmup: { type: "string", default: "1000" },
    peers: { type: "string" },
    only: { type: "string" },
    json: { type: "string" },
    "no-java": { type: "boolean", default: false },
  },
});

const ROOT = resolve(import.meta.dirname, "..");
const started = performance.now();
const log = (m: string): void => void process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${m}\n`);

let server: ZkServer | undefined;
let zk: ZooKeeper | undefined;
const base = `/bench-${randomUUID().slice(0, 8)}`;
try {
  const connect = process.env.ZK_CONNECT ?? (server = await startStandalone()).connectString;
  log(`server ${connect}${server ? " (standalone, started for this run)" : " (ZK_CONNECT)"}`);
  compileRunners();
  const javaClasses = opt["no-java"] ? undefined : compileJava();
  log("runners compiled (tsc → bench/.build, javac → bench/.build/java)");
  const deps = ensurePeerPackages(log);
  for (const why of deps.missing.values()) log(`peer left out: ${why}`);
  let peers = allPeers(javaClasses).filter((p) => !deps.missing.has(p.peer));
  if (opt.peers) peers = peers.filter((p) => opt.peers!.split(",").includes(p.id));
  // Connected only now: tsc, javac and npm above block this event loop for longer than a session timeout.
  zk = await ZooKeeper.connect(connect, { sessionTimeout: 30_000 });
  const workloads = opt.only ? WORKLOADS.filter((w) => opt.only!.split(",").includes(w.key)) : WORKLOADS;

  await warmServer(zk, `${base}/warm`, 3000);
  log("server warmed up (3 s of mixed requests, so the first workload does not meet a cold JIT)");
  const passes: Row[][] = [];
  for (let pass = 1; pass <= Number(opt.passes); pass++) {
    const rows: Row[] = [];
    for (const [wi, w] of workloads.entries()) {
      // Rotate who goes first, so no client always meets the server right after another's run.
      const turn = (wi + pass - 1) % peers.length;
      for (const peer of [...peers.slice(turn), ...peers.slice(0, turn)]) {
        if (w.oursOnly && peer.peer !== "zookeeper-ts") continue;
        if (peer.only && !peer.only.includes(w.key)) continue;
        const row: Row = { workload: w.label, key: w.key, client: peer.id, variantOf: peer.variantOf };
        try {
          row.result = await runOne(connect, peer, w, pass);
          log(`${w.key} ${peer.id}: ${row.result.opsPerSec} ops/s, p50 ${row.result.p50Ms} ms, CPU ${row.result.cpuPer10k} s/10k`);
        } catch (e) {
          row.error = (e as Error).message;
          log(`${w.key} ${peer.id} FAILED: ${row.error}`);
        }
        rows.push(row);
      }
    }
    const order = (r: Row): number => workloads.findIndex((w) => w.key === r.key) * 100 + peers.findIndex((p) => p.id === r.client);
    passes.push(rows.sort((a, b) => order(a) - order(b)));
  }
  const rows = medianRows(passes);
  const title = passes.length > 1 ? `medians of ${passes.length} passes\n` : "";
  process.stdout.write(`\n${title}${renderTable(rows)}\n\n${renderTargets(rows)}\n`);
  process.stdout.write(`(server ${server ? "ZooKeeper 3.8.0 standalone" : connect}; ${peers.length} clients; ${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  if (opt.json) writeFileSync(opt.json, JSON.stringify(rows, null, 1)); // medians when --passes > 1
  if (process.env.ZK_CONNECT) await removeTree(zk, base);
} finally {
  await zk?.close().catch(() => {});
  await server?.close();
}

async function runOne(connect: string, peer: Peer, w: Workload, pass: number) {
  const params: Params = { ...w.params, root: `${base}/${peer.id.replace(/[^a-z0-9-]/gi, "_")}-${w.key}-${pass}` };
  if (w.timed) Object.assign(params, { ms: Number(opt.ms), warmupMs: Math.max(Number(opt.warmup), w.minWarmupMs ?? 0) });
  let args = [...peer.args];
  if (w.workload === "election") {
    if (!existsSync(join(ROOT, "src", "recipes", "leader-election.ts"))) throw new Error("src/recipes LeaderElection not there yet");
    args = args.map((a) => a.replace(/zookeeper-ts\.(ts|js)$/, "election.$1"));
  }
  const onArmed = async (armed: { armed: string; count: number }, go: () => void): Promise<void> => {
    // The change for the watch storm: one multi that sets every watched node, identical for all peers.
    const ops = Array.from({ length: armed.count }, (_, i) => Op.setData(`${armed.armed}/${i}`, "1"));
    go();
    await zk!.multi(ops);
  };
  return runChild(peer.cmd, [...args, connect, w.workload, ...formatParams(params)], 120_000, onArmed);
}

/** Keeps 200 getData/setData/create+delete requests in flight for `ms` (JIT of the server's hot paths). */
async function warmServer(z: ZooKeeper, dir: string, ms: number): Promise<void> {
  await z.create(base).catch(() => {});
  await z.create(dir, new Uint8Array(100)).catch(() => {});
  const end = performance.now() + ms;
  const lane = async (i: number): Promise<void> => {
    while (performance.now() < end) {
      if (i % 3 === 0) await z.getData(dir);
      else if (i % 3 === 1) await z.setData(dir, new Uint8Array(100));
      else await z.delete(await z.create(`${dir}/e-`, null, { mode: 3 }));
    }
  };
  await Promise.all(Array.from({ length: 200 }, (_, i) => lane(i)));
}

async function removeTree(z: ZooKeeper, path: string): Promise<void> {
  const kids = await z.getChildren(path).catch((e: ZooKeeperError) => (e.code === -101 ? null : Promise.reject(e)));
  if (kids === null) return;
  await Promise.all(kids.map((k) => removeTree(z, `${path}/${k}`)));
  await z.delete(path).catch((e: ZooKeeperError) => (e.code === -101 ? undefined : Promise.reject(e)));
}
