// Profiling driver: `n` sequential operations of one kind, for `valgrind --tool=callgrind` (instruction
// counts are stable on a loaded machine, unlike wall time) or `node --cpu-prof`. Per-op cost = the
// difference between two runs with different n, divided by the difference in n (startup cancels out).
//   ZK_CONNECT=127.0.0.1:2181 valgrind --tool=callgrind node bench/.build/js/bench/prof.js ts connect 100
// client: ts (zookeeper-ts) | raw (bench/runners/raw-client.ts); op: connect (connect + close) | get | set;
// a 4th argument keeps that many operations outstanding (default 1: one after the other).
import { ZooKeeper } from "../src/index.ts";
import { driver as raw } from "./runners/raw-client.ts";

const [client = "ts", op = "connect", count = "100", depth = "1"] = process.argv.slice(2);
const n = Number(count);
/** Runs `one` n times with `depth` of them outstanding at once. */
async function loop(one: () => Promise<unknown>): Promise<void> {
  let left = n;
  const lane = async (): Promise<void> => {
    while (left-- > 0) await one();
  };
  await Promise.all(Array.from({ length: Number(depth) }, lane));
}
const cs = process.env.ZK_CONNECT ?? "127.0.0.1:2181";
const data = new Uint8Array(100);

if (client === "ts") {
  if (op === "connect") for (let i = 0; i < n; i++) await (await ZooKeeper.connect(cs, { sessionTimeout: 30_000 })).close();
  else {
    const zk = await ZooKeeper.connect(cs, { sessionTimeout: 30_000 });
    await zk.create("/prof", data).catch(() => {});
    await loop(() => (op === "get" ? zk.getData("/prof") : zk.setData("/prof", data)));
    await zk.close();
  }
} else {
  const p = (f: (d: (e: Error | null) => void) => void): Promise<void> => new Promise((res, rej) => f((e) => (e ? rej(e) : res())));
  if (op === "connect") for (let i = 0; i < n; i++) await (await raw.connect(cs)).close();
  else {
    const s = await raw.connect(cs);
    await p((d) => s.ensure("/prof", data, false, d));
    await loop(() => p((d) => (op === "get" ? s.get("/prof", d) : s.set("/prof", data, d))));
    await s.close();
  }
}
process.exit(0);
