// `npm run demo -- --compare [--json]`: five machines, each its own OS process behind its own TCP
// fault proxy, run once per design (designs/*.ts) under the same scripted faults:
//   1. lost reply: Machine1's candidate create reaches the server, the proxy cuts the link before the reply;
//   2. crash: kill -9 of the master;
//   3. blackhole: the master's link passes nothing for longer than the session timeout, then heals
//      (the master process keeps running and acting as long as its design lets it).
// Every count comes from the machines' lines, mapped onto this process's monotonic clock (syncClock,
// as in the chaos suite); the table and the verdicts come from those counts (compare-report.ts).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { ZooKeeper, isZooKeeperError, ErrorCode } from "../../src/index.ts";
import { OpCode } from "../../src/protocol/constants.ts";
import type { TimedEvent } from "../../test/support/chaos/chaos-history.ts";
import { localNs } from "../../test/support/chaos/chaos-launcher.ts";
import { startFaultProxy, type FaultProxy } from "../../test/support/fakes/fault-proxy.ts";
import { REPO_DIR, runtimeCommand } from "../../test/support/processes/line-process.ts";
import { killAllParticipants, ParticipantProcess, type ParticipantLine } from "../../test/support/processes/participant-process.ts";
import { startStandalone, type ZkServer } from "../../test/support/servers/zk-server.ts";
import { masterIntervals, splitBrainNs, table, verdict, type CompareResult, type DesignResult } from "./compare-report.ts";
import { DESIGN_NAMES, type DesignName } from "./designs/index.ts";

const MACHINES = 5;
const SESSION_MS = 2000;
const SCRIPT = fileURLToPath(new URL("./machine.ts", import.meta.url));
const now = (): bigint => process.hrtime.bigint();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const msBetween = (a: bigint, b: bigint): number => Number(b - a) / 1e6;
const t0 = now();
const say = (who: string, what: string): void => console.log(`[${`+${(msBetween(t0, now()) / 1000).toFixed(3)}s`.padStart(9)}] ${who.padEnd(17)} ${what}`);

interface Box {
  key: string; // unique per incarnation (Machine1, Machine1#2)
  id: string;
  p: ParticipantProcess;
  proxy: FaultProxy;
  marks: TimedEvent[]; // our kill -9s
  leading: boolean;
  owned: string | null;
  negotiatedMs: number;
}

class DesignRun {
  readonly boxes: Box[] = [];
  readonly elected: { box: Box; l: ParticipantLine }[] = []; // ELECTED lines, in arrival order
  readonly watches: { box: Box; ns: bigint }[] = [];
  readonly errors: string[] = [];
  readonly pids: number[];
  private readonly design: DesignName;
  private readonly dir: string;
  private readonly server: { host: string; port: number };

  constructor(design: DesignName, dir: string, server: { host: string; port: number }, pids: number[]) {
    this.design = design;
    this.dir = dir;
    this.server = server;
    this.pids = pids;
  }

  live(): Box[] {
    return this.boxes.filter((b) => b.p.alive);
  }

  /** Starts a machine behind a fresh proxy; `beforeSpawn` arms a fault on that proxy first. */
  async spawn(id: string, beforeSpawn?: (proxy: FaultProxy) => void): Promise<Box> {
    const proxy = await startFaultProxy(this.server.host, this.server.port);
    beforeSpawn?.(proxy);
    const [cmd, base] = runtimeCommand("node", SCRIPT);
    const child = spawn(cmd, [...base, this.design, proxy.connectString, this.dir, id, String(SESSION_MS)], { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] });
    const p = new ParticipantProcess(id, child);
    if (p.pid) this.pids.push(p.pid);
    const n = this.boxes.filter((b) => b.id === id).length;
    const box: Box = { key: n ? `${id}#${n + 1}` : id, id, p, proxy, marks: [], leading: false, owned: null, negotiatedMs: 0 };
    const handle = (l: ParticipantLine): void => {
      if (l.kind === "ELECTED") {
        box.leading = true;
        this.elected.push({ box, l });
      } else if (l.kind === "REVOKED") box.leading = false;
      else if (l.kind === "WATCH") this.watches.push({ box, ns: l.receivedNs });
      else if (l.kind === "OWN") box.owned = l.args[0];
      else if (l.kind === "ERROR") this.errors.push(`${box.key}: ${l.line.slice(6, 200)}`);
    };
    p.onLine(handle);
    void p.exited.then(() => (box.leading = false));
    try {
      const ready = await p.waitFor("READY", 30_000);
      await p.syncClock(3);
      box.negotiatedMs = Number(ready.args[0]);
    } catch (e) {
      await p.kill("SIGKILL");
      throw e;
    }
    this.boxes.push(box);
    return box;
  }

  async kill(box: Box): Promise<bigint> {
    void box.p.kill("SIGKILL");
    const ns = now(); // after kill(2): the process runs no more code
    box.marks.push({ kind: "kill", ns });
    await box.p.exited;
    return ns;
  }

  /** An ELECTED line's stamp on our clock (the offset is known once the machine's syncClock ran). */
  at(e: { box: Box; l: ParticipantLine }): bigint {
    return localNs(e.box.p, e.l) ?? e.l.receivedNs;
  }

  /** The first master elected after `after` (our clock) other than `not`; null when none within timeoutMs. */
  async nextMaster(after: bigint, timeoutMs: number, not?: Box): Promise<{ box: Box; ns: bigint } | null> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const hit = this.elected.find((e) => this.boxes.includes(e.box) && this.at(e) > after && e.box !== not);
      if (hit) return { box: hit.box, ns: this.at(hit) };
      if (performance.now() > deadline) return null;
      await sleep(5);
    }
  }

  /** A quiet point: `machines` running, exactly one of them master, no election line for 300 ms. */
  async stableMaster(machines: number, timeoutMs: number): Promise<Box> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const live = this.live();
      const masters = live.filter((b) => b.leading);
      const last = this.elected.at(-1)?.l.receivedNs ?? 0n;
      if (live.length === machines && masters.length === 1 && msBetween(last, now()) > 300) return masters[0];
      if (performance.now() > deadline) throw new Error(`${this.design}: no single master within ${timeoutMs} ms (${live.map((b) => `${b.key}${b.leading ? "*" : ""}`).join(" ")})`);
      await sleep(20);
    }
  }

  wakeupsSince(ns: bigint): number {
    return this.watches.filter((w) => w.ns >= ns).length;
  }

  events(box: Box): TimedEvent[] {
    const out: TimedEvent[] = [...box.marks];
    for (const l of box.p.lines) {
      if (l.kind !== "ELECTED" && l.kind !== "REVOKED" && l.kind !== "WORK") continue;
      const ns = localNs(box.p, l);
      if (ns !== null) out.push({ kind: l.kind, ns, detail: l.kind === "REVOKED" ? l.args[2] : undefined });
    }
    return out;
  }

  async close(): Promise<void> {
    await Promise.all(this.live().map((b) => b.p.close(3000)));
    await Promise.all(this.boxes.map((b) => b.proxy.close()));
  }
}

async function orphans(admin: ZooKeeper, run: DesignRun, dir: string): Promise<number> {
  const owned = new Set(run.live().map((b) => b.owned));
  return (await admin.getChildren(dir)).filter((c) => !owned.has(`${dir}/${c}`)).length;
}

async function removeTree(zk: ZooKeeper, path: string): Promise<void> {
  for (const c of await zk.getChildren(path).catch(() => [] as string[])) await removeTree(zk, `${path}/${c}`);
  await zk.delete(path).catch((e) => {
    if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
  });
}

async function runDesign(design: DesignName, admin: ZooKeeper, root: string, server: { host: string; port: number }, pids: number[]): Promise<DesignResult> {
  const dir = `${root}/${design}`;
  await admin.create(dir, null);
  const run = new DesignRun(design, dir, server, pids);
  const tag = (box: Box) => `${design} ${box.id}`;
  try {
    // 1. Lost reply: Machine1 joins first; its candidate create reaches the server, its reply never comes back.
    let cutNs: bigint | null = null;
    let cutFired = false;
    const m1 = await run.spawn("Machine1", (proxy) => {
      void proxy.cutAfterRequest(OpCode.create, { forward: true }).then((c) => {
        cutFired = c.fired;
        cutNs ??= now();
      });
    });
    const neg = m1.negotiatedMs;
    say(`${design}`, `Machine1 joined; its create's reply was ${cutFired ? "lost (link cut after the request)" : "NOT cut"}`);
    await Promise.all([2, 3, 4, 5].map((i) => run.spawn(`Machine${i}`)));
    // Wait for a master for the session timeout + 1 s after the cut, and at least 1 s after all five joined.
    const joined = now();
    const lostReplyBoundMs = Math.max(neg + 1000, msBetween(cutNs ?? joined, joined) + 1000);
    const first = await run.nextMaster(0n, lostReplyBoundMs - msBetween(cutNs ?? joined, joined));
    const lostReply = first ? Math.max(0, msBetween(cutNs ?? joined, first.ns)) : null;
    const orphanCount = await orphans(admin, run, dir);
    say(design, first ? `${first.box.id} is master ${Math.round(lostReply!)} ms after the lost reply; orphans: ${orphanCount}` : `no master ${(lostReplyBoundMs / 1000).toFixed(1)} s after the lost reply; orphans: ${orphanCount}`);
    if (!first) {
      const why = orphanCount > 0 ? "stuck behind the orphan its lost create left" : "no master (and no orphan)";
      say(design, `Machine1: ${why}: kill -9 and restart it (what an operator would do)`);
      await run.kill(m1);
      await run.spawn("Machine1");
    }

    // 2. Crash: kill -9 of the master.
    const crashed = await run.stableMaster(MACHINES, neg * 2 + 10_000);
    const killedAt = await run.kill(crashed);
    say(tag(crashed), "master: kill -9");
    const afterCrash = await run.nextMaster(killedAt, neg + 5000, crashed);
    await sleep(500); // let the herd (if any) finish waking
    const wakeCrash = run.wakeupsSince(killedAt);
    say(design, afterCrash ? `${afterCrash.box.id} took over in ${Math.round(msBetween(killedAt, afterCrash.ns))} ms; watches delivered: ${wakeCrash}` : "no new master");

    // 3. Blackhole: nothing passes on the master's link until its session has expired (a successor was
    //    elected; at most twice the session timeout + 5 s), and 0.5 s more; then it heals.
    const cut = await run.stableMaster(MACHINES - 1, neg * 2 + 10_000);
    cut.proxy.blackhole(true);
    const holedAt = now();
    say(tag(cut), "master: link blackholed past its session timeout (the process keeps running)");
    const afterHole = await run.nextMaster(holedAt, neg * 2 + 5000, cut);
    await sleep(500);
    cut.proxy.blackhole(false);
    const healedAt = now();
    await sleep(1000); // its link is back and its session is gone: does it still act?
    const staleActs = cut.p.lines.filter((l) => l.kind === "WORK" && localNs(cut.p, l)! > healedAt).length;
    const stillActing = cut.leading && staleActs > 0;
    const wakeHole = run.wakeupsSince(holedAt);
    const down = cut.p.lines.find((l) => l.kind === "REVOKED" && localNs(cut.p, l)! > holedAt);
    const how = stillActing ? `still acts as master (${staleActs} acts since its link healed)` : down ? `stepped down ${Math.round(msBetween(holedAt, localNs(cut.p, down)!))} ms into the blackhole (${down.args[2]})` : "stopped acting";
    say(design, `${afterHole ? `${afterHole.box.id} took over in ${Math.round(msBetween(holedAt, afterHole.ns))} ms` : "no new master"}; ${cut.id} ${how}; watches delivered: ${wakeHole}`);
    await run.kill(cut);
    const endNs = now();

    const split = splitBrainNs(masterIntervals(run.boxes.map((b) => ({ key: b.key, events: run.events(b) })), endNs));
    return {
      design,
      machines: MACHINES,
      sessionMs: neg,
      splitBrainMs: Number(split) / 1e6,
      splitBrainUnended: stillActing && split > 0n,
      wakeupsPerChange: (wakeCrash + wakeHole) / 2,
      wakeups: { crash: wakeCrash, blackhole: wakeHole },
      orphans: orphanCount,
      failoverMs: {
        crash: afterCrash ? msBetween(killedAt, afterCrash.ns) : null,
        blackhole: afterHole ? msBetween(holedAt, afterHole.ns) : null,
        lostReply,
      },
      lostReplyBoundMs,
      staleActsAfterHeal: staleActs,
      errors: run.errors.slice(0, 5),
    };
  } finally {
    await run.close();
    await removeTree(admin, dir).catch(() => {});
  }
}

export async function runCompare(designNames: readonly DesignName[] = DESIGN_NAMES): Promise<CompareResult> {
  const started = now();
  const pids: number[] = [];
  let server: ZkServer | undefined;
  let admin: ZooKeeper | undefined;
  const stop = (sig: string) => {
    console.log(`\n${sig}: stopping machines and server`);
    void killAllParticipants().then(() => server?.close()).finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    let connectString = process.env.ZK_CONNECT;
    if (!connectString) {
      server = await startStandalone({ tickTime: 500 });
      if (server.pid) pids.push(server.pid);
      connectString = server.connectString;
      say("zookeeper", `throwaway server ${connectString} (tickTime 500)`);
    } else say("zookeeper", `using ZK_CONNECT=${connectString}`);
    const [host, port] = connectString.split(",")[0].replace(/\/.*$/, "").split(":");
    admin = await ZooKeeper.connect(connectString, { sessionTimeout: 10_000 });
    const root = `/election-compare-${randomUUID().slice(0, 8)}`;
    await admin.create(root, null);
    say("demo", `${MACHINES} machines per design, session timeout ${SESSION_MS} ms asked, faults: lost create reply, kill -9, blackhole`);
    const designs: DesignResult[] = [];
    try {
      for (const d of designNames) designs.push(await runDesign(d, admin, root, { host, port: Number(port) }, pids));
    } finally {
      await removeTree(admin, root).catch(() => {});
    }
    const result: CompareResult = { sessionMs: designs[0]?.sessionMs ?? SESSION_MS, seconds: msBetween(started, now()) / 1000, designs, pids };
    console.log(`\nComparison (${MACHINES} machines, session ${result.sessionMs} ms, one run):\n`);
    console.log(table(result));
    console.log("");
    for (const d of designs) console.log(verdict(d));
    return result;
  } finally {
    await killAllParticipants();
    await admin?.close().catch(() => {});
    await server?.close();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
