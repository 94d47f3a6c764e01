// A zookeeper-ts Lock or LeaderElection participant as its own OS process, on the line protocol of
// test/interop/MutexParticipant.java and kazoo_participant.py (stamps: process.hrtime.bigint()):
//   npx tsx test/support/processes/lock-participant.ts <connectString> <path> <id> <sessionMs> <MODE> [holdMs] [fencePath]
// With fencePath (lock mode), each moment of a hold also writes the token to fencePath through the lock's
// guarded transaction: FENCED <version> <token> <ns> when it committed (<ns>: a moment it was held), UNFENCED <code> when it did not.
// With fencePath in election mode, the participant leads in turns the same way: HOLD when elected, its token
// written through election.transaction() while leader, FREE, then resign() (a new candidate at the back).
//   MODE: lock:NAMING | read:NAMING | write:NAMING (a ReadWriteLock's side) | sem:NAMING:PERMITS (a Semaphore lease) | election:PROTOCOL
//   READY | HOLD <ns> <ms> <token> | FREE <ns> <ms> (the last moment isHeld was still true) | WATCH <path> <ns> <ms>
//   LOST <ns> <ms> <reason> (a held lock side or lease was lost: its "lost" event, or "not-held" when the hold loop
//   finds it no longer held)
//   ELECTED <ns> <ms> <token> | REVOKED <ns> <ms> <reason> | STATE ... | LEADER | PARTICIPANTS | SERVER | CLOCK | CLOSED
// stdin: close, leader?, participants?, server?, has?, clock? (EOF = close).
import process from "node:process";
import { ZooKeeper, isZooKeeperError, type Transaction } from "../../../src/index.ts";
import { LeaderElection, Lock, ReadWriteLock, Semaphore, type ElectionProtocol, type LockNaming, type SemaphoreLease } from "../../../src/recipes/index.ts";
import { emit, readyGate, reportElection, serveCommands, stamp } from "./participant-kit.ts";
import { hold } from "../wait.ts";

const [connectString, path, id, sessionArg, modeArg, holdArg, fencePath] = process.argv.slice(2);
const [mode, variant] = (modeArg ?? "").split(":");
if (!connectString || !path || id === undefined || !["lock", "election", "read", "write", "sem"].includes(mode)) {
  process.stderr.write("usage: lock-participant.ts <connectString> <path> <id> <sessionMs> <lock:NAMING|read:NAMING|write:NAMING|sem:NAMING:PERMITS|election:PROTOCOL> [holdMs] [fencePath]\n");
  process.exit(2);
}
const sessionTimeout = Number(sessionArg || 6000);
const holdMs = Number(holdArg || 30);
const zk = await ZooKeeper.connect(connectString, { sessionTimeout, connectTimeout: Math.max(sessionTimeout, 10_000) });
zk.on("state", (state) => emit(`STATE ${state} ${stamp()}`));

let election: LeaderElection | null = null;
let isHeld = (): boolean | undefined => undefined; // for has?
let releaseAll = async (): Promise<void> => {};
const gate = readyGate();
/** One hold of whatever this participant takes: a lock, one side of a read-write lock, a semaphore lease, or a leadership. */
interface Held {
  held(): boolean;
  token(): bigint | undefined; // the fencing token while held
  release(): Promise<void>;
  guarded?(): Transaction; // a transaction that commits only while held (Lock, LeaderElection)
}
if (mode === "election") {
  election = new LeaderElection(zk, path, { id, protocol: variant as ElectionProtocol });
  reportElection(election, gate.out);
  await election.start();
}
// Without a fence path an election participant just stands (its lines are the election's events).
if (mode !== "election" || fencePath) {
  let take: () => Promise<Held>;
  const naming = variant as LockNaming;
  if (election) {
    const e = election;
    take = async () => {
      await e.waitForLeadership();
      return { held: () => e.isLeader, token: () => e.token, release: () => e.resign(), guarded: () => e.transaction() };
    };
  } else if (mode === "sem") {
    const sem = new Semaphore(zk, path, { id, naming, permits: Number(modeArg.split(":")[2]) });
    let current: SemaphoreLease | null = null;
    isHeld = () => current?.isHeld;
    releaseAll = async () => current?.release();
    take = async () => {
      const lease = (current = await sem.acquire());
      lease.on("lost", (reason) => emit(`LOST ${stamp()} ${reason}`));
      return { held: () => lease.isHeld, token: () => 0n, release: () => lease.release() };
    };
  } else {
    const l = mode === "lock" ? new Lock(zk, path, { id, naming }) : new ReadWriteLock(zk, path, { id, naming })[mode === "read" ? "readLock" : "writeLock"];
    l.on("watch", (p) => emit(`WATCH ${p} ${stamp()}`));
    l.on("lost", (reason) => emit(`LOST ${stamp()} ${reason}`));
    isHeld = () => l.isHeld;
    releaseAll = () => l.release();
    take = async () => {
      await l.acquire();
      return { held: () => l.isHeld, token: () => l.token, release: () => l.release(), ...(l instanceof Lock ? { guarded: () => l.transaction() } : {}) };
    };
  }
  void (async () => {
    for (;;) {
      try {
        const h = await take();
        try {
          let last = process.hrtime.bigint();
          const token = h.token(); // undefined once no longer held
          if (h.held() && token !== undefined) {
            emit(`HOLD ${last} ${Date.now()} ${token}`);
            const end = performance.now() + holdMs;
            for (;;) {
              // held() is checked after the stamp (it was true at the last check, before the hold): a SIGSTOP
              // between a check and its stamp would otherwise give a stamp from after the resume. It is checked once
              // more when the time is up, so a hold that a pause outlasted ends with LOST too.
              const at = process.hrtime.bigint();
              if (!h.held()) {
                emit(`LOST ${stamp()} not-held`); // found in doubt during the hold (before any "lost" event)
                break;
              }
              last = at;
              if (performance.now() >= end) break;
              if (fencePath && h.guarded) {
                try {
                  const r = (await h.guarded().setData(fencePath, String(token)).commit()).find((x) => x.type === "setData");
                  if (r?.type === "setData") emit(`FENCED ${r.stat.version} ${token} ${at}`);
                } catch (e) {
                  emit(`UNFENCED ${isZooKeeperError(e) ? e.codeName : (e as Error).name}`);
                }
              }
              await hold(2);
            }
            emit(`FREE ${last} ${Date.now()}`);
          }
        } finally {
          await h.release();
        }
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
  await (election?.close() ?? releaseAll()).catch(() => {});
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
      emit(`HAS ${election?.isLeader ?? isHeld()}`);
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
