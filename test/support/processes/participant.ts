// A standalone election participant, one OS process per participant (for crash tests and the demo).
//   npx tsx test/support/processes/participant.ts <connectString> <path> <id> [sessionTimeoutMs]
//   npx bun test/support/processes/participant.ts ...        npx deno run -A test/support/processes/participant.ts ...
// Same line protocol as test/interop/LatchParticipant.java (Curator), one flushed line per event:
//   READY | ELECTED <mono-ns> <epoch-ms> <token> | REVOKED <mono-ns> <epoch-ms> <reason> | WATCH <path> [own]
//   STATE <state> <mono-ns> <epoch-ms> | LEADER <id|-> | PARTICIPANTS <id,...> | PATH <path> | HAS <bool>
//   CLOCK <mono-ns> <epoch-ms> | CLOSED | ERROR <text>
// stdin commands: resign, close, leader?, participants?, path?, has?, clock? (EOF = close).
// mono-ns is process.hrtime.bigint(): CLOCK_MONOTONIC under Node; Bun and Deno count from their own
// start, so a launcher maps stamps with "clock?" (see participant-process.ts).
import process from "node:process";
import { ZooKeeper } from "../../../src/index.ts";
import { LeaderElection } from "../../../src/recipes/index.ts";
import { answerCommon, closer, emit, readyGate, reportElection, serveCommands, stamp } from "./participant-kit.ts";

const [connectString, path, id, sessionArg] = process.argv.slice(2);
if (!connectString || !path || id === undefined) {
  process.stderr.write("usage: participant.ts <connectString> <path> <id> [sessionTimeoutMs]\n");
  process.exit(2);
}
const sessionTimeout = sessionArg ? Number(sessionArg) : 6000;

const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: Math.max(sessionTimeout, 10_000) });
zk.on("state", (state) => emit(`STATE ${state} ${stamp()}`));
const election = new LeaderElection(zk, path, { id });
const gate = readyGate();
reportElection(election, gate.out);
await election.start();
gate.open("READY");

const close = closer(election, zk);
serveCommands(async (cmd) => {
  if (await answerCommon(cmd, election, close)) return;
  switch (cmd) {
    case "participants?":
      emit(`PARTICIPANTS ${(await election.participants()).map((p) => p.id).join(",")}`);
      break;
    case "path?":
      emit(`PATH ${election.candidatePath ?? "-"}`);
      break;
    default:
      emit(`ERROR unknown command ${cmd}`);
  }
}, close);
