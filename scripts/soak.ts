// `npm run soak -- --minutes N [--out DIR]`: a long run against a real 3-server ensemble. Mixed load
// (gets, sets, ephemerals, one-shot and persistent watches, a LeaderElection with resigns, a
// GroupMember group with churn) from four sessions whose client links run through fault proxies; a
// link is cut every 20 s and one server (a follower, then the leader) is restarted twice during the
// warm-up and then every (N/2) minutes. Each minute it samples RSS, heap used after a full GC (node --expose-gc), active
// handles and pending timers (process.getActiveResourcesInfo) into DIR/soak.csv and draws
// DIR/soak.png with gnuplot. Passes when the least-squares slope of heap-after-GC stays below
// 50 KB/min, the load made progress in every minute, and the handles return to their baseline after
// everything is closed. Exit code 0 = pass.
//
// Heap census: each sample also writes V8's per-space used sizes and its code statistics (bytecode,
// compiled code) to DIR/heap-census.csv, and the end prints each column's slope. Measured: under a
// plain `node --expose-gc` the slope of a 3-minute window was 93-218 KB/min, carried by old_space and
// code_space while V8 compiled, optimised and flushed/recompiled the load's functions (feedback vectors,
// bytecode, optimised code), not by objects of ours; `npm run soak` therefore runs node with
// --no-opt --no-maglev --no-sparkplug --no-flush-bytecode, so what is left is the program's own heap.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import v8 from "node:v8";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { CreateMode, ZooKeeper, isZooKeeperError, type WatchedEvent } from "../src/index.ts";
import { GroupMember, LeaderElection } from "../src/recipes/index.ts";
import { startFaultProxy, type FaultProxy } from "../test/support/fakes/fault-proxy.ts";
import { startEnsemble, type ZkEnsemble } from "../test/support/servers/zk-server.ts";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    out: { type: "string" },
    "slope-limit-kb": { type: "string", default: "50" },
    "warmup-seconds": { type: "string", default: "60" }, // load runs this long before the first sample (JIT, pools)
  },
});
const minutes = Number(values.minutes);
if (!(minutes >= 1)) throw new Error(`--minutes must be a number >= 1, got ${values.minutes}`);
const out = values.out ?? join(tmpdir(), `zk-soak-${new Date().toISOString().replace(/[:.]/g, "-")}`);
const slopeLimitKb = Number(values["slope-limit-kb"]);
const warmupMs = Number(values["warmup-seconds"]) * 1000;
mkdirSync(out, { recursive: true });
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc (npm run soak does)");

const log = (msg: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const counts = { ops: 0, errors: 0, watchEvents: 0, elected: 0, groupChanges: 0, cuts: 0, restarts: 0 };
const unexpected: string[] = [];
process.on("unhandledRejection", (e) => unexpected.push(`unhandled rejection: ${String(e)}`));

/** Connection loss, expiry and friends are what faults cause; anything else is a finding. */
function expected(e: unknown): boolean {
  return isZooKeeperError(e) && ["CONNECTIONLOSS", "SESSIONEXPIRED", "NONODE", "NODEEXISTS", "SESSIONMOVED", "OPERATIONTIMEOUT"].includes(e.codeName);
}
async function op<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    const r = await p;
    counts.ops++;
    return r;
  } catch (e) {
    counts.errors++;
    if (!expected(e)) unexpected.push(`op failed: ${String(e)}`);
    return undefined;
  }
}

function resources(): { handles: number; timers: number; kinds: string } {
  const info = process.getActiveResourcesInfo();
  const byKind: Record<string, number> = {};
  for (const k of info) byKind[k] = (byKind[k] ?? 0) + 1;
  return { handles: info.filter((k) => k !== "Timeout" && k !== "Immediate").length, timers: byKind.Timeout ?? 0, kinds: JSON.stringify(byKind) };
}

/** The floor of the live heap: five readings ~200 ms apart, each taken in the same turn as a full GC
 * (after a first GC and a pause for weak callbacks and finalizers), and the smallest kept, with its
 * census. Single readings a minute apart varied by ~100 KB both ways while heap snapshots taken with
 * them showed no kind of object growing (minute 0 to 1: -54 KB in all, 24 new FeedbackVectors +13 KB):
 * what the load has in flight at that moment (a batch, a reconnect's queue: a link is cut every 20 s,
 * on the sample's beat). That is enough to push a 4-point slope past the bound in a 3-minute window
 * (65 KB/min seen once); a leak raises the floor. */
async function heapAfterGc(): Promise<{ heap: number; census: Record<string, number> }> {
  let best: { heap: number; census: Record<string, number> } | null = null;
  for (let i = 0; i < 5; i++) {
    gc!();
    await sleep(20);
    gc!();
    const heap = process.memoryUsage().heapUsed;
    if (!best || heap < best.heap) best = { heap, census: census() };
    await sleep(180);
  }
  return best!;
}

/** Used KB per V8 heap space, plus bytecode and compiled code (v8.getHeapCodeStatistics). */
function census(): Record<string, number> {
  const row: Record<string, number> = {};
  for (const s of v8.getHeapSpaceStatistics()) row[s.space_name] = s.space_used_size / 1024;
  const code = v8.getHeapCodeStatistics();
  row.bytecode_and_metadata = code.bytecode_and_metadata_size / 1024;
  row.code_and_metadata = code.code_and_metadata_size / 1024;
  return row;
}

/** Least-squares slope of y over x. */
function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

interface Worker {
  zk: ZooKeeper;
  stop: () => Promise<void>;
}

/** One session's load: data reads/writes, ephemeral create/delete, one-shot watches re-armed. */
function loadWorker(zk: ZooKeeper, k: number, running: () => boolean): Promise<void> {
  const data = `/soak/data-${k}`;
  const onWatch = (e: WatchedEvent) => {
    counts.watchEvents++;
    if (running() && e.type !== -1) void op(zk.exists(data, onWatch));
  };
  return (async () => {
    await op(zk.create(data, "0").catch((e) => (isZooKeeperError(e) && e.codeName === "NODEEXISTS" ? data : Promise.reject(e))));
    await op(zk.exists(data, onWatch));
    let i = 0;
    while (running()) {
      i++;
      const batch: Promise<unknown>[] = [
        op(zk.getData(data)),
        op(zk.setData(data, `v${i}`)),
        op(zk.getData(`/soak/data-${(k + 1) % 4}`)),
        op(zk.getChildren("/soak")),
      ];
      if (i % 5 === 0) {
        const eph = `/soak/eph-${k}-${i}`;
        batch.push(op(zk.create(eph, "e", { mode: CreateMode.EPHEMERAL })).then(() => op(zk.delete(eph))));
      }
      if (i % 50 === 0) void op(zk.exists(data, onWatch)); // re-arm after a reconnect dropped nothing
      await Promise.all(batch);
      await sleep(zk.state === "connected" ? 40 : 200);
    }
  })();
}

async function main(): Promise<number> {
  log(`out ${out}; ${minutes} min; load ${execFileSync("cat", ["/proc/loadavg"]).toString().trim()}`);
  const ensemble: ZkEnsemble = await startEnsemble({ size: 3 });
  const proxies: FaultProxy[] = await Promise.all(ensemble.servers.map((s) => startFaultProxy(s.host, s.clientPort)));
  const connect = proxies.map((p) => p.connectString).join(",");
  await sleep(500);
  const baseline = resources();
  log(`ensemble up; baseline handles ${baseline.handles} timers ${baseline.timers} ${baseline.kinds}`);

  let running = true;
  const alive = () => running;
  const zks = await Promise.all([0, 1, 2, 3].map(() => ZooKeeper.connect(connect, { sessionTimeout: 20_000, connectTimeout: 30_000 })));
  await op(zks[0]!.create("/soak", null).catch((e) => (isZooKeeperError(e) && e.codeName === "NODEEXISTS" ? "/soak" : Promise.reject(e))));
  const loops = zks.map((zk, k) => loadWorker(zk, k, alive));

  // A persistent recursive watch on the tree, consumed as an async iterable.
  const abort = new AbortController();
  const watchLoop = (async () => {
    try {
      for await (const _e of zks[1]!.watch("/soak", { recursive: true, signal: abort.signal })) counts.watchEvents++;
    } catch (e) {
      if (running && !expected(e) && !(e instanceof Error && e.name === "AbortError")) unexpected.push(`watch loop: ${String(e)}`);
    }
  })();

  // An election with three participants; one of them resigns every 7 s.
  const elections = zks.slice(0, 3).map((zk, k) => new LeaderElection(zk, "/soak/election", { id: `p${k}` }));
  for (const e of elections) {
    e.on("elected", () => counts.elected++);
    e.on("error", (err) => unexpected.push(`election error: ${String(err)}`));
    await op(e.start());
  }
  // A group whose members come and go.
  const watcherGroup = new GroupMember(zks[3]!, "/soak/group", { id: "observer" });
  watcherGroup.on("change", () => counts.groupChanges++);
  watcherGroup.on("error", (err) => unexpected.push(`group error: ${String(err)}`));
  await op(watcherGroup.join());
  let churn = 0;
  const members = new Map<string, GroupMember>();

  // The warm-up runs the same load and faults (a follower and a leader restart included), so the
  // first cut, reconnect and restart — code that runs (and allocates its caches) once — fall before t0.
  const started = Date.now();
  const t0 = started + warmupMs;
  const end = t0 + minutes * 60_000;
  const rows: string[] = ["minute,rss_mb,heap_after_gc_kb,handles,timers,ops,errors,watch_events,elected,group_changes,cuts,restarts"];
  const xs: number[] = [];
  const heaps: number[] = [];
  const censusRows: Record<string, number>[] = [];
  let lastOps = -1;
  let stalled = 0;
  const sample = async (minute: number) => {
    const { heap, census: spaces } = await heapAfterGc();
    censusRows.push(spaces);
    const r = resources();
    const rss = process.memoryUsage().rss;
    xs.push(minute);
    heaps.push(heap / 1024);
    rows.push([minute, (rss / 1048576).toFixed(1), (heap / 1024).toFixed(0), r.handles, r.timers, counts.ops, counts.errors,
      counts.watchEvents, counts.elected, counts.groupChanges, counts.cuts, counts.restarts].join(","));
    if (minute > 0 && counts.ops === lastOps) stalled++;
    lastOps = counts.ops;
    log(rows.at(-1)!);
    writeFileSync(join(out, "soak.csv"), rows.join("\n") + "\n");
    const cols = Object.keys(censusRows[0]!);
    const lines = censusRows.map((c, i) => [xs[i], ...cols.map((k) => (c[k] ?? 0).toFixed(0))].join(","));
    writeFileSync(join(out, "heap-census.csv"), [["minute", ...cols].join(","), ...lines].join("\n") + "\n");
  };
  let tick = 0;
  let restartIx = 0;
  const restartEvery = Math.max(1, Math.floor(minutes / 2)) * 60_000;
  const restarts = warmupMs >= 60_000 ? [started + warmupMs / 3, started + (2 * warmupMs) / 3] : [];
  // Restarts inside the window for every length. Measured with the V8 flags of `npm run soak`, 3-minute
  // runs: 7 with restarts inside the window gave 27.7, 65.2, -28.7, 62.8, 3.8, 11.6, 13.0 KB/min and 3
  // with restarts only in the warm-up 23.5, 56.9, -1.4. Each failure is a one-time step of ~120-175 KB of
  // old space, flat before and after, in a run whose bytecode grew 5-7 KB inside the window (runs with 0-2 KB
  // of new bytecode were all flat): a code path running for the first time, restart or not in that minute.
  for (let at = t0 + restartEvery; at < end - 30_000; at += restartEvery) restarts.push(at);
  let nextSample = t0;
  while (Date.now() < end) {
    await sleep(1000);
    tick++;
    if (tick % 7 === 0) {
      const leader = elections.find((e) => e.isLeader);
      if (leader) await op(leader.resign());
    }
    if (tick % 3 === 0) {
      const id = `m${churn++}`;
      const m = new GroupMember(zks[churn % 4]!, "/soak/group", { id });
      m.on("error", () => {}); // faults make members fail; counted through op()
      if (await op(m.join()).then(() => true)) members.set(id, m);
      if (members.size > 5) {
        const [oldId, old] = members.entries().next().value as [string, GroupMember];
        members.delete(oldId);
        await op(old.leave());
      }
    }
    if (tick % 20 === 0) {
      proxies[tick % proxies.length]!.cut();
      counts.cuts++;
    }
    if (restarts.length > 0 && Date.now() >= restarts[0]!) {
      restarts.shift();
      const leader = await ensemble.leader();
      const victim = restartIx++ % 2 === 0 ? ensemble.servers.find((s) => s !== leader)! : leader;
      log(`restarting server ${victim.id} (${victim === leader ? "leader" : "follower"})`);
      await victim.kill("SIGTERM");
      await victim.start();
      await ensemble.waitForQuorum();
      counts.restarts++;
    }
    if (Date.now() >= nextSample) {
      await sample(Math.round((nextSample - t0) / 60_000));
      nextSample += 60_000;
    }
  }
  if (xs.at(-1) !== minutes) await sample(minutes);

  running = false;
  abort.abort();
  await Promise.all(loops);
  await watchLoop;
  for (const m of members.values()) await op(m.leave());
  await op(watcherGroup.leave());
  for (const e of elections) await op(e.close());
  await Promise.all(zks.map((zk) => zk.close()));
  // Handles back to baseline: wait for facts (sockets and timers closing), up to 10 s.
  let after = resources();
  for (let i = 0; i < 100 && (after.handles > baseline.handles || after.timers > baseline.timers); i++) {
    await sleep(100);
    after = resources();
  }
  log(`after close: handles ${after.handles} timers ${after.timers} ${after.kinds}`);
  await Promise.all(proxies.map((p) => p.close()));
  await ensemble.close();

  const kbPerMin = slope(xs, heaps);
  const spaces = Object.keys(censusRows[0] ?? {}).map((k) => {
    const ys = censusRows.map((c) => c[k] ?? 0);
    return `${k} ${ys[0]!.toFixed(0)}->${ys.at(-1)!.toFixed(0)} KB (${slope(xs, ys).toFixed(1)} KB/min)`;
  });
  log(`heap census (used after GC, first->last, slope): ${spaces.join("; ")}; V8 flags: ${process.execArgv.join(" ")}`);
  const png = join(out, "soak.png");
  const chart = plot(join(out, "soak.csv"), png, kbPerMin);
  const failures: string[] = [];
  if (!(kbPerMin < slopeLimitKb)) failures.push(`heap-after-GC slope ${kbPerMin.toFixed(1)} KB/min >= ${slopeLimitKb}`);
  if (after.handles > baseline.handles || after.timers > baseline.timers) {
    failures.push(`handles ${after.handles}/${baseline.handles}, timers ${after.timers}/${baseline.timers} (after/baseline) ${after.kinds}`);
  }
  if (stalled > 0) failures.push(`no operation completed in ${stalled} sampled minute(s)`);
  if (counts.restarts === 0 && (minutes >= 2 || warmupMs >= 60_000)) failures.push("no server restart happened");
  failures.push(...unexpected.slice(0, 20));
  log(`slope ${kbPerMin.toFixed(2)} KB/min; counts ${JSON.stringify(counts)}; csv ${join(out, "soak.csv")}; png ${chart ? png : "(gnuplot missing: no chart)"}`);
  log(`load ${execFileSync("cat", ["/proc/loadavg"]).toString().trim()}`);
  writeFileSync(join(out, "summary.json"), JSON.stringify({ minutes, kbPerMin, baseline, after, counts, failures }, null, 2) + "\n");
  if (failures.length > 0) {
    log(`FAIL:\n  ${failures.join("\n  ")}`);
    return 1;
  }
  log("PASS");
  return 0;
}

/** Draws heap-after-GC and RSS per minute with gnuplot; false when gnuplot is missing. */
function plot(csv: string, png: string, kbPerMin: number): boolean {
  const script = [
    "set terminal png size 900,500 noenhanced", // column names keep their underscores
    `set output '${png}'`,
    "set datafile separator ','",
    "set key autotitle columnhead left top",
    `set title 'zookeeper-ts soak: heap after GC slope ${kbPerMin.toFixed(1)} KB/min'`,
    "set xlabel 'minute'",
    "set ylabel 'heap after GC (KB)'",
    "set y2label 'RSS (MB)'",
    "set ytics nomirror",
    "set y2tics",
    `plot '${csv}' using 1:3 with linespoints axes x1y1, '' using 1:2 with linespoints axes x1y2`,
  ].join("\n");
  try {
    execFileSync("gnuplot", [], { input: script, stdio: ["pipe", "inherit", "inherit"] });
    return true;
  } catch (e) {
    log(`gnuplot failed or missing (${String(e)}); scripts/install-deps.sh installs gnuplot-nox`);
    return false;
  }
}

main().then((code) => process.exit(code), (e) => {
  console.error(e);
  process.exit(1);
});
