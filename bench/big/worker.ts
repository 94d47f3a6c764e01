// One process of `npm run bench:election` (bench/big/main.ts): `count` participants, each on its own
// session. Reads commands from stdin and writes JSON lines (events carry epoch-based high-resolution
// times, so the coordinator can compare them across processes). Commands:
//   {"cmd":"join"}             connect and start every LeaderElection (in order of index)
//   {"cmd":"resign","id":..}   / {"cmd":"close","id":..}: the participant steps down or leaves
//   {"cmd":"group"}            every session joins a GroupMember; participant 0 of each process listens
//   {"cmd":"ungroup"}          / {"cmd":"exit"}
import { createInterface } from "node:readline";
import { ZooKeeper } from "../../src/index.ts";
import { GroupMember, LeaderElection } from "../../src/recipes/index.ts";

const [connect, path, groupPath, first, count] = process.argv.slice(2);
const base = Number(first);
const n = Number(count);
const now = (): number => performance.timeOrigin + performance.now();
const send = (msg: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(msg) + "\n");
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const heap = (): number => (gc(), process.memoryUsage().heapUsed);
const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

const sessions: ZooKeeper[] = [];
const elections = new Map<string, LeaderElection>();
const members: GroupMember[] = [];

/** Runs `fn` over 0..n-1 with at most `width` in flight (connects and joins in waves, not 2,500 at once). */
async function inWaves(total: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, total) }, async () => {
    while (next < total) await fn(next++);
  }));
}

async function join(): Promise<void> {
  const h0 = heap();
  const t0 = now();
  const c0 = cpu();
  let done = 0;
  await inWaves(n, 16, async (i) => {
    let zk: ZooKeeper | undefined;
    for (let attempt = 1; !zk; attempt++) {
      try {
        zk = await ZooKeeper.connect(connect, { sessionTimeout: 40_000, connectTimeout: 60_000 });
      } catch (e) {
        if (attempt >= 5) throw e;
        send({ ev: "retry", what: "connect", message: String(e) });
      }
    }
    sessions[i] = zk;
    const id = `p${base + i}`;
    const e = new LeaderElection(zk, path, { id });
    e.on("elected", () => send({ ev: "elected", id, t: now() }));
    e.on("watch", () => send({ ev: "watch", id, t: now() }));
    e.on("error", (err) => send({ ev: "error", id, message: String(err) }));
    elections.set(id, e);
    await e.start();
    if (++done % 500 === 0) send({ ev: "progress", done, t: now() });
  });
  send({ ev: "joined", t0, t: now(), cpu: cpu() - c0, heapPerParticipant: (heap() - h0) / n });
}

async function group(): Promise<void> {
  const h0 = heap();
  const t0 = now();
  let changes = 0;
  await inWaves(n, 64, async (i) => {
    const g = new GroupMember(sessions[i], groupPath, { id: `m${base + i}`, data: "x" });
    if (i === 0) {
      g.on("change", (list) => {
        changes++;
        send({ ev: "change", size: list.length, changes, t: now() });
      });
    }
    members[i] = g;
    await g.join();
  });
  send({ ev: "grouped", t0, t: now(), heapPerMember: (heap() - h0) / n });
}

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const msg = JSON.parse(line) as { cmd: string; id?: string };
  const run = async (): Promise<void> => {
    switch (msg.cmd) {
      case "join":
        return join();
      case "resign":
      case "close": {
        const e = elections.get(msg.id!);
        if (!e) return;
        send({ ev: msg.cmd, id: msg.id, t: now() });
        if (msg.cmd === "resign") await e.resign();
        else {
          elections.delete(msg.id!);
          await e.close();
        }
        return;
      }
      case "group":
        return group();
      case "ungroup": {
        const h0 = heap();
        await inWaves(members.length, 64, (i) => members[i].leave());
        members.length = 0;
        send({ ev: "ungrouped", freed: h0 - heap() });
        return;
      }
      case "stats":
        return void send({ ev: "stats", cpu: cpu(), heap: heap(), leaders: [...elections].filter(([, e]) => e.isLeader).map(([id]) => id) });
      case "exit":
        await Promise.all([...elections.values()].map((e) => e.close()));
        await inWaves(sessions.length, 256, (i) => sessions[i].close());
        send({ ev: "bye" });
        process.exit(0);
    }
  };
  run().catch((e: unknown) => send({ ev: "error", message: e instanceof Error ? (e.stack ?? e.message) : String(e) }));
});
send({ ev: "ready" });
