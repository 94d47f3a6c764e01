// `npm run bench:recipes-throughput`: acquire + release per second of a Semaphore lease (permits 2) and of each side
// of a ReadWriteLock, zookeeper-ts (Node; Bun and Deno as variants) beside Apache Curator's InterProcessSemaphoreV2 and
// InterProcessReadWriteLock (Debian's libcurator-recipes-java) and kazoo's Semaphore, ReadLock and WriteLock (Debian's
// python3-kazoo) on ONE standalone server (or ZK_CONNECT), each client in its own process, one after another, in one
// run; reported as ONE table with our ratios (speed is compared only inside one run). One holder, uncontended: what is
// measured is each library's own round trips per acquire and release (zookeeper-ts on its Curator layout).
// Options: --ms N (measured window, default 3000) --warmup N (default 1000) --peers id,id
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { compileJava, curatorClasspath } from "../test/interop/java-participant.ts";
import { startStandalone, type ZkServer } from "../test/support/servers/zk-server.ts";
import { runChild } from "./lib/child.ts";
import { renderTable, type Row } from "./lib/table.ts";

const { values: opt } = parseArgs({
  options: {
    ms: { type: "string", default: "3000" },
    warmup: { type: "string", default: "1000" },
    peers: { type: "string" },
  },
});
const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "node_modules", ".bin");
const started = performance.now();
const log = (m: string): void => void process.stderr.write(`[recipes-throughput ${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${m}\n`);

const WORKLOADS = [
  { key: "semaphore", label: "Semaphore lease (permits 2)" },
  { key: "readLock", label: "ReadWriteLock read side" },
  { key: "writeLock", label: "ReadWriteLock write side" },
];

interface Runner {
  id: string;
  variantOf?: string;
  cmd: string;
  args: string[];
}

async function runners(): Promise<Runner[]> {
  const ours = join(ROOT, "bench", "runners", "recipes.ts");
  const list: Runner[] = [{ id: "zookeeper-ts", cmd: process.execPath, args: ["--import", "tsx", ours] }];
  const classes = await compileJava(join(ROOT, "bench", "java", "CuratorRecipesBench.java"));
  list.push({ id: "curator", cmd: "java", args: ["-cp", [classes, ...(await curatorClasspath())].join(":"), "CuratorRecipesBench"] });
  const python = "/usr/bin/python3";
  if (spawnSync(python, ["-c", "import kazoo"]).status === 0) list.push({ id: "kazoo", cmd: python, args: [join(ROOT, "bench", "runners", "kazoo_runner.py")] });
  else log("kazoo left out: the system Python has no kazoo (Debian's python3-kazoo)");
  if (existsSync(join(BIN, "bun"))) list.push({ id: "zookeeper-ts@bun", variantOf: "zookeeper-ts", cmd: join(BIN, "bun"), args: [ours] });
  if (existsSync(join(BIN, "deno"))) list.push({ id: "zookeeper-ts@deno", variantOf: "zookeeper-ts", cmd: join(BIN, "deno"), args: ["run", "-A", "--quiet", ours] });
  return opt.peers ? list.filter((r) => opt.peers!.split(",").includes(r.id)) : list;
}

let server: ZkServer | undefined;
try {
  const connect = process.env.ZK_CONNECT ?? (server = await startStandalone()).connectString;
  log(`server ${connect}${server ? " (standalone, started for this run)" : " (ZK_CONNECT)"}`);
  const peers = await runners();
  const base = `/bench-recipes-${randomUUID().slice(0, 8)}`;
  // A fresh server's JVM is cold: whoever went first paid for it (our Semaphore on Node, first in the table, had
  // 2 to 4 times the p50 it had when run again). One unmeasured pass of every workload warms the server first.
  const warmer = peers.find((p) => p.id === "zookeeper-ts") ?? peers[0];
  if (warmer) {
    for (const w of WORKLOADS) {
      const params = [`ms=${opt.warmup}`, "warmupMs=0", `root=${base}/warm`, ...(w.key === "semaphore" ? ["permits=2"] : [])];
      await runChild(warmer.cmd, [...warmer.args, connect, w.key, ...params], 120_000).catch((e: Error) => log(`warm-up ${w.key} failed: ${e.message}`));
    }
    log(`server warmed (${warmer.id}, ${opt.warmup} ms per workload, not measured)`);
  }
  const rows: Row[] = [];
  for (const [wi, w] of WORKLOADS.entries()) {
    const turn = wi % peers.length; // rotate who goes first
    for (const peer of [...peers.slice(turn), ...peers.slice(0, turn)]) {
      const row: Row = { workload: w.label, key: w.key, client: peer.id, variantOf: peer.variantOf };
      try {
        const params = [`ms=${opt.ms}`, `warmupMs=${opt.warmup}`, `root=${base}/${peer.id.replace(/[^a-z0-9-]/g, "-")}`, ...(w.key === "semaphore" ? ["permits=2"] : [])];
        row.result = await runChild(peer.cmd, [...peer.args, connect, w.key, ...params], 120_000);
        log(`${w.key} ${peer.id}: ${row.result.opsPerSec} acquire+release/s, p50 ${row.result.p50Ms} ms`);
      } catch (e) {
        row.error = (e as Error).message;
        log(`${w.key} ${peer.id} FAILED: ${row.error}`);
      }
      rows.push(row);
    }
  }
  const order = (r: Row): number => WORKLOADS.findIndex((w) => w.key === r.key) * 100 + peers.findIndex((p) => p.id === r.client);
  rows.sort((a, b) => order(a) - order(b));
  process.stdout.write(`\n${renderTable(rows).replace("ops/s", "acq+rel/s")}\n`);
  process.stdout.write(`(one uncontended holder per client; server ${server ? "standalone, started for this run" : connect}; ${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
} finally {
  await server?.close();
}
