// Runs a range of seeds on several child processes (default: one per core). The range is handed out
// in chunks in seed order, so a busy worker takes fewer; on a failure no chunk above it is handed out
// and the lowest failing seed of the range is the one reported, whatever the timing: the outcome is
// the same as one process running the seeds in order (each seed is deterministic on its own).
import { fork, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";

export interface ChunkRequest {
  id: number;
  start: number;
  count: number;
  mutation: string;
}

export interface ChunkReply {
  id: number;
  done: number;
  steps: number;
  known: Record<string, number>;
  failure: { seed: number; violations: string[] } | null;
  cpuMs: number;
}

export interface PoolOptions {
  start: number;
  count: number;
  mutation?: string;
  workers?: number;
  chunk?: number;
  /** Called after every chunk with the seeds done so far. */
  progress?: (done: number) => void;
}

export interface PoolResult {
  /** Seeds run (all of the range, or up to the lowest failure). */
  seeds: number;
  steps: number;
  known: Record<string, number>;
  failure: { seed: number; violations: string[] } | null;
  seconds: number;
  cpuSeconds: number;
  workers: number;
}

const worker = fileURLToPath(new URL("./pool-worker.ts", import.meta.url));

export function defaultWorkers(): number {
  return Number(process.env.SIM_WORKERS ?? 0) || Math.max(1, Math.min(availableParallelism(), 8));
}

export async function runPool(o: PoolOptions): Promise<PoolResult> {
  const t0 = performance.now();
  const mutation = o.mutation ?? "";
  const n = Math.max(1, Math.min(o.workers ?? defaultWorkers(), Math.ceil(o.count / 10)));
  const chunk = o.chunk ?? Math.max(1, Math.min(50, Math.ceil(o.count / (n * 8))));
  const end = o.start + o.count;
  let next = o.start;
  let id = 0;
  let done = 0;
  let steps = 0;
  let cpuMs = 0;
  const known: Record<string, number> = {};
  let failure: PoolResult["failure"] = null;
  const children: ChildProcess[] = [];
  try {
    await Promise.all(
      Array.from({ length: n }, () => {
        const child = fork(worker, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
        children.push(child);
        return new Promise<void>((resolve, reject) => {
          let told = false;
          const give = (): void => {
            // Nothing above a known failure is worth running.
            const limit = failure ? Math.min(end, failure.seed) : end;
            if (next >= limit) {
              told = true;
              child.send("exit");
              return resolve();
            }
            const count = Math.min(chunk, limit - next);
            child.send({ id: id++, start: next, count, mutation } satisfies ChunkRequest);
            next += count;
          };
          child.on("message", (r: ChunkReply) => {
            done += r.done;
            steps += r.steps;
            cpuMs += r.cpuMs;
            for (const [k, v] of Object.entries(r.known)) known[k] = (known[k] ?? 0) + v;
            if (r.failure && (!failure || r.failure.seed < failure.seed)) failure = r.failure;
            o.progress?.(done);
            give();
          });
          child.on("error", reject);
          child.on("exit", (code, signal) => {
            if (!told) reject(new Error(`sim worker exited early (${signal ?? `code ${code}`})`));
          });
          give();
        });
      }),
    );
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null && c.connected) c.kill();
  }
  // With a failure, the seeds counted are those up to it (workers may have run some above it in
  // chunks handed out before the failure was known; they do not count).
  const f = failure as PoolResult["failure"];
  return {
    seeds: f ? f.seed - o.start + 1 : done,
    steps,
    known,
    failure: f,
    seconds: (performance.now() - t0) / 1000,
    cpuSeconds: cpuMs / 1000,
    workers: n,
  };
}
