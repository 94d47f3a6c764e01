// Starts test/support/chaos/chaos-participant.ts as its own OS process (Node, Bun or Deno), reusing the
// line queue of participant-process.ts, and maps its stamps onto this process's hrtime clock.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ParticipantProcess, type ParticipantLine, type Runtime } from "../processes/participant-process.ts";
import { REPO_DIR, runtimeCommand } from "../processes/line-process.ts";
import { RUNTIME } from "../processes/cli-run.ts";

const SCRIPT = fileURLToPath(new URL("./chaos-participant.ts", (import.meta as { url: string }).url));

export interface ChaosSpec {
  connectString: string;
  path: string;
  id: string;
  sessionTimeoutMs: number;
  runtime: Runtime;
}

export interface ChaosParticipant {
  readonly id: string;
  readonly runtime: Runtime;
  readonly p: ParticipantProcess;
  readonly negotiatedMs: number;
}

/** Spawns a participant, waits for READY and measures its clock offset. */
export async function spawnChaos(spec: ChaosSpec): Promise<ChaosParticipant> {
  const [cmd, base] = runtimeCommand(spec.runtime, SCRIPT);
  const child = spawn(cmd, [...base, spec.connectString, spec.path, spec.id, String(spec.sessionTimeoutMs)], {
    cwd: REPO_DIR,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const p = new ParticipantProcess(spec.id, child);
  try {
    const ready = await p.waitFor("READY", 30_000);
    // Node's hrtime is the system's CLOCK_MONOTONIC, like ours when we run on Node: the offset is 0, exactly;
    // measuring it would add up to half a round trip of error (milliseconds on a loaded machine).
    if (spec.runtime !== "node" || RUNTIME !== "node") await p.syncClock(3);
    return { id: spec.id, runtime: spec.runtime, p, negotiatedMs: Number(ready.args[0]) };
  } catch (e) {
    await p.kill("SIGKILL");
    throw e;
  }
}

/** A line's participant stamp on our hrtime scale (ELECTED, REVOKED, EXPIRED, WORK, CLOCK), else null. */
export function localNs(p: ParticipantProcess, l: ParticipantLine): bigint | null {
  if (l.kind === "WORK" || l.kind === "EXPIRED") return BigInt(l.args[0]) - p.clockOffsetNs;
  return p.localNs(l);
}
