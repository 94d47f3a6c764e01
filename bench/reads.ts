// What a linearizable read costs beside a plain read and sync() + read: one client connected to a follower of a
// local 3-server ensemble (3.8.0, started here) reads one 100-byte znode, one call at a time, in three modes
// interleaved round by round so that drift hits all alike:
//   getData                    the follower's copy (may lag the quorum)
//   sync + getData             sync() first (the follower catches up with the leader; not a quorum round)
//   getData { linearizable }   the read, then multi([check(path, version)]), which the leader orders and logs
// Prints ops/s and the median and p99 latency of each, and each one's ratio to the plain read.
//   node --import tsx bench/reads.ts [--rounds 10] [--ops 200]
import { parseArgs } from "node:util";
import { ZooKeeper } from "../src/index.ts";
import { startEnsemble } from "../test/support/servers/zk-server.ts";

const { values: opt } = parseArgs({ options: { rounds: { type: "string", default: "10" }, ops: { type: "string", default: "200" } } });
const ROUNDS = Number(opt.rounds);
const OPS = Number(opt.ops);
const log = (m: string): void => void process.stderr.write(`[reads] ${m}\n`);

const ensemble = await startEnsemble({ size: 3 });
try {
  const leader = await ensemble.leader();
  const follower = ensemble.servers.find((s) => s !== leader)!;
  const zk = await ZooKeeper.connect(follower.connectString, { sessionTimeout: 20_000 });
  const writer = await ZooKeeper.connect(leader.connectString, { sessionTimeout: 20_000 });
  const path = `/bench-reads-${process.pid}`;
  await writer.create(path, new Uint8Array(100));
  await zk.sync(path);
  const modes: [string, () => Promise<unknown>][] = [
    ["getData", () => zk.getData(path)],
    ["sync + getData", () => zk.sync(path).then(() => zk.getData(path))],
    ["getData { linearizable }", () => zk.getData(path, undefined, { linearizable: true })],
  ];
  const times = new Map<string, number[]>(modes.map(([name]) => [name, []]));
  const wall = new Map<string, number>(modes.map(([name]) => [name, 0]));
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, read] of modes) {
      const t0 = performance.now();
      for (let i = 0; i < OPS; i++) {
        const s = performance.now();
        await read();
        if (round > 0) times.get(name)!.push(performance.now() - s); // round 0 warms up
      }
      if (round > 0) wall.set(name, wall.get(name)! + performance.now() - t0);
    }
  }
  const q = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
  const base = { rate: (ROUNDS * OPS) / (wall.get("getData")! / 1000), p50: q(times.get("getData")!, 0.5) };
  console.log(`reads on a follower of a 3-server ensemble (3.8.0), 1 outstanding, ${ROUNDS} rounds x ${OPS} ops, ${"Bun" in globalThis ? "Bun" : "Deno" in globalThis ? "Deno" : "Node"}`);
  console.log(`${"mode".padEnd(26)} ${"ops/s".padStart(8)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"ops/s ratio".padStart(12)} ${"p50 ratio".padStart(10)}`);
  for (const [name] of modes) {
    const xs = times.get(name)!;
    const rate = (ROUNDS * OPS) / (wall.get(name)! / 1000);
    const p50 = q(xs, 0.5);
    console.log(`${name.padEnd(26)} ${rate.toFixed(0).padStart(8)} ${p50.toFixed(3).padStart(8)} ${q(xs, 0.99).toFixed(3).padStart(8)} ${(rate / base.rate).toFixed(2).padStart(11)}x ${(p50 / base.p50).toFixed(2).padStart(9)}x`);
  }
  await writer.delete(path);
  await zk.close();
  await writer.close();
} finally {
  log("stopping the ensemble");
  await ensemble.close();
}
