// A zookeeper-ts Lock or LeaderElection participant as its own OS process, on the line protocol of
// test/interop/MutexParticipant.java and kazoo_participant.py (stamps: process.hrtime.bigint()):
//   npx tsx test/support/lock-participant.ts <connectString> <path> <id> <sessionMs> <lock:curator|lock:kazoo|election:PROTOCOL> [holdMs]
//   READY | HOLD <ns> <ms> <token> | FREE <ns> <ms> (the last moment isHeld was still true) | WATCH <path> <ns> <ms>
//   ELECTED <ns> <ms> <token> | REVOKED <ns> <ms> <reason> | STATE ... | LEADER | PARTICIPANTS | SERVER | CLOCK | CLOSED
// stdin: close, leader?, participants?, server?, has?, clock? (EOF = close).
import process from "node:process";
import { ZooKeeper } from "../../src/index.ts";
import { LeaderElection, Lock, type ElectionProtocol, type LockNaming } from "../../src/recipes/index.ts";
import { emit, readyGate, reportElection, serveCommands, stamp } from "./participant-kit.ts";
import { hold } from "./wait.ts";

const [connectString, path, id, sessionArg, modeArg, holdArg] = process.argv.slice(2);
const [mode, variant] = (modeArg ?? "").split(":");
if (!connectString || !path || id === undefined || (mode !== "lock" && mode !== "election")) {
  process.stderr.write("usage: lock-participant.ts <connectString> <path> <id> <sessionMs> <lock:NAMING|election:PROTOCOL> [holdMs]\n");
  process.exit(2);
}
const sessionTimeout = Number(sessionArg || 6000);
const holdMs = Number(holdArg || 30);
const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: Math.max(sessionTimeout, 10_000) });
zk.on("state", (state) => emit(`STATE ${state} ${stamp()}`));

let election: LeaderElection | null = null;
let lock: Lock | null = null;
const gate = readyGate();
if (mode === "election") {
  election = new LeaderElection(zk, path, { id, protocol: variant as ElectionProtocol });
  reportElection(election, gate.out);
  await election.start();
} else {
  const l = new Lock(zk, path, { id, naming: variant as LockNaming });
  lock = l;
  l.on("watch", (p) => emit(`WATCH ${p} ${stamp()}`));
  void (async () => {
    for (;;) {
      try {
        await l.run(async (signal) => {
          let last = process.hrtime.bigint();
          if (!l.isHeld) return;
          emit(`HOLD ${last} ${Date.now()} ${l.token}`);
          const end = performance.now() + holdMs;
          while (!signal.aborted && performance.now() < end) {
            // isHeld is checked after the stamp (it was true at the last check, before the hold): a SIGSTOP
            // between a check and its stamp would otherwise give a stamp from after the resume.
            const at = process.hrtime.bigint();
            if (!l.isHeld) break;
            last = at;
            await hold(2);
          }
          emit(`FREE ${last} ${Date.now()}`);
        });
        await hold(Math.random() * 5);
      } catch (e) {
        emit(`ERROR ${(e as Error).message}`);
        if (zk.state === "expired" || zk.state === "closed") process.exit(3);
        await hold(100);
      }
    }
  })();
}
gate.open("READY");

let closing = false;
const close = async (): Promise<void> => {
  if (closing) return;
  closing = true;
  await (election?.close() ?? lock?.release())?.catch(() => {});
  await zk.close().catch(() => {});
  emit("CLOSED");
  process.exit(0);
};
serveCommands(async (cmd) => {
  switch (cmd) {
    case "close":
      return close();
    case "leader?":
      emit(`LEADER ${(await election?.leader())?.id || "-"}`);
      return;
    case "participants?":
      emit(`PARTICIPANTS ${((await election?.participants()) ?? []).map((p) => p.id).join(",")}`);
      return;
    case "has?":
      emit(`HAS ${election?.isLeader ?? lock?.isHeld}`);
      return;
    case "server?":
      emit(`SERVER ${zk.remoteAddress?.split(":").pop() ?? "-"}`);
      return;
    case "clock?":
      emit(`CLOCK ${stamp()}`);
      return;
    default:
      emit(`ERROR unknown command ${cmd}`);
  }
}, close);
