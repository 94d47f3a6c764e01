// Election demo: five participants "Machine1".."Machine5", each its own OS process. The leader works
// for about 2 s and then crashes (kill -9); the next one takes over once the server expires the dead
// session. Prints a timeline with the failover latency and which participants' watches fired.
//   npm run demo                       (brings up a throwaway ZooKeeper, tickTime 500)
//   ZK_CONNECT=127.0.0.1:2181 npm run demo
//   npm run demo -- --zk-port 2181      (the throwaway server on a port of your choice; or ZK_PORT)
//   npm run demo -- --compare [--json] [--design NAME]...   the blog-post designs beside LeaderElection (compare.ts)
import { randomUUID } from "node:crypto";
import process from "node:process";
import { parseArgs } from "node:util";
import { runCompare } from "./compare.ts";
import { DESIGN_NAMES, type DesignName } from "./designs/index.ts";
import { killAllParticipants, spawnParticipant, type ParticipantLine, type ParticipantProcess } from "../../test/support/processes/participant-process.ts";
import { startStandalone, type ZkServer } from "../../test/support/servers/zk-server.ts";

const MACHINES = 5;
const WORK_MS = 2000;
const SESSION_MS = 2000; // short sessions: the server notices a crash within ~2 s
const t0 = process.hrtime.bigint();
const sec = (ns: bigint): string => `+${(Number(ns - t0) / 1e9).toFixed(3)}s`.padStart(9);
const now = (): bigint => process.hrtime.bigint();

// The timeline is printed in time order: lines come from six processes (a participant's ELECTED is stamped on its
// own clock and read from its pipe later), so each is held HOLD_NS and printed sorted with the others; nothing is
// printed while a participant is being spawned (its "joined", stamped before the spawn, is said after it).
const HOLD_NS = 150_000_000n;
const pending: { ns: bigint; text: string }[] = [];
let spawning = false;
function flush(all = false): void {
  if (spawning && !all) return;
  pending.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
  const upTo = now() - HOLD_NS;
  while (pending.length > 0 && (all || pending[0].ns <= upTo)) console.log(pending.shift()!.text);
}
const flusher = setInterval(flush, 50);
const say = (ns: bigint, who: string, what: string): void => void pending.push({ ns, text: `[${sec(ns)}] ${who.padEnd(9)} ${what}` });
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function until(done: () => boolean, ms = 20_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`no leader within ${ms / 1000} s`);
    await sleep(5);
  }
}

let server: ZkServer | undefined;
let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await killAllParticipants();
    await server?.close();
  })();
  return cleaning;
}
const { values: flags } = parseArgs({
  options: { compare: { type: "boolean", default: false }, json: { type: "boolean", default: false }, design: { type: "string", multiple: true }, "zk-port": { type: "string" } },
});
for (const sig of flags.compare ? [] : (["SIGINT", "SIGTERM"] as const)) {
  process.on(sig, () => {
    flush(true);
    console.log(`\n${sig}: stopping participants and server`);
    void cleanup().then(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  let connectString = process.env.ZK_CONNECT;
  if (!connectString) {
    // --zk-port N (or ZK_PORT): the throwaway server on that port, e.g. to watch it with zkts meanwhile.
    const portText = flags["zk-port"] ?? process.env.ZK_PORT;
    const clientPort = portText === undefined ? undefined : Number(portText);
    if (clientPort !== undefined && !(Number.isInteger(clientPort) && clientPort > 0 && clientPort < 65536)) throw new Error(`--zk-port: not a port: ${portText}`);
    server = await startStandalone({ tickTime: 500, clientPort });
    connectString = server.connectString;
    say(now(), "zookeeper", `throwaway server ${connectString} (tickTime 500)`);
  } else say(now(), "zookeeper", `using ZK_CONNECT=${connectString}`);
  const path = `/election-demo-${randomUUID().slice(0, 8)}`;
  say(now(), "demo", `election ${path}, ${MACHINES} participants, session timeout ${SESSION_MS} ms`);

  const machines: ParticipantProcess[] = [];
  const elected: { who: ParticipantProcess; at: bigint; token: string }[] = [];
  const watches: { who: string; at: bigint; path: string }[] = [];
  for (let i = 1; i <= MACHINES; i++) {
    // Stamped before the spawn: the process can do nothing (be elected, say) before it exists, so "joined"
    // never shows a later time than its own ELECTED line below it.
    const joinedAt = now();
    spawning = true;
    const m = await spawnParticipant({ connectString, path, id: `Machine${i}`, sessionTimeoutMs: SESSION_MS });
    await m.syncClock(3);
    const stamp = (l: ParticipantLine): bigint => m.localNs(l) ?? l.receivedNs;
    const handle = (l: ParticipantLine): void => {
      if (l.kind === "ELECTED") {
        elected.push({ who: m, at: stamp(l), token: l.args[2] });
        say(stamp(l), m.id, `ELECTED (fencing token ${l.args[2]})`);
      } else if (l.kind === "REVOKED") say(stamp(l), m.id, `revoked: ${l.args[2]}`);
      else if (l.kind === "WATCH") {
        watches.push({ who: m.id, at: l.receivedNs, path: l.args[0] });
        // A participant watches the candidate just before its own; nobody writes candidate data here, so that
        // watch fires when the predecessor's znode goes (its session ended). "own": its own candidate changed.
        const node = l.args[0].slice(path.length + 1);
        say(l.receivedNs, m.id, l.args[1] === "own" ? `watch fired: own candidate ${node} changed` : `watch fired: predecessor ${node} deleted`);
      }
    };
    say(joinedAt, m.id, `joined (pid ${m.pid})`);
    for (const l of m.lines) handle(l); // lines that came with READY
    m.onLine(handle);
    spawning = false;
    machines.push(m);
  }

  const failovers: { from: string; to: string; ms: number; woken: string[] }[] = [];
  for (let round = 0; round < MACHINES; round++) {
    await until(() => elected.length > round);
    const leader = elected[round].who;
    say(now(), leader.id, `working for ${WORK_MS / 1000} s...`);
    await sleep(WORK_MS);
    const killedAt = now();
    say(killedAt, leader.id, "CRASH (kill -9)");
    await leader.kill("SIGKILL");
    if (round === MACHINES - 1) break;
    await until(() => elected.length > round + 1);
    const next = elected[round + 1];
    const ms = Number(next.at - killedAt) / 1e6;
    const woken = watches.filter((w) => w.at >= killedAt).map((w) => w.who);
    watches.length = 0;
    failovers.push({ from: leader.id, to: next.who.id, ms, woken });
    say(next.at, next.who.id, `took over from ${leader.id}: failover ${(ms / 1000).toFixed(3)} s, watches fired: ${woken.join(", ") || "none"}`);
  }

  flush(true);
  console.log("\nSummary");
  for (const f of failovers) console.log(`  ${f.from} -> ${f.to}: ${(f.ms / 1000).toFixed(3)} s, woken: ${f.woken.join(", ")}`);
  const avg = failovers.reduce((a, f) => a + f.ms, 0) / Math.max(1, failovers.length);
  console.log(`  mean failover ${(avg / 1000).toFixed(3)} s (session timeout ${SESSION_MS} ms: the server must expire the dead session first)`);
  console.log(`  tokens: ${elected.map((e) => e.token).join(" < ")} (each leader's token is higher than the last)`);
}

async function compare(): Promise<void> {
  const names = (flags.design ?? DESIGN_NAMES) as DesignName[];
  const unknown = names.filter((n) => !DESIGN_NAMES.includes(n));
  if (unknown.length) throw new Error(`unknown design ${unknown.join(", ")}; the designs are ${DESIGN_NAMES.join(", ")}`);
  const result = await runCompare(names);
  result.seconds = Number(now() - t0) / 1e9;
  // One line for scripts and the test (test/integration/demo-compare.test.ts), after everything has stopped.
  if (flags.json) console.log(`COMPARE-JSON ${JSON.stringify(result)}`);
}

try {
  await (flags.compare ? compare() : main());
} catch (e) {
  flush(true);
  console.error(`demo failed: ${(e as Error).message}`);
  process.exitCode = 1;
} finally {
  clearInterval(flusher);
  flush(true);
  await cleanup();
}
