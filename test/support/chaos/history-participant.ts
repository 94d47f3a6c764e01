// One client of a history run (history-run.ts) as its own OS process, under Node, Bun or Deno:
//   <runtime> test/support/chaos/history-participant.ts <connectString> <root> <key,key,...> <name> <seed> <sessionTimeoutMs> <deadlineMs>
// It runs the same workload as the in-process clients (driveClient) and prints:
//   READY                    once connected
//   OP <json>                one OpReport per operation, stamped on this process's hrtime (ms; Infinity as null)
//   CLOCK <mono-ns> <epoch-ms>   reply to "clock?" (the parent maps our stamps onto its clock)
// "stop" (or stdin EOF) ends the workload after the op in flight; it closes the session and exits 0.
import process from "node:process";
import { ZooKeeper } from "../../../src/index.ts";
import { driveClient } from "./history-run.ts";
import { emit, serveCommands, stamp } from "../processes/participant-kit.ts";
import { rng } from "../prng.ts";

const [connectString, root, keys, name, seed, sessionArg, deadlineArg] = process.argv.slice(2);
if (!connectString || !root || !keys || !name || !seed || !sessionArg || !deadlineArg) {
  process.stderr.write("usage: history-participant.ts <connectString> <root> <keys> <name> <seed> <sessionTimeoutMs> <deadlineMs>\n");
  process.exit(2);
}
const connectOpts = { sessionTimeout: Number(sessionArg), connectTimeout: 30_000 };
let running = true;
serveCommands(async (cmd) => {
  if (cmd === "clock?") emit(`CLOCK ${stamp()}`);
  else if (cmd === "stop") running = false;
  else emit(`ERROR unknown command ${cmd}`);
}, async () => void (running = false));

const first = await ZooKeeper.connect(connectString, connectOpts);
emit("READY");
const zk = await driveClient({
  name, root, keys: keys.split(","), random: rng(Number(seed)), deadlineMs: Number(deadlineArg),
  now: () => Number(process.hrtime.bigint()) / 1e6,
  running: () => running,
  connect: () => ZooKeeper.connect(connectString, connectOpts),
  report: (r) => emit(`OP ${JSON.stringify(r)}`),
}, first);
await zk.close().catch(() => {});
process.exit(0);
