// An election participant for the chaos tests, one OS process each (Node, Bun or Deno):
//   <runtime> test/support/chaos-participant.ts <connectString> <path> <id> <sessionTimeoutMs>
// The line protocol of participant.ts (READY, ELECTED, REVOKED, WATCH, LEADER, CLOCK, CLOSED, ERROR),
// plus what the safety checks need:
//   READY <negotiated-ms>   once the candidate znode is in place
//   WORK <mono-ns>          every WORK_MS while election.isLeader is true: the "actions" a leader takes,
//                           which must never fall inside another participant's leadership
//   SERVER <host:port|->    reply to "server?" (which ensemble member our session is connected to)
//   EXPIRED <mono-ns> <epoch-ms>   the session expired; the process exits (the test respawns)
//   STATE <state> <mono-ns> <epoch-ms>   session state changes (for diagnosing slow failovers)
import process from "node:process";
import { writeSync } from "node:fs";
import { ZooKeeper } from "../../src/index.ts";
import { LeaderElection } from "../../src/recipes/index.ts";

const WORK_MS = 25;
const emit = (line: string): void => void writeSync(1, `${line}\n`); // out before a kill -9 can lose it
const stamp = (): string => `${process.hrtime.bigint()} ${Date.now()}`;

const [connectString, path, id, sessionArg] = process.argv.slice(2);
if (!connectString || !path || !id || !sessionArg) {
  process.stderr.write("usage: chaos-participant.ts <connectString> <path> <id> <sessionTimeoutMs>\n");
  process.exit(2);
}
const sessionTimeout = Number(sessionArg);

const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: 15_000 });
const election = new LeaderElection(zk, path, { id });
let ready = false;
const early: string[] = [];
const out = (line: string): void => (ready ? emit(line) : void early.push(line));
election.on("elected", () => out(`ELECTED ${stamp()} ${election.token ?? "-"}`));
election.on("revoked", (reason) => out(`REVOKED ${stamp()} ${reason}`));
election.on("watch", (p) => out(`WATCH ${p}`));
election.on("error", (e) => out(`ERROR ${e.message}`));
zk.on("state", (state) => {
  out(`STATE ${state} ${stamp()}`);
  if (state !== "expired") return;
  // The election has already emitted REVOKED (if it led); leave so the test can respawn a fresh one.
  out(`EXPIRED ${stamp()}`);
  void zk.close().finally(() => process.exit(3));
});
await election.start();
ready = true;
emit(`READY ${zk.negotiatedTimeout}`);
for (const line of early.splice(0)) emit(line);

// The check comes first, the stamp right after: a WORK line is an action taken while isLeader was true.
setInterval(() => {
  if (election.isLeader) emit(`WORK ${process.hrtime.bigint()}`);
}, WORK_MS);

let closing = false;
async function close(): Promise<void> {
  if (closing) return;
  closing = true;
  await election.close().catch((e: Error) => emit(`ERROR close ${e.message}`));
  await zk.close().catch(() => {});
  emit("CLOSED");
  process.exit(0);
}

async function answer(cmd: string): Promise<void> {
  switch (cmd) {
    case "resign":
      await election.resign();
      break;
    case "close":
      await close();
      break;
    case "leader?":
      emit(`LEADER ${(await election.leader())?.id || "-"}`);
      break;
    case "has?":
      emit(`HAS ${election.isLeader}`);
      break;
    case "server?":
      emit(`SERVER ${zk.remoteAddress ?? "-"}`);
      break;
    case "clock?":
      emit(`CLOCK ${stamp()}`);
      break;
    default:
      emit(`ERROR unknown command ${cmd}`);
  }
}

let chain: Promise<void> = Promise.resolve();
let partial = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  const lines = (partial + chunk).split("\n");
  partial = lines.pop() ?? "";
  for (const raw of lines) {
    const cmd = raw.trim();
    if (cmd) chain = chain.then(() => answer(cmd)).catch((e: Error) => emit(`ERROR ${e.message}`));
  }
});
process.stdin.on("end", () => void chain.then(close)); // never outlive the test process
