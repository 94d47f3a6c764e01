// Launches test/support/processes/participant.ts as its own OS process (under Node, Bun or Deno) and turns its
// stdout lines into an event queue: waitFor(kind), send(cmd), ask(cmd), kill(signal) (see line-process.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { LineProcess, REPO_DIR, runtimeCommand, type LineEvent, type Runtime } from "./line-process.ts";

const SCRIPT = fileURLToPath(new URL("./participant.ts", (import.meta as { url: string }).url));

export type { Runtime };
/** kind: READY, ELECTED, REVOKED, WATCH, STATE, LEADER, PARTICIPANTS, PATH, HAS, CLOCK, CLOSED, ERROR */
export type ParticipantLine = LineEvent;

export interface ParticipantSpec {
  connectString: string;
  path: string;
  id: string;
  sessionTimeoutMs?: number;
  runtime?: Runtime;
}

const running = new Set<LineProcess>();

/** Spawns a participant and waits for READY. */
export async function spawnParticipant(spec: ParticipantSpec): Promise<ParticipantProcess> {
  const [cmd, base] = runtimeCommand(spec.runtime ?? "node", SCRIPT);
  const args = [...base, spec.connectString, spec.path, spec.id];
  if (spec.sessionTimeoutMs !== undefined) args.push(String(spec.sessionTimeoutMs));
  const p = new ParticipantProcess(spec.id, spawn(cmd, args, { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] }));
  try {
    await p.waitFor("READY", 30_000);
  } catch (e) {
    await p.kill("SIGKILL");
    throw e;
  }
  return p;
}

/** SIGKILLs every participant still running (afterAll hooks, Ctrl-C handlers). */
export async function killAllParticipants(): Promise<void> {
  await Promise.all([...running].map((p) => p.kill("SIGKILL")));
}

/** A participant process, counted by killAllParticipants() while it runs. */
export class ParticipantProcess extends LineProcess {
  constructor(id: string, proc: ChildProcess) {
    super(id, proc, running);
  }
}
