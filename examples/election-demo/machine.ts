// One machine of `npm run demo -- --compare`, its own OS process, running one election design:
//   node --import tsx examples/election-demo/machine.ts <design> <connectString> <dir> <id> <sessionTimeoutMs>
// It speaks the participant line protocol of test/support/processes/participant.ts (one flushed line per event):
//   READY <negotiated-ms> | ELECTED <mono-ns> <epoch-ms> - | REVOKED <mono-ns> <epoch-ms> <reason>
//   WATCH <path> | OWN <path> | WORK <mono-ns> | CLOCK <mono-ns> <epoch-ms> | ERROR <text> | CLOSED
// WORK is the master "acting": printed every WORK_MS while the design says this machine is master.
// stdin commands: clock?, close (EOF = close).
import process from "node:process";
import { ZooKeeper } from "../../src/index.ts";
import { emit, readyGate, serveCommands, stamp } from "../../test/support/processes/participant-kit.ts";
import { DESIGNS, type DesignName } from "./designs/index.ts";

const WORK_MS = 25;

const [design, connectString, dir, id, sessionArg] = process.argv.slice(2);
if (!(design in DESIGNS) || !connectString || !dir || !id || !sessionArg) {
  process.stderr.write(`usage: machine.ts <${Object.keys(DESIGNS).join("|")}> <connectString> <dir> <id> <sessionTimeoutMs>\n`);
  process.exit(2);
}
// The naive designs fire and forget their re-checks; a failed one is a line, never a crash.
process.on("unhandledRejection", (e) => emit(`ERROR ${(e as Error)?.message ?? String(e)}`.replace(/\n/g, " ")));

const sessionTimeout = Number(sessionArg);
const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: 15_000 });
const gate = readyGate();
const acting = await DESIGNS[design as DesignName]({
  zk,
  dir,
  id,
  report: {
    master: () => gate.out(`ELECTED ${stamp()} -`),
    stepDown: (reason) => gate.out(`REVOKED ${stamp()} ${reason}`),
    watch: (path) => gate.out(`WATCH ${path ?? "-"}`),
    own: (path) => gate.out(`OWN ${path}`),
  },
});
gate.open(`READY ${zk.negotiatedTimeout}`);

// The check comes first, the stamp right after: a WORK line is an act taken while the machine believed it was master.
setInterval(() => {
  if (acting()) emit(`WORK ${process.hrtime.bigint()}`);
}, WORK_MS);

let closing = false;
const close = async (): Promise<void> => {
  if (closing) return;
  closing = true;
  await zk.close().catch(() => {});
  emit("CLOSED");
  process.exit(0);
};
serveCommands(async (cmd) => {
  if (cmd === "clock?") emit(`CLOCK ${stamp()}`);
  else if (cmd === "close") await close();
  else emit(`ERROR unknown command ${cmd}`);
}, close);
