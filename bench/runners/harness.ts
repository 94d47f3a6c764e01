// Workload engine shared by every JavaScript runner (ours and the npm peers): each runner only adapts
// its library to the callback-style Session below, so every peer runs the very same loops. Callbacks,
// not promises, are the common denominator: wrapping a callback peer in promises would tax it.
import { readCpuSeconds } from "./cpu.ts";
import { parseParams, type Params } from "./params.ts";

export type Done = (err: Error | null) => void;

export interface Session {
  get(path: string, done: Done): void;
  set(path: string, data: Uint8Array, done: Done): void;
  /** Creates an ephemeral-sequential node under `prefix`; gives the created path. */
  createEphSeq(prefix: string, data: Uint8Array, done: (err: Error | null, path?: string) => void): void;
  /** Persistent (ephemeral = false) or ephemeral node; an existing node is not an error. */
  ensure(path: string, data: Uint8Array, ephemeral: boolean, done: Done): void;
  remove(path: string, done: Done): void;
  /** getData that leaves a one-shot data watch; `onChange` runs when it fires. */
  watchData(path: string, onChange: () => void, done: Done): void;
  close(): Promise<void>;
}

export interface Driver {
  peer: string;
  connect(connectString: string): Promise<Session>;
}

export interface Result {
  peer: string;
  runtime: string;
  workload: string;
  params: Params;
  ops: number;
  seconds: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuSec: number;
  cpuPer10k: number;
  extra?: Record<string, number>;
}

const now = (): number => performance.now();
const promisify = (f: (done: Done) => void): Promise<void> => new Promise((res, rej) => f((e) => (e ? rej(e) : res())));

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

class Samples {
  private buf = new Float64Array(1 << 16);
  n = 0;
  push(v: number): void {
    if (this.n === this.buf.length) {
      const b = new Float64Array(this.buf.length * 2);
      b.set(this.buf);
      this.buf = b;
    }
    this.buf[this.n++] = v;
  }
  sorted(): Float64Array {
    return this.buf.slice(0, this.n).sort();
  }
}

export interface Window {
  ops: number;
  seconds: number;
  cpuSec: number;
  lat: Samples;
}

/** A runner's Result from a measured window (`base`: who, what and with which parameters). */
export function summarize(w: Window, base: Omit<Result, "ops" | "seconds" | "opsPerSec" | "p50Ms" | "p99Ms" | "cpuSec" | "cpuPer10k">): Result {
  const s = w.lat.sorted();
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  return {
    ...base,
    ops: w.ops,
    seconds: r3(w.seconds),
    opsPerSec: Math.round(w.ops / w.seconds),
    p50Ms: r3(percentile(s, 0.5)),
    p99Ms: r3(percentile(s, 0.99)),
    cpuSec: r3(w.cpuSec),
    cpuPer10k: r3((w.cpuSec / w.ops) * 10_000),
  };
}

/**
 * Runs `op` back to back (each after the last has finished, as a blocking caller would): `warmupMs` unmeasured, then a
 * measured window of `measureMs`; latency is per call.
 */
export async function serialLoop(warmupMs: number, measureMs: number, op: () => Promise<void>): Promise<Window> {
  const warmEnd = now() + warmupMs;
  while (now() < warmEnd) await op();
  const lat = new Samples();
  const cpu0 = readCpuSeconds();
  const t0 = now();
  let ops = 0;
  for (let s = t0; s < t0 + measureMs; s = now(), ops++) {
    await op();
    lat.push(now() - s);
  }
  return { ops, seconds: (now() - t0) / 1000, cpuSec: readCpuSeconds() - cpu0, lat };
}

/**
 * Keeps `outstanding` operations in flight: `warmupMs` unmeasured, then a measured window of `measureMs`.
 * Completions inside the window count; latency is per operation, from issue to callback.
 */
function closedLoop(outstanding: number, warmupMs: number, measureMs: number, issue: (lane: number, done: Done) => void): Promise<Window> {
  return new Promise((resolve, reject) => {
    const lat = new Samples();
    const start = new Float64Array(outstanding);
    let phase: "warm" | "measure" | "drain" = "warm";
    let t0 = 0;
    let cpu0 = 0;
    let ops = 0;
    let inFlight = 0;
    let result: Window | undefined;
    const tWarmEnd = now() + warmupMs;
    let failed = false;
    const fire = (lane: number): void => {
      inFlight++;
      start[lane] = now();
      issue(lane, (err) => {
        inFlight--;
        if (failed) return;
        if (err) {
          failed = true;
          reject(err);
          return;
        }
        const t = now();
        if (phase === "warm" && t >= tWarmEnd) {
          phase = "measure";
          t0 = t;
          cpu0 = readCpuSeconds();
        } else if (phase === "measure") {
          if (t - t0 >= measureMs) {
            phase = "drain";
            result = { ops, seconds: (t - t0) / 1000, cpuSec: readCpuSeconds() - cpu0, lat };
          } else {
            ops++;
            lat.push(t - start[lane]);
          }
        }
        if (phase !== "drain") fire(lane);
        else if (inFlight === 0) resolve(result!);
      });
    };
    for (let i = 0; i < outstanding; i++) fire(i);
  });
}

/** Issues `count` operations with at most `outstanding` in flight (setup work, unmeasured). */
function pipelined(count: number, outstanding: number, issue: (i: number, done: Done) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let next = 0;
    let finished = 0;
    let failed = false;
    const fire = (): void => {
      const i = next++;
      issue(i, (err) => {
        if (failed) return;
        if (err) {
          failed = true;
          reject(err);
          return;
        }
        if (++finished === count) resolve();
        else if (next < count) fire();
      });
    };
    if (count === 0) resolve();
    for (let k = 0; k < Math.min(outstanding, count); k++) fire();
  });
}

function payload(size: number): Uint8Array {
  const b = new Uint8Array(size);
  for (let i = 0; i < size; i++) b[i] = 97 + (i % 26);
  return b;
}

async function ensureRoot(s: Session, root: string): Promise<void> {
  const parts = root.split("/").filter(Boolean);
  let p = "";
  for (const part of parts) {
    p += "/" + part;
    await promisify((d) => s.ensure(p, new Uint8Array(0), false, d));
  }
}

/** One line from stdin (the orchestrator's "go" for the watch storm). */
function readLine(): Promise<string> {
  return new Promise((resolve) => {
    let buf = "";
    const onData = (chunk: Buffer | string): void => {
      buf += chunk.toString();
      const i = buf.indexOf("\n");
      if (i >= 0) {
        process.stdin.off("data", onData);
        process.stdin.pause();
        resolve(buf.slice(0, i).trim());
      }
    };
    process.stdin.on("data", onData);
    process.stdin.resume();
  });
}

export async function runWorkload(driver: Driver, connectString: string, workload: string, params: Params, runtime: string): Promise<Result> {
  const warm = params.warmupMs ?? 1000;
  const ms = params.ms ?? 3000;
  const root = String(params.root ?? `/bench/${driver.peer}-${process.pid}`);
  const base = { peer: driver.peer, runtime, workload, params };
  const s = await driver.connect(connectString);
  try {
    await ensureRoot(s, root);
    switch (workload) {
      case "get":
      case "set": {
        const path = `${root}/node`;
        const data = payload(params.size ?? 100);
        await promisify((d) => s.ensure(path, data, false, d));
        const w =
          workload === "get"
            ? await closedLoop(params.outstanding ?? 1, warm, ms, (_l, d) => s.get(path, d))
            : await closedLoop(params.outstanding ?? 100, warm, ms, (_l, d) => s.set(path, data, d));
        return summarize(w, base);
      }
      case "createDelete": {
        const prefix = `${root}/e-`;
        const data = payload(params.size ?? 100);
        const w = await closedLoop(params.outstanding ?? 100, warm, ms, (_l, d) =>
          s.createEphSeq(prefix, data, (err, p) => (err ? d(err) : s.remove(p!, d))),
        );
        return summarize(w, base);
      }
      case "connect": {
        // Sequential sessions: connect, then close (the server's closeSession reply included).
        const w = await closedLoop(1, warm, ms, (_l, d) => {
          driver.connect(connectString).then(
            (x) => x.close().then(() => d(null), d),
            (e: Error) => d(e),
          );
        });
        return summarize(w, base);
      }
      case "watch":
        return await watchStorm(s, root, params, base);
      case "watchLatency": {
        const w = await watchLatency(driver, connectString, s, root, warm, ms);
        const r = summarize(w, base);
        r.extra = { replyToWatchP50Ms: Math.round(percentile(w.replyToWatch.sorted(), 0.5) * 1000) / 1000 };
        return r;
      }
      default:
        throw new Error(`unknown workload ${workload}`);
    }
  } finally {
    await s.close();
  }
}

/**
 * One cycle at a time: session `w` sets a one-shot data watch, then session `s` (the setter) changes the
 * node. p50/p99 = from issuing setData to the watcher call on `w`. The server queues the notification
 * before the reply, so "setData's reply → watcher call" is about 0 and often negative (both sockets are
 * read by this one process in either order): its median is kept as extra.replyToWatchP50Ms.
 * ops/s = cycles per second; CPU covers both sessions.
 */
async function watchLatency(driver: Driver, connectString: string, s: Session, root: string, warmupMs: number, measureMs: number): Promise<Window & { replyToWatch: Samples }> {
  const w = await driver.connect(connectString);
  const path = `${root}/wl`;
  const data = payload(100);
  try {
    await promisify((d) => s.ensure(path, data, false, d));
    const replyToWatch = new Samples();
    let measuring = false;
    const cycle = (done: (err: Error | null, lat?: number) => void): void => {
      let tSet = NaN;
      let tReply = NaN;
      let tWatch = NaN;
      const fin = (): void => {
        if (Number.isNaN(tReply) || Number.isNaN(tWatch)) return;
        if (measuring) replyToWatch.push(tWatch - tReply);
        done(null, tWatch - tSet);
      };
      w.watchData(path, () => ((tWatch = now()), fin()), (err) => {
        if (err) return done(err);
        tSet = now();
        s.set(path, data, (e) => (e ? done(e) : ((tReply = now()), fin())));
      });
    };
    const lat = new Samples();
    const tWarm = now() + warmupMs;
    while (now() < tWarm) await new Promise<number | undefined>((res, rej) => cycle((e, l) => (e ? rej(e) : res(l))));
    const t0 = now();
    const cpu0 = readCpuSeconds();
    let ops = 0;
    measuring = true;
    while (now() - t0 < measureMs) {
      lat.push(await new Promise<number>((res, rej) => cycle((e, l) => (e ? rej(e) : res(l!)))));
      ops++;
    }
    return { ops, seconds: (now() - t0) / 1000, cpuSec: readCpuSeconds() - cpu0, lat, replyToWatch };
  } finally {
    await w.close();
  }
}

/**
 * 10,000 one-shot data watches; the orchestrator then changes every node in one multi. Measured: from
 * its "go" until the last notification; latency of each notification is counted from "go" as well.
 */
async function watchStorm(s: Session, root: string, params: Params, base: Omit<Result, "ops" | "seconds" | "opsPerSec" | "p50Ms" | "p99Ms" | "cpuSec" | "cpuPer10k">): Promise<Result> {
  const count = params.count ?? 10_000;
  const dir = `${root}/w`;
  await promisify((d) => s.ensure(dir, new Uint8Array(0), false, d));
  const one = new Uint8Array([48]);
  // Ephemeral nodes: nothing is left behind on a shared server.
  await pipelined(count, 500, (i, d) => s.ensure(`${dir}/${i}`, one, true, d));
  const lat = new Samples();
  let t0 = 0;
  let cpu0 = 0;
  let seen = 0;
  let finish: (w: Window) => void = () => {};
  const all = new Promise<Window>((r) => (finish = r));
  const onChange = (): void => {
    const t = now();
    lat.push(t - t0);
    if (++seen === count) finish({ ops: count, seconds: (t - t0) / 1000, cpuSec: readCpuSeconds() - cpu0, lat });
  };
  await pipelined(count, 500, (i, d) => s.watchData(`${dir}/${i}`, onChange, d));
  process.stdout.write(JSON.stringify({ armed: dir, count }) + "\n");
  await readLine();
  t0 = now();
  cpu0 = readCpuSeconds();
  const w = await all;
  return summarize(w, base);
}

export async function main(driver: Driver, runtime: string): Promise<void> {
  const [connectString, workload, ...rest] = process.argv.slice(2);
  if (!connectString || !workload) {
    process.stderr.write("usage: <runner> <connectString> <workload> [key=value ...]\n");
    process.exit(2);
  }
  try {
    const r = await runWorkload(driver, connectString, workload, parseParams(rest), runtime);
    process.stdout.write(JSON.stringify(r) + "\n");
    process.exit(0);
  } catch (e) {
    process.stderr.write(`${driver.peer} ${workload} failed: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  }
}
