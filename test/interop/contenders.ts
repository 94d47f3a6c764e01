// Lock and election contenders of three kinds as OS processes on one line protocol: zookeeper-ts
// (test/support/processes/lock-participant.ts), Curator (MutexParticipant.java: InterProcessMutex or
// LeaderSelector) and kazoo (kazoo_participant.py: Lock or Election). Clocks are mapped onto ours.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { LineProcess, REPO_DIR, runtimeCommand, type Runtime } from "../support/processes/line-process.ts";
import { JVM_FLAGS, compileJava, curatorClasspath } from "./java-participant.ts";

export type ContenderKind = "ts" | "java" | "python";
const here = (f: string): string => fileURLToPath(new URL(f, (import.meta as { url: string }).url));
const JAVA_SOURCE = here("./MutexParticipant.java");
const PYTHON = here("./kazoo_participant.py");
const KAZOO_RECIPES = here("./kazoo_recipes.py");
const TS = here("../support/processes/lock-participant.ts");

export interface ContenderSpec {
  kind: ContenderKind;
  connectString: string;
  path: string;
  id: string;
  sessionMs: number;
  /** A mutex, an election, a read-write lock's read or write side, or a semaphore lease (of `permits`). */
  role: "lock" | "election" | "read" | "write" | "sem";
  /** The zookeeper-ts side: "curator" | "kazoo" for a lock, read-write lock or semaphore, an ElectionProtocol for an election. */
  variant: string;
  /** The semaphore's permits (role "sem"). */
  permits?: number;
  holdMs?: number;
  /** The runtime of a zookeeper-ts contender (default node). */
  runtime?: Runtime;
}

const live = new Set<LineProcess>();

export class Contender extends LineProcess {
  readonly kind: ContenderKind;
  constructor(kind: ContenderKind, id: string, proc: ReturnType<typeof spawn>) {
    super(id, proc, live);
    this.kind = kind;
  }

  /** A HOLD/FREE line's stamp on our hrtime scale. */
  at(l: { args: string[] }): bigint {
    return BigInt(l.args[0]) - this.clockOffsetNs;
  }

  async serverPort(): Promise<number | null> {
    const [p] = await this.ask("server?", "SERVER");
    return p === "-" ? null : Number(p);
  }
}

export async function spawnContender(spec: ContenderSpec): Promise<Contender> {
  const hold = String(spec.holdMs ?? 30);
  let cmd: string;
  let args: string[];
  if (spec.kind === "java") {
    const dir = await compileJava(JAVA_SOURCE);
    cmd = "java";
    args = [...JVM_FLAGS, "-cp", [dir, ...(await curatorClasspath())].join(":"), "MutexParticipant", spec.connectString, spec.path, spec.id, String(spec.sessionMs), javaMode(spec), hold];
  } else if (spec.kind === "python") {
    cmd = "/usr/bin/python3";
    args = [PYTHON, spec.connectString, spec.path, spec.id, String(spec.sessionMs), spec.role === "sem" ? `sem:${spec.permits}` : spec.role, hold];
  } else {
    const [c, base] = runtimeCommand(spec.runtime ?? "node", TS);
    cmd = c;
    args = [...base, spec.connectString, spec.path, spec.id, String(spec.sessionMs), spec.role === "sem" ? `sem:${spec.variant}:${spec.permits}` : `${spec.role}:${spec.variant}`, hold];
  }
  const p = new Contender(spec.kind, spec.id, spawn(cmd, args, { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] }));
  try {
    await p.waitFor("READY", 60_000);
    await p.syncClock(20, 30_000); // the best of 20: a tighter error than of 5 on a loaded machine (hold-analysis.ts allows for it)
  } catch (e) {
    await p.kill("SIGKILL");
    throw e;
  }
  return p;
}

function javaMode(spec: ContenderSpec): string {
  switch (spec.role) {
    case "lock":
      return "mutex";
    case "election":
      return "selector";
    case "sem":
      return `sem:${spec.permits}`;
    default:
      return spec.role;
  }
}

export async function killAllContenders(): Promise<void> {
  await Promise.all([...live].map((p) => (p.alive ? (process.kill(p.pid!, "SIGCONT"), p.kill("SIGKILL")) : null)));
}

/** kazoo_recipes.py running `recipe` on `path` (its usage there), tracked in `running`. */
export function kazooRecipe(connectString: string, recipe: string, path: string, args: string[], running: Set<LineProcess>): LineProcess {
  return new LineProcess(`kazoo-${recipe}`, spawn("/usr/bin/python3", [KAZOO_RECIPES, connectString, recipe, path, ...args], { stdio: ["pipe", "pipe", "pipe"] }), running);
}
