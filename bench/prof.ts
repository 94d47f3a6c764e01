// Profiling driver: `n` operations of one kind, for `valgrind --tool=callgrind` (instruction counts are
// stable on a loaded machine, unlike wall time) or `node --cpu-prof`. Per-op cost = the difference between
// two runs with different n, divided by the difference in n (startup cancels out).
//   ZK_CONNECT=127.0.0.1:2181 valgrind --tool=callgrind node bench/.build/js/bench/prof.js ts connect 100
// client: ts (zookeeper-ts) | raw (bench/runners/raw-client.ts); op: connect (connect + close) | get | set |
// cd (create an ephemeral-sequential node, then delete it) | watch (arm a one-shot data watch on a node of
// its own; once all are armed, all fire); a 4th argument keeps that many operations outstanding (default 1).
// PROF_SERVER=loopback puts bench/loopback.ts's in-process stand-in where the server was: the client's own
// CPU alone, the same from run to run (with a real server, batch sizes vary and so does the count per op).
// PROF_TRACE=subscriber or otel runs the same with a zookeeper-ts:request subscriber or the OpenTelemetry bridge.
// PROF_STEP=1000 (connect only) prints the CPU (user + sys, every thread) and wall time per session of each 1,000
// sessions to stderr: how long a client takes to warm up, and what it costs once warm (bench/README.md).
import { CreateMode, ZooKeeper } from "../src/index.ts";
import { type LoopLink, loopbackSocket, loopbackTransport } from "./loopback.ts";
import { RawSession, driver as raw } from "./runners/raw-client.ts";
import type { Session } from "./runners/harness.ts";

const [client = "ts", op = "connect", count = "100", depth = "1"] = process.argv.slice(2);
// PROF_TRACE=subscriber|otel: npm run bench's traced variants (bench/runners/tracing.ts), loaded only then.
const tracing = process.env.PROF_TRACE;
if (tracing === "subscriber") (await import("./runners/tracing.ts")).subscribePlain();
else if (tracing === "otel") (await import("./runners/tracing.ts")).instrumentOtel();
else if (tracing) throw new Error(`PROF_TRACE=${tracing}: subscriber or otel`);
const n = Number(count);
const every = Number(process.env.PROF_STEP ?? 0);
let mark = { cpu: process.cpuUsage(), at: performance.now() };
/** After session i (0-based): with PROF_STEP, one line per step of sessions. */
function stepped(i: number): void {
  if (!every || (i + 1) % every !== 0) return;
  const cpu = process.cpuUsage(mark.cpu);
  const at = performance.now();
  const us = (x: number): string => (x / every).toFixed(0);
  process.stderr.write(`sessions ${i + 2 - every}-${i + 1}: CPU ${us(cpu.user + cpu.system)} µs (sys ${us(cpu.system)}), wall ${us((at - mark.at) * 1000)} µs per session\n`);
  mark = { cpu: process.cpuUsage(), at: performance.now() };
}
/** connect: n sessions opened by `open` and closed, one after the other (either client). */
async function sessions(open: () => Promise<{ close(): Promise<unknown> }>): Promise<void> {
  for (let i = 0; i < n; i++) {
    await (await open()).close();
    stepped(i);
  }
}
/** Runs `one` n times with `depth` of them outstanding at once. */
async function loop(one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < n) await one(next++);
  };
  await Promise.all(Array.from({ length: Number(depth) }, lane));
}
const loopback = process.env.PROF_SERVER === "loopback";
const cs = process.env.ZK_CONNECT ?? "127.0.0.1:2181";
const data = new Uint8Array(100);
const { transport, last: lastLink } = loopbackTransport();

/** Arms n watches (`arm`), then has the server fire them all and waits for the n calls. */
async function storm(arm: (path: string, fired: () => void) => Promise<unknown>, link: () => LoopLink): Promise<void> {
  if (!loopback) throw new Error("watch: PROF_SERVER=loopback only (the real-server storm is npm run bench's)");
  let left = n;
  let done = (): void => {};
  const all = new Promise<void>((resolve) => (done = resolve));
  await loop((i) => arm(`/prof/w-${i}`, () => --left === 0 && done()));
  link().fire();
  await all;
}

if (client === "ts") {
  // trackEnsemble as the real server's runs have it: on by default, which a custom transport (the stand-in) turns off.
  const open = (): Promise<ZooKeeper> => ZooKeeper.connect(cs, { sessionTimeout: 30_000, ...(loopback ? { transport, trackEnsemble: true } : {}) });
  if (op === "connect") await sessions(open);
  else {
    const zk = await open();
    await zk.create("/prof", data).catch(() => {});
    const cd = async (): Promise<void> => zk.delete(await zk.create("/prof/n-", data, { mode: CreateMode.EPHEMERAL_SEQUENTIAL }));
    if (op === "watch") await storm((path, fired) => zk.getData(path, fired), () => lastLink()!);
    else await loop(() => (op === "get" ? zk.getData("/prof") : op === "cd" ? cd() : zk.setData("/prof", data)));
    await zk.close();
  }
} else {
  const p = (f: (d: (e: Error | null) => void) => void): Promise<void> => new Promise((res, rej) => f((e) => (e ? rej(e) : res())));
  let last: LoopLink | undefined;
  const open = (): Promise<Session> => {
    if (!loopback) return raw.connect(cs);
    const { socket, link } = loopbackSocket();
    last = link;
    return new Promise((resolve) => {
      const s: Session = new RawSession(socket as never, () => resolve(s));
    });
  };
  if (op === "connect") await sessions(open);
  else {
    const s = await open();
    await p((d) => s.ensure("/prof", data, false, d));
    const cd = (d: (e: Error | null) => void): void => s.createEphSeq("/prof/n-", data, (e, path) => (e ? d(e) : s.remove(path!, d)));
    if (op === "watch") await storm((path, fired) => p((d) => s.watchData(path, fired, d)), () => last!);
    else await loop(() => p((d) => (op === "get" ? s.get("/prof", d) : op === "cd" ? cd(d) : s.set("/prof", data, d))));
    await s.close();
  }
}
process.exit(0);
