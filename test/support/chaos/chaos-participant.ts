// An election participant for the chaos tests, one OS process each (Node, Bun or Deno):
//   <runtime> test/support/chaos/chaos-participant.ts <connectString> <path> <id> <sessionTimeoutMs>
// The line protocol of participant.ts (READY, ELECTED, REVOKED, WATCH, LEADER, CLOCK, CLOSED, ERROR),
// plus what the safety checks need:
//   READY <negotiated-ms>   once the candidate znode is in place
//   WORK <mono-ns>          every WORK_MS while election.isLeader is true: the "actions" a leader takes,
//                           which must never fall inside another participant's leadership
//   SERVER <host:port|->    reply to "server?" (which ensemble member our session is connected to)
//   EXPIRED <mono-ns> <epoch-ms>   the session expired; the process exits (the test respawns)
//   STATE <state> <mono-ns> <epoch-ms>   session state changes (for diagnosing slow failovers)
//   ZKWATCH <mono-ns> <epoch-ms> <type> <path>   every watch event the client delivered (likewise)
//   STALL <mono-ns> <epoch-ms> <ms>   this process ran nothing for that long (blocked, starved or stopped; likewise)
//   SLOW <mono-ns> <epoch-ms> <operation> <path|-> <ms> <ok|code>   a call that took over SLOW_MS (likewise)
import * as dc from "node:diagnostics_channel";
import process from "node:process";
import { ZooKeeper } from "../../../src/index.ts";
import { LeaderElection } from "../../../src/recipes/index.ts";
import { answerCommon, closer, emit, readyGate, reportElection, serveCommands, stamp } from "../processes/participant-kit.ts";

const WORK_MS = 25;
const SLOW_MS = 200;

const [connectString, path, id, sessionArg] = process.argv.slice(2);
if (!connectString || !path || !id || !sessionArg) {
  process.stderr.write("usage: chaos-participant.ts <connectString> <path> <id> <sessionTimeoutMs>\n");
  process.exit(2);
}
const sessionTimeout = Number(sessionArg);

const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: 15_000 });
const election = new LeaderElection(zk, path, { id });
const gate = readyGate();
// The first connect came before the listener below: stamped here (just after), it tells when the ensemble served this process.
gate.out(`STATE ${zk.state} ${stamp()}`);
reportElection(election, gate.out);
// What a slow failover's report needs to tell the server's time from ours: when each watch event reached the
// client, and which calls were slow (the client's own trace channels, as a tracer would read them).
dc.subscribe("zookeeper-ts:watch", (m) => {
  const w = m as { type: string; path: string | null };
  gate.out(`ZKWATCH ${stamp()} ${w.type} ${w.path ?? "-"}`);
});
const callStart = new WeakMap<object, bigint>();
dc.tracingChannel("zookeeper-ts:request").subscribe({
  start: (ctx) => void callStart.set(ctx as object, process.hrtime.bigint()),
  end: () => {},
  asyncStart: () => {},
  error: () => {},
  asyncEnd: (ctx) => {
    const c = ctx as { operation: string; path?: string; error?: { code?: string; name: string } };
    const t0 = callStart.get(c);
    if (t0 === undefined) return;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (ms > SLOW_MS) gate.out(`SLOW ${stamp()} ${c.operation} ${c.path ?? "-"} ${ms.toFixed(0)} ${c.error ? (c.error.code ?? c.error.name) : "ok"}`);
  },
});
zk.on("state", (state) => {
  gate.out(`STATE ${state} ${stamp()}`);
  if (state !== "expired") return;
  // The election has already emitted REVOKED (if it led); leave so the test can respawn a fresh one.
  gate.out(`EXPIRED ${stamp()}`);
  void zk.close().finally(() => process.exit(3));
});
await election.start();
gate.open(`READY ${zk.negotiatedTimeout}`);

// A WORK line is an action taken while isLeader was true: true just before its stamp and again just after. One
// check before the stamp is not enough: a SIGSTOP can land between the two, and the stamp then falls after the
// resume although the check was made before the stop (stop 38's CI, seed 95945: "n71 resumed from SIGSTOP and
// logged WORK before REVOKED", a stop 0.3 ms after its ELECTED). The check after the stamp is made after the
// resume in that case, when the lease has lapsed; a leader that acted after a resume still logs it.
setInterval(() => {
  if (!election.isLeader) return;
  const at = process.hrtime.bigint();
  if (election.isLeader) emit(`WORK ${at}`);
}, WORK_MS);

// A 50 ms tick that comes over 200 ms late: the process itself was not running (or a SIGSTOP ended).
let tick = process.hrtime.bigint();
setInterval(() => {
  const t = process.hrtime.bigint();
  const late = Number(t - tick) / 1e6 - 50;
  tick = t;
  if (late > 200) gate.out(`STALL ${stamp()} ${late.toFixed(0)}`);
}, 50);

const close = closer(election, zk);
serveCommands(async (cmd) => {
  if (await answerCommon(cmd, election, close)) return;
  if (cmd === "server?") emit(`SERVER ${zk.remoteAddress ?? "-"}`);
  else emit(`ERROR unknown command ${cmd}`);
}, close);
