// What participant.ts and chaos-participant.ts share: line output, the READY gate, the election's
// events as lines, the common stdin commands, and the command loop (stdin EOF = close).
import process from "node:process";
import { writeSync } from "node:fs";
import type { ZooKeeper } from "../../../src/index.ts";
import type { LeaderElection } from "../../../src/recipes/index.ts";

// writeSync: the line is out before the next statement, so a kill -9 right after loses nothing.
export const emit = (line: string): void => void writeSync(1, `${line}\n`);
export const stamp = (): string => `${process.hrtime.bigint()} ${Date.now()}`;

/** Lines given to out() before open() wait, so READY comes first even when the election is decided early. */
export function readyGate(): { out(line: string): void; open(readyLine: string): void } {
  const early: string[] = [];
  let ready = false;
  return {
    out: (line) => (ready ? emit(line) : void early.push(line)),
    open(readyLine) {
      ready = true;
      emit(readyLine);
      for (const line of early.splice(0)) emit(line);
    },
  };
}

/** ELECTED, REVOKED, WATCH and ERROR lines from the election's events. */
export function reportElection(election: LeaderElection, out: (line: string) => void): void {
  election.on("elected", () => out(`ELECTED ${stamp()} ${election.token ?? "-"}`));
  election.on("revoked", (reason) => out(`REVOKED ${stamp()} ${reason}`));
  // "own": the leader's existence watch on its own znode (it fires when the znode goes from outside, and may
  // reach an expiring session before the server drops its link): the owner, not a successor woken.
  election.on("watch", (p) => out(p === election.candidatePath ? `WATCH ${p} own` : `WATCH ${p}`));
  election.on("error", (e) => out(`ERROR ${e.message}`));
}

/** Leaves the election, closes the session, prints CLOSED and exits 0 (once). */
export function closer(election: LeaderElection, zk: ZooKeeper): () => Promise<void> {
  let closing = false;
  return async () => {
    if (closing) return;
    closing = true;
    await election.close().catch((e: Error) => emit(`ERROR close ${e.message}`));
    await zk.close().catch(() => {});
    emit("CLOSED");
    process.exit(0);
  };
}

/** Answers resign, close, leader?, has?, clock?; false for any other command. */
export async function answerCommon(cmd: string, election: LeaderElection, close: () => Promise<void>): Promise<boolean> {
  switch (cmd) {
    case "resign":
      await election.resign();
      return true;
    case "close":
      await close();
      return true;
    case "leader?":
      emit(`LEADER ${(await election.leader())?.id || "-"}`);
      return true;
    case "has?":
      emit(`HAS ${election.isLeader}`);
      return true;
    case "clock?":
      emit(`CLOCK ${stamp()}`);
      return true;
    default:
      return false;
  }
}

/** Runs stdin commands one at a time, in order; at EOF closes (never outlive the test process). */
export function serveCommands(answer: (cmd: string) => Promise<void>, close: () => Promise<void>): void {
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
}
