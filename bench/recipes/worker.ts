// One process of the recipes benchmark (bench/recipes/run.ts): `count` sessions, one LeaderElection each.
// argv: <connectString> <path> <count> <first id> <sessionTimeoutMs>. Commands on stdin, one per line:
// "join" (every participant starts, concurrently), "resign" (our leader resigns). Lines out (JSON):
// {ready}, {joined, t}, {elected, id, t}; t = wall-clock ms (performance.timeOrigin + now: comparable
// across the processes of one machine).
import { createInterface } from "node:readline";
import { ZooKeeper } from "../../src/index.ts";
import { LeaderElection } from "../../src/recipes/index.ts";

const [cs, path, count, first, timeout] = process.argv.slice(2);
const n = Number(count);
const wall = (): number => performance.timeOrigin + performance.now();
const say = (o: object): void => void process.stdout.write(JSON.stringify(o) + "\n");

const sessions: ZooKeeper[] = [];
for (let i = 0; i < n; i += 50) {
  // 50 handshakes at a time: a thousand at once only queues on the server's accept backlog.
  const batch = Array.from({ length: Math.min(50, n - i) }, () => ZooKeeper.connect(cs!, { sessionTimeout: Number(timeout) }));
  sessions.push(...(await Promise.all(batch)));
}
const elections = sessions.map((zk, i) => new LeaderElection(zk, path!, { id: `p${Number(first) + i}` }));
elections.forEach((e, i) => e.on("elected", () => say({ elected: `p${Number(first) + i}`, t: wall() })));
say({ ready: true });

for await (const line of createInterface({ input: process.stdin })) {
  if (line === "join") {
    await Promise.all(elections.map((e) => e.start()));
    say({ joined: true, t: wall() });
  } else if (line === "resign") {
    await elections.find((e) => e.isLeader)?.resign();
  } else if (line === "close") break;
}
await Promise.all(elections.map((e) => e.close().catch(() => {})));
await Promise.all(sessions.map((zk) => zk.close()));
process.exit(0);
