// Fault runs of the Semaphore (permits 2) and the ReadWriteLock with Curator (InterProcessSemaphoreV2,
// InterProcessReadWriteLock) and kazoo (Semaphore, WriteLock) processes on the same paths as zookeeper-ts ones (on
// Node, Bun and Deno), on a server of this file's own (tickTime 500) so that it can be killed. In turn: a holder is
// killed -9; a zookeeper-ts holder is SIGSTOPped past its session, then SIGCONTed (it must report its lease or lock
// lost, not keep it); the link of a zookeeper-ts holder (through test/support/fakes/fault-proxy.ts) is cut (it reconnects
// at once), then blackholed past its session; the server is killed -9 and restarted. Victims that cannot go on are
// replaced. The verdict comes from each holder's own log (HOLD/FREE, see contenders.ts), re-checked against the
// server: a sampler reads the lease or lock children all along, and the holds a log claims across a read are never
// more than that read shows granted. Every contender is served again after the last fault. Prints a timeline.
// kazoo 2.8's ReadLock is left out (kazoo #650: it deadlocks with a later writer; see shared-holds-interop.test.ts).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, ZooKeeper, isZooKeeperError } from "../../src/index.ts";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { hold, until } from "../support/wait.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import type { LineEvent, Runtime } from "../support/processes/line-process.ts";
import { killAllContenders, spawnContender, type Contender, type ContenderKind } from "./contenders.ts";
import { maxConcurrent, overlapping, type HeldInterval } from "./hold-analysis.ts";

const SESSION_MS = 3000;
const PERMITS = 2;
const HOLD_MS = 100; // long enough that a holder picked for a fault is mostly still in its hold when it strikes
const tag = randomUUID().slice(0, 8);
const RUNTIMES: readonly Runtime[] = ["node", "bun", "deno"];

type Role = "read" | "write" | "sem";
type Naming = "curator" | "kazoo";
interface Hold extends HeldInterval {
  who: Contender;
  role: Role;
  freeMs: number | null; // its FREE line's wall-clock stamp (when the holder wrote it)
}
/** One read of the children by the sampler: [sent, answered] on our clock, and what it showed granted. */
interface Sample {
  from: bigint;
  to: bigint;
  leases: number; // semaphore: min(permits, lease znodes)
  writers: number; // read-write lock: 1 when the lowest znode is a writer's
  readers: number; // read-write lock: readers' znodes with no writer's below them
}
interface Member {
  kind: ContenderKind;
  role: Role;
  viaProxy?: boolean;
}

let server: ZkServer;
let proxy: FaultProxy;
let admin: ZooKeeper;

/** The children of `dir`, none when it does not exist (yet); any other error (server down, link lost) throws. */
async function children(dir: string): Promise<string[]> {
  try {
    return await admin.getChildren(dir);
  } catch (e) {
    if (isZooKeeperError(e) && e.code === ErrorCode.NONODE) return [];
    throw e;
  }
}

/** What the server shows granted under `path` for this recipe and layout. */
async function granted(path: string, role: "sem" | "rw", naming: Naming): Promise<Omit<Sample, "from" | "to">> {
  if (role === "sem") {
    const dir = naming === "curator" ? `${path}/leases` : path;
    const n = (await children(dir)).length;
    return { leases: Math.min(PERMITS, n), writers: 0, readers: 0 };
  }
  const all = await children(path);
  const write = naming === "curator" ? "__WRIT__" : "__lock__";
  const read = naming === "curator" ? "__READ__" : "__rlock__";
  const nodes = all
    .filter((c) => c.includes(write) || c.includes(read))
    .map((c) => ({ writer: c.includes(write), seq: Number(c.slice(-10)) }))
    .sort((a, b) => a.seq - b.seq);
  const firstWriter = nodes.findIndex((n) => n.writer);
  return { leases: 0, writers: firstWriter === 0 ? 1 : 0, readers: (firstWriter < 0 ? nodes : nodes.slice(0, firstWriter)).length };
}

async function faultRun(naming: Naming, recipe: "sem" | "rw", members: Member[]): Promise<void> {
  const path = `/faults-${recipe}-${naming}-${tag}`;
  const t0 = process.hrtime.bigint();
  const ms = (ns: bigint): string => `${(Number(ns - t0) / 1e6).toFixed(0).padStart(6)} ms`;
  const timeline: Array<[bigint, string]> = [];
  const note = (at: bigint, what: string): void => void timeline.push([at, `${ms(at)}  ${what}`]);
  const holds: Hold[] = [];
  const open = new Map<Contender, Hold>();
  const live: Contender[] = [];
  const everyone: Contender[] = [];
  const via = new Map<Contender, Member>();
  const victims = new Set<Contender>();
  let serial = 0;
  let tsCount = 0;
  let closing = false;
  const replacing = new Set<Promise<unknown>>(); // fresh contenders on their way in

  const add = async (m: Member): Promise<Contender> => {
    const runtime = m.kind === "ts" ? RUNTIMES[tsCount++ % RUNTIMES.length] : undefined;
    const id = `${m.kind === "ts" ? runtime : m.kind === "java" ? "curator" : "kazoo"}-${m.role}-${serial++}${m.viaProxy ? "-proxied" : ""}`;
    const c = await spawnContender({
      kind: m.kind, connectString: m.viaProxy ? proxy.connectString : server.connectString, path, id, sessionMs: SESSION_MS,
      role: m.role, variant: naming, permits: PERMITS, runtime, holdMs: HOLD_MS,
    });
    const take = (l: LineEvent): void => {
      if (l.kind === "HOLD") {
        const h: Hold = { who: c, role: m.role, start: c.at(l), end: null, token: 0n, freeMs: null };
        holds.push(h);
        open.set(c, h);
      } else if (l.kind === "FREE") {
        const h = open.get(c);
        if (h) (h.end = c.at(l)), (h.freeMs = Number(l.args[1]));
        open.delete(c);
      } else if (l.kind === "LOST") note(l.receivedNs, `${c.id} says LOST (${l.args[2]})`);
    };
    for (const l of c.lines) take(l);
    c.onLine(take);
    void c.exited.then((code) => {
      const at = process.hrtime.bigint();
      note(at, `${c.id} exited (${code})`);
      // Not a victim: its session ended under a fault (the participant exits then); a fresh one takes its place.
      if (closing || victims.has(c)) return;
      const job: Promise<unknown> = retire(c, at, false).then(() => add(m)).catch((e: Error) => note(process.hrtime.bigint(), `replacing ${c.id} failed: ${e.message}`)).finally(() => replacing.delete(job));
      replacing.add(job);
    });
    live.push(c);
    everyone.push(c);
    via.set(c, m);
    note(process.hrtime.bigint(), `${c.id} joined`);
    return c;
  };
  const served = (c: Contender, after = 0n): number => holds.filter((h) => h.who === c && h.end !== null && h.start > after).length;
  const progress = async (what: string, after: bigint, n = 2, timeoutMs = 60_000): Promise<void> => {
    await until(`${what}: every live contender served ${n} times`, () => replacing.size === 0 && live.every((c) => served(c, after) >= n), timeoutMs, 20);
  };
  const nextHoldAfter = (at: bigint, not?: Contender): string => {
    const h = holds.filter((x) => x.start > at && x.who !== not).sort((a, b) => (a.start < b.start ? -1 : 1))[0];
    return h ? `next hold by ${h.who.id} after ${(Number(h.start - at) / 1e6).toFixed(0)} ms` : "no hold since";
  };
  const holder = async (want: (c: Contender) => boolean, what: string): Promise<Contender> => {
    const find = (): Contender | undefined => [...open.keys()].find((c) => c.alive && want(c));
    await until(what, () => find() !== undefined, 30_000, 1);
    return find()!;
  };
  /**
   * The hold a SIGSTOPped `c` was in when stopped (at `at`, `atMs` on the wall clock), once c has told how it ended:
   * null when its FREE was written before the stop (it had just let go). One it was in must end with LOST.
   */
  const heldAt = async (c: Contender, at: bigint, atMs: number): Promise<Hold | null> => {
    const h = holds.filter((x) => x.who === c && x.start <= at).at(-1);
    if (!h) return null;
    await Promise.race([until(`${c.id} ends its hold`, () => h.end !== null, 30_000, 5), c.exited]);
    if (h.freeMs !== null && h.freeMs < atMs + SESSION_MS / 2) return null; // written before the stop (the pause is longer)
    if (h.end !== null) await c.waitFor((l) => l.kind === "LOST" && l.receivedNs > at, 15_000);
    return h;
  };
  /** Takes c out of the run; `killed`: its hold ends at `at` at the latest (else an unclosed hold stays open: an overlap). */
  const retire = async (c: Contender, at: bigint, killed: boolean): Promise<void> => {
    victims.add(c);
    if (live.includes(c)) live.splice(live.indexOf(c), 1);
    const h = open.get(c);
    if (killed && h && h.end === null) h.end = at;
    if (killed) open.delete(c);
  };

  // The sampler: reads the children all along (a read while the server is down fails and is skipped).
  const samples: Sample[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const from = process.hrtime.bigint();
      try {
        if (admin.state === "expired" || admin.state === "closed") admin = await ZooKeeper.connect(server.connectString, { sessionTimeout: 30_000 }); // a restart slower than its session
        const g = await granted(path, recipe, naming);
        samples.push({ from, to: process.hrtime.bigint(), ...g });
      } catch {
        // server down or link lost: no sample
      }
      await hold(15);
    }
  })();

  let closingAt = 0n;
  try {
    await Promise.all(members.map((m) => add(m)));
    let mark = process.hrtime.bigint();
    await progress("start", 0n);

    // 1. kill -9 of a holder (a foreign one when one holds).
    {
      const victim = await holder((c) => c.kind !== "ts", "a Curator or kazoo holder");
      const at = process.hrtime.bigint();
      await retire(victim, at, true);
      await victim.kill("SIGKILL");
      note(at, `FAULT kill -9 ${victim.id} while holding`);
      await progress("after the kill", at, 1, SESSION_MS + 30_000);
      note(process.hrtime.bigint(), `every survivor served again; ${nextHoldAfter(at, victim)}`);
      await add(via.get(victim)!);
      mark = process.hrtime.bigint();
    }
    // 2. SIGSTOP of a zookeeper-ts holder past its session, then SIGCONT: it must say its hold is lost.
    {
      await progress("before the pause", mark, 1);
      const victim = await holder((c) => c.kind === "ts" && !via.get(c)!.viaProxy, "a zookeeper-ts holder");
      const at = process.hrtime.bigint();
      const atMs = Date.now();
      process.kill(victim.pid!, "SIGSTOP");
      note(at, `FAULT SIGSTOP ${victim.id} while holding`);
      // The pause past the session is the fault: its length is the property (time, not a fact to wait for).
      await hold(SESSION_MS + 1500);
      const others = holds.filter((h) => h.who !== victim && h.start > at).length;
      const cont = process.hrtime.bigint();
      process.kill(victim.pid!, "SIGCONT");
      note(cont, `SIGCONT ${victim.id} (paused ${(Number(cont - at) / 1e6).toFixed(0)} ms; ${others} holds by others meanwhile, ${nextHoldAfter(at, victim)})`);
      victims.add(victim);
      const its = await heldAt(victim, at, atMs);
      await Promise.race([victim.exited, hold(15_000)]); // its session expired: it exits (3)
      if (victim.alive) await victim.kill("SIGKILL");
      await victim.drained;
      const after = victim.lines.filter((l) => l.kind === "HOLD" && l.receivedNs > cont);
      assert.deepEqual(after.map((l) => l.line), [], `${victim.id} took no hold in its dead session`);
      if (its) {
        assert.ok(its.end !== null && its.end <= at + victim.clockErrorNs + 1_000_000n, `${victim.id}'s hold ended by the SIGSTOP (${its.end} vs ${at})`);
        const lost = victim.lines.find((l) => l.kind === "LOST" && l.receivedNs > cont)!;
        note(lost.receivedNs, `${victim.id} found its hold lost ${(Number(lost.receivedNs - cont) / 1e6).toFixed(0)} ms after SIGCONT; its last moment held was ${(Number(at - its.end) / 1e6).toFixed(1)} ms before the SIGSTOP`);
      } else note(cont, `${victim.id} had let go just before the SIGSTOP`);
      await retire(victim, at, false);
      await add(via.get(victim)!);
      mark = process.hrtime.bigint();
    }
    // 3. A zookeeper-ts holder's link cut (FIN both ways): it reconnects at once, its session lives on.
    {
      await progress("before the cut", mark, 1);
      const victim = await holder((c) => via.get(c)!.viaProxy === true, "the proxied zookeeper-ts contender holding");
      const at = process.hrtime.bigint();
      proxy.cut();
      note(at, `FAULT link cut under ${victim.id} while holding`);
      // It may finish that hold before it notices the cut: whether it says LOST depends on the race, not asserted.
      await until(`${victim.id} ends its hold`, () => holds.filter((h) => h.who === victim).at(-1)!.end !== null, 15_000, 5);
      const lost = victim.lines.find((l) => l.kind === "LOST" && l.receivedNs > at);
      note(lost?.receivedNs ?? at, lost ? `${victim.id}: LOST (${lost.args[2]}) ${(Number(lost.receivedNs - at) / 1e6).toFixed(0)} ms after the cut` : `${victim.id} finished its hold before noticing the cut`);
      await until(`${victim.id} served again after the cut`, () => served(victim, at) >= 1, 30_000, 20);
      note(process.hrtime.bigint(), `${victim.id} served again in the same session; ${nextHoldAfter(at)}`);
      mark = process.hrtime.bigint();
    }
    // 4. The same link blackholed past the session, then healed: the holder must give up, others go on.
    {
      await progress("before the blackhole", mark, 1);
      const victim = await holder((c) => via.get(c)!.viaProxy === true, "the proxied zookeeper-ts contender holding");
      const at = process.hrtime.bigint();
      victims.add(victim);
      proxy.blackhole(true);
      note(at, `FAULT link blackholed under ${victim.id} while holding`);
      // Its hold (HOLD_MS) usually ends before the silence makes the session doubtful; a LOST is noted when it comes.
      await until(`${victim.id} ends its hold`, () => holds.filter((h) => h.who === victim).at(-1)!.end !== null, SESSION_MS + 10_000, 5);
      // Dark past the session and two ticks (the server's expiry granularity): the length is the property.
      await hold(SESSION_MS + 1000);
      const heal = process.hrtime.bigint();
      proxy.blackhole(false);
      note(heal, `link healed after ${(Number(heal - at) / 1e6).toFixed(0)} ms (${nextHoldAfter(at, victim)})`);
      assert.deepEqual(victim.lines.filter((l) => l.kind === "HOLD" && l.receivedNs > at && l.receivedNs < heal).map((l) => l.line), [], `${victim.id} took no hold in the dark`);
      await Promise.race([victim.exited, hold(15_000)]); // its session expired meanwhile: it exits (3)
      if (victim.alive) await victim.kill("SIGKILL");
      await victim.drained;
      await retire(victim, at, false);
      await add(via.get(victim)!);
      mark = process.hrtime.bigint();
    }
    // 5. The server killed -9 and restarted (sessions live on: the restart is quicker than their timeout).
    {
      await progress("before the server kill", mark, 1);
      const at = process.hrtime.bigint();
      const holding = [...open.keys()].map((c) => c.id);
      await server.kill("SIGKILL");
      note(at, `FAULT server kill -9 (holding: ${holding.join(", ") || "none"})`);
      await server.start();
      const up = process.hrtime.bigint();
      note(up, `server restarted after ${(Number(up - at) / 1e6).toFixed(0)} ms; ${nextHoldAfter(at)}`);
      await progress("after the server restart", up, 2, SESSION_MS + 60_000);
      note(process.hrtime.bigint(), "every live contender served twice since the restart");
    }
  } finally {
    closingAt = process.hrtime.bigint();
    closing = true;
    await Promise.all(replacing);
    sampling = false;
    proxy.blackhole(false);
    await sampler;
    await Promise.all(live.map((c) => c.close(5000)));
    console.log(`[faults ${recipe === "sem" ? "semaphore" : "rwlock"} ${naming}] timeline (fault → what happened):\n${timeline.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, l]) => l).join("\n")}`);
  }

  // Every contender still running was served, the replacements too.
  for (const c of live) assert.ok(served(c) >= 1, `${c.id} never served`);
  const judged = holds.filter((h) => h.start < closingAt).map((h) => ({ ...h, end: h.end ?? closingAt }));
  const margin = (h: Hold): bigint => h.who.clockErrorNs + 1_000_000n;
  const across = (s: Sample, role?: Role): number => judged.filter((h) => (!role || h.role === role) && h.start + margin(h) < s.from && h.end! > s.to).length;
  const bySamples = samples.filter((s) => (recipe === "sem" ? across(s) > s.leases : across(s, "write") > s.writers || across(s, "read") > s.readers));
  const byKind = Object.fromEntries(["ts", "java", "python"].map((k) => [k, judged.filter((h) => h.who.kind === k).length]));
  let verdict: string;
  if (recipe === "sem") {
    const most = maxConcurrent(judged);
    verdict = `most leases at once ${most} (permits ${PERMITS})`;
    assert.ok(most <= PERMITS, `${most} leases at once`);
  } else {
    const bad = overlapping(judged, (a, b) => a.role === "write" || b.role === "write");
    verdict = `writer overlaps ${bad.length}, most readers at once ${maxConcurrent(judged.filter((h) => h.role === "read"))}`;
    assert.deepEqual(bad, []);
  }
  console.log(
    `[faults ${recipe === "sem" ? "semaphore" : "rwlock"} ${naming}] holds ${judged.length} (${JSON.stringify(byKind)}), ${verdict}; ` +
      `server samples ${samples.length}, holds claimed beyond the server's ${bySamples.length}; contenders ${everyone.length} (${victims.size} faulted)`,
  );
  assert.ok(samples.length > 50, `the sampler read the server (${samples.length} samples)`);
  const claims = (s: Sample): string =>
    `${ms(s.from)}..${ms(s.to)}: server ${recipe === "sem" ? `${s.leases} leases` : `${s.writers} writers, ${s.readers} readers`}; logs: ` +
    judged.filter((h) => h.start + margin(h) < s.from && h.end! > s.to).map((h) => `${h.who.id} ${h.role} ${ms(h.start)}..${ms(h.end!)}`).join(", ");
  assert.deepEqual(bySamples.map(claims), [], "no log claims more holds across a read than the server showed granted");
}

describe("Semaphore and ReadWriteLock with Curator and kazoo under kill -9, SIGSTOP, link cuts and a server kill -9", () => {
  beforeAll(async () => {
    server = await startStandalone({ tickTime: 500, config: { maxSessionTimeout: "40000" } }); // sessions from 1 s; the admin's 30 s
    proxy = await startFaultProxy("127.0.0.1", server.clientPort);
    admin = await ZooKeeper.connect(server.connectString, { sessionTimeout: 30_000 });
  }, 120_000);
  afterAll(async () => {
    await killAllContenders();
    await admin?.close();
    await proxy?.close();
    await server?.close();
  }, 60_000);

  const ts = (role: Role, viaProxy?: true): Member => ({ kind: "ts", role, viaProxy });
  const runs: Array<[string, Naming, "sem" | "rw", Member[]]> = [
    ["semaphore (permits 2), Curator layout: zookeeper-ts and Curator InterProcessSemaphoreV2", "curator", "sem",
      [ts("sem"), { kind: "java", role: "sem" }, ts("sem", true), { kind: "java", role: "sem" }, ts("sem")]],
    ["semaphore (permits 2), kazoo layout: zookeeper-ts and kazoo Semaphore", "kazoo", "sem",
      [ts("sem"), { kind: "python", role: "sem" }, ts("sem", true), { kind: "python", role: "sem" }, ts("sem")]],
    ["read-write lock, Curator layout: zookeeper-ts and Curator InterProcessReadWriteLock readers and writers", "curator", "rw",
      [ts("read"), { kind: "java", role: "write" }, ts("write", true), { kind: "java", role: "read" }, ts("read")]],
    ["read-write lock, kazoo layout: zookeeper-ts readers and writers, kazoo WriteLock writers", "kazoo", "rw",
      [ts("read"), { kind: "python", role: "write" }, ts("write", true), { kind: "python", role: "write" }, ts("read")]],
  ];
  for (const [title, naming, recipe, members] of runs) it(title, () => faultRun(naming, recipe, members), 180_000);
});
