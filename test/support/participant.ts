// A standalone election participant, one OS process per participant (for crash tests and the demo).
//   npx tsx test/support/participant.ts <connectString> <path> <id> [sessionTimeoutMs]
//   npx bun test/support/participant.ts ...        npx deno run -A test/support/participant.ts ...
// Same line protocol as test/interop/LatchParticipant.java (Curator), one flushed line per event:
//   READY | ELECTED <mono-ns> <epoch-ms> <token> | REVOKED <mono-ns> <epoch-ms> <reason> | WATCH <path>
//   STATE <state> <mono-ns> <epoch-ms> | LEADER <id|-> | PARTICIPANTS <id,...> | PATH <path> | HAS <bool>
//   CLOCK <mono-ns> <epoch-ms> | CLOSED | ERROR <text>
// stdin commands: resign, close, leader?, participants?, path?, has?, clock? (EOF = close).
// mono-ns is process.hrtime.bigint(): CLOCK_MONOTONIC under Node; Bun and Deno count from their own
// start, so a launcher maps stamps with "clock?" (see participant-process.ts).
import process from "node:process";
import { writeSync } from "node:fs";
import { ZooKeeper } from "../../src/index.ts";
import { LeaderElection } from "../../src/recipes/index.ts";

// writeSync: the line is out before the next statement, so a kill -9 right after loses nothing.
const emit = (line: string): void => void writeSync(1, `${line}\n`);
const stamp = (): string => `${process.hrtime.bigint()} ${Date.now()}`;

const [connectString, path, id, sessionArg] = process.argv.slice(2);
if (!connectString || !path || id === undefined) {
  process.stderr.write("usage: participant.ts <connectString> <path> <id> [sessionTimeoutMs]\n");
  process.exit(2);
}
const sessionTimeout = sessionArg ? Number(sessionArg) : 6000;

const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: Math.max(sessionTimeout, 10_000) });
zk.on("state", (state) => emit(`STATE ${state} ${stamp()}`));
const election = new LeaderElection(zk, path, { id });
// READY comes first even when the election is decided before start() resolves.
const early: string[] = [];
let ready = false;
const out = (line: string): void => (ready ? emit(line) : void early.push(line));
election.on("elected", () => out(`ELECTED ${stamp()} ${election.token ?? "-"}`));
election.on("revoked", (reason) => out(`REVOKED ${stamp()} ${reason}`));
election.on("watch", (p) => out(`WATCH ${p}`));
election.on("error", (e) => out(`ERROR ${e.message}`));
await election.start();
ready = true;
emit("READY");
for (const line of early.splice(0)) emit(line);

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
    case "participants?":
      emit(`PARTICIPANTS ${(await election.participants()).map((p) => p.id).join(",")}`);
      break;
    case "path?":
      emit(`PATH ${election.candidatePath ?? "-"}`);
      break;
    case "has?":
      emit(`HAS ${election.isLeader}`);
      break;
    case "clock?":
      emit(`CLOCK ${stamp()}`);
      break;
    default:
      emit(`ERROR unknown command ${cmd}`);
  }
}

// Commands run one at a time, in order.
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
process.stdin.on("end", () => void chain.then(close));
