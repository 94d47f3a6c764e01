// A Jepsen-style history run against a real ensemble: clients, each through fault proxies of its own (one
// per server), read (linearizable getData), write (unversioned setData, unique values) and cas (setData with the
// version last seen) on a few znodes while rounds of faults hit links and servers. Every operation is
// recorded with its invoke and complete times on one monotonic clock (performance.now) and an outcome
// read from the client's answer; the history is then checked per key (test/support/linearizability.ts).
//
// Outcomes: a resolved call is ok; a ZooKeeperError naming a server's definite answer (BADVERSION, NONODE,
// ...) is fail, and so is an error saying the request was never written to any link (`sent === false`);
// anything else (CONNECTIONLOSS, OPERATIONTIMEOUT, SESSIONEXPIRED, SESSIONMOVED, an abort) is unknown: it
// may have applied, at any later time.
//
// Reads: getData is served by the server the client is on and may be stale (ZooKeeper promises
// sequential consistency for reads, not linearizability), and sync + getData is not enough either: runs
// here saw a sync + getData on (most likely) the leader return the version before one that a follower had
// acknowledged to another client 0.2 ms before the read began. So the read checked is the client's
// getData(path, { linearizable: true }) (the read, then a check of its version that the leader orders, sent
// again while it fails). A sync + getData before it is checked as well and reported, not asserted
// (HistoryRun.syncLine). CAS writes go through withRetry, as the docs advise.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ZooKeeper, isZooKeeperError, withRetry } from "../../src/index.ts";
import { OpCode } from "../../src/protocol/constants.ts";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.ts";
import { checkLinearizable, registerModel, type CheckResult, type Operation, type Outcome, type RegisterInput, type RegisterOutput } from "./linearizability.ts";
import { rng } from "./prng.ts";
import { hold } from "./wait.ts";
import type { ZkEnsemble, ZkServer } from "./zk-types.ts";

export type HistoryOp = Operation<RegisterInput, RegisterOutput>;

/** The faults a run cycles through, one per round. */
export const FAULTS = ["cut", "drop-reply", "half-close", "blackhole", "kill-follower", "stop-leader", "reset"] as const;
export type Fault = (typeof FAULTS)[number];

export interface HistoryOptions {
  root: string; // a fresh parent path; the keys are its children
  keys: readonly string[];
  clients: number;
  rounds: number; // faults injected, cycling through `faults`
  faults?: readonly Fault[]; // default FAULTS
  steadyMs: number; // workload without faults before, between and after the rounds
  seed: number;
  sessionTimeout?: number; // default 6000
  opDeadlineMs?: number; // an op not settled by then is a hang (default 30000)
  blackholeMs?: number; // default 5000 (beyond the read timeout, so the client moves)
  stopMs?: readonly number[]; // how long the leader stays SIGSTOPped, per pass through FAULTS (default [1500])
}

export interface HistoryRun {
  history: HistoryOp[];
  faults: string[]; // what was injected, in order
  hangs: string[]; // operations that never settled
  result: CheckResult;
  checkMs: number;
  summary: string;
  /** The verdict when each read is its sync + getData alone (not its check); the first lines of a violation. */
  syncLine: string;
}

const DEFINITE = new Set(["BADVERSION", "NONODE", "NODEEXISTS", "NOTEMPTY", "BADARGUMENTS", "NOAUTH", "INVALIDACL", "NOCHILDRENFOREPHEMERALS"]);

/** The outcome of a call that rejected with `e`. */
export function outcomeOf(e: unknown): Outcome {
  if ((e as { sent?: boolean } | null)?.sent === false) return "fail"; // never written to any link
  if (isZooKeeperError(e) && DEFINITE.has(e.codeName)) return "fail";
  return "unknown";
}

const text = (d: Uint8Array | null): string => new TextDecoder().decode(d ?? new Uint8Array());

interface Client {
  name: string;
  proxies: FaultProxy[]; // one per server, in the order of ens.servers
  zk: ZooKeeper;
  version: Map<string, number>; // last version of each key this client saw
  stuck: boolean;
}

/** Runs the workload and the faults, then checks the history. Leaves the ensemble with a quorum. */
export async function runHistory(ens: ZkEnsemble, o: HistoryOptions): Promise<HistoryRun> {
  const random = rng(o.seed);
  const cycle = o.faults ?? FAULTS;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
  const sessionTimeout = o.sessionTimeout ?? 6000;
  const deadline = o.opDeadlineMs ?? 30_000;
  const history: HistoryOp[] = [];
  const hangs: string[] = [];
  const errors = new Map<string, number>(); // how calls rejected, by code name
  const resent = new Map<Outcome, number>(); // writes withRetry sent again after a loss, by final outcome
  const syncReads: HistoryOp[] = []; // each read's sync + getData alone, completed at its getData
  const faults: string[] = [];
  const connectOpts = { sessionTimeout, connectTimeout: 30_000 };

  const setup = await ZooKeeper.connect(ens.connectString, connectOpts);
  try {
    await setup.create(o.root);
    for (const k of o.keys) await setup.create(`${o.root}/${k}`, "");
  } finally {
    await setup.close();
  }

  const clients: Client[] = [];
  try {
    for (let i = 0; i < o.clients; i++) {
      const proxies = await Promise.all(ens.servers.map((s) => startFaultProxy(s.host, s.clientPort)));
      const name = `c${i + 1}`;
      const c: Client = { name, proxies, zk: undefined as unknown as ZooKeeper, version: new Map(), stuck: false };
      clients.push(c);
      c.zk = await ZooKeeper.connect(proxies.map((p) => p.connectString).join(","), connectOpts);
    }

    // One operation: invoked now, settled (or declared hung) by the deadline, recorded.
    // out maps a result to the op's output, or to null when the result makes no claim (outcome fail).
    const call = async <T>(c: Client, key: string, input: RegisterInput, run: (invoke: number) => Promise<T>, out: (v: T) => RegisterOutput | null): Promise<RegisterOutput | undefined> => {
      const invoke = performance.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const hung = new Promise<"hung">((resolve) => (timer = setTimeout(() => resolve("hung"), deadline)));
      const settled = run(invoke).then((v) => ({ v }), (e: unknown) => ({ e }));
      const r = await Promise.race([settled, hung]);
      clearTimeout(timer);
      const complete = performance.now();
      const server = ens.servers.find((s) => c.proxies[ens.servers.indexOf(s)].connectString === c.zk.remoteAddress);
      const base = { client: c.name, key, invoke, input, ...(server ? { at: `zk${server.id}` } : {}) };
      if (r === "hung") {
        hangs.push(`${c.name} ${input.f} ${key} invoked at ${invoke.toFixed(0)} ms: not settled after ${deadline} ms`);
        c.stuck = true;
        history.push({ ...base, complete: Infinity, outcome: "unknown" });
        return undefined;
      }
      if ("v" in r) {
        const output = out(r.v);
        if (output === null) {
          errors.set("read refused by its check", (errors.get("read refused by its check") ?? 0) + 1);
          history.push({ ...base, complete, outcome: "fail" });
          return undefined;
        }
        history.push({ ...base, complete, outcome: "ok", output });
        return output;
      }
      const why = isZooKeeperError(r.e) ? r.e.codeName : r.e instanceof Error ? r.e.name : String(r.e);
      errors.set(why, (errors.get(why) ?? 0) + 1);
      history.push({ ...base, complete: outcomeOf(r.e) === "unknown" ? Infinity : complete, outcome: outcomeOf(r.e) });
      return undefined;
    };

    let running = true;
    let seq = 0;
    const work = async (c: Client): Promise<void> => {
      while (running && !c.stuck) {
        if (c.zk.state === "expired" || c.zk.state === "closed" || c.zk.state === "authFailed") {
          await c.zk.close();
          try {
            c.zk = await ZooKeeper.connect(c.proxies.map((p) => p.connectString).join(","), connectOpts);
          } catch {
            await hold(200); // every link down for now: try again
            continue;
          }
        }
        const key = pick(o.keys);
        const path = `${o.root}/${key}`;
        const known = c.version.get(key);
        const dice = random();
        const zk = c.zk;
        if (dice < 0.4 || known === undefined) {
          // The sync + getData alone is recorded for the report; the read checked is the client's linearizable one.
          try {
            const invoke = performance.now();
            await zk.sync(path);
            const { data, stat } = await zk.getData(path);
            syncReads.push({ client: c.name, key, invoke, complete: performance.now(), outcome: "ok", input: { f: "read" }, output: { value: text(data), version: stat.version } });
          } catch {
            // a lost sync or read: nothing to report
          }
          const r = await call(c, key, { f: "read" }, () => zk.getData(path, undefined, { linearizable: true }), ({ data, stat }) => ({ value: text(data), version: stat.version }));
          if (r) c.version.set(key, r.version);
        } else {
          const value = `${c.name}-${++seq}`;
          const input: RegisterInput = dice < 0.7 ? { f: "write", value } : { f: "cas", expected: known, value };
          const version = input.f === "cas" ? input.expected : undefined;
          // Through withRetry, as the docs advise: a lost reply is sent again and judged by the client, so a CAS
          // that happened is never recorded as failed (the checker would find its value read later).
          let attempts = 0;
          const r = await call(c, key, input, () => withRetry(() => (attempts++, zk.setData(path, value, version, { uniqueData: true })), { retries: 3, baseDelay: 20, maxDelay: 200 }), (stat) => ({ version: stat.version }));
          if (attempts > 1) {
            const last = history[history.length - 1]!;
            resent.set(last.outcome, (resent.get(last.outcome) ?? 0) + 1);
          }
          if (r) c.version.set(key, r.version);
        }
        await hold(2 + random() * 10); // the workload's pace
      }
    };
    const workers = clients.map((c) => work(c));

    const linkOf = (c: Client): FaultProxy => c.proxies.find((p) => p.connectString === c.zk.remoteAddress) ?? pick(c.proxies);
    const follower = async (): Promise<ZkServer> => {
      const leader = await ens.leader();
      return pick(ens.servers.filter((s) => s !== leader && s.running));
    };
    const inject = async (f: Fault, round: number): Promise<void> => {
      const c = clients[round % clients.length];
      const link = linkOf(c);
      const on = `${c.name}'s link ${link.connectString}`;
      switch (f) {
        case "cut":
          link.cut();
          faults.push(`cut ${on}`);
          break;
        case "reset":
          link.reset();
          faults.push(`reset ${on}`);
          break;
        case "drop-reply": {
          // the next setData reaches the server; its reply never reaches the client
          const cut = link.cutAfterRequest(OpCode.setData, { forward: true });
          const fired = await Promise.race([cut.then((r) => r.fired), hold(3000).then(() => false)]);
          faults.push(fired ? `dropped a setData reply on ${on}` : `drop-reply on ${on} armed, no setData passed within 3 s`);
          break;
        }
        case "half-close":
          link.halfClose();
          faults.push(`half-closed ${on} (replies dropped)`);
          break;
        case "blackhole":
          link.blackhole(true);
          await hold(o.blackholeMs ?? 5000);
          link.blackhole(false);
          faults.push(`blackholed ${on} for ${o.blackholeMs ?? 5000} ms`);
          break;
        case "kill-follower": {
          const s = await follower();
          await s.kill("SIGKILL");
          await hold(1500);
          await s.start();
          await ens.waitForQuorum();
          faults.push(`kill -9 follower ${s.id}, restarted`);
          break;
        }
        case "stop-leader": {
          const stops = o.stopMs ?? [1500];
          const ms = stops[Math.floor(round / cycle.length) % stops.length];
          const s = await ens.leader();
          await s.pause();
          await hold(ms);
          await s.resume();
          await ens.waitForQuorum();
          faults.push(`SIGSTOP leader ${s.id} for ${ms} ms, SIGCONT`);
          break;
        }
      }
    };

    try {
      await hold(o.steadyMs);
      for (let round = 0; round < o.rounds; round++) {
        await inject(cycle[round % cycle.length], round);
        await hold(o.steadyMs);
      }
    } finally {
      running = false;
      await Promise.all(workers);
    }
  } finally {
    await Promise.all(clients.map((c) => c.zk?.close()));
    await Promise.all(clients.flatMap((c) => c.proxies.map((p) => p.close())));
  }

  const t0 = performance.now();
  const result = checkLinearizable(history, registerModel(), { maxMs: 30_000 });
  const checkMs = performance.now() - t0;
  // The same writes with each read's sync + getData alone (what ZooKeeper's docs offer for reading what
  // another client wrote): reported, not asserted (a leader serves them from its own tree).
  const bySync = checkLinearizable([...history.filter((op) => op.input.f !== "read"), ...syncReads], registerModel(), { maxMs: 15_000 });
  const syncLine = `sync+getData reads alone (${syncReads.length}): ${bySync.verdict}${bySync.verdict === "linearizable" ? "" : `\n${bySync.message.split("\n").slice(0, 12).join("\n")}`}`;
  const perKey = o.keys.map((k) => `key ${k} ${history.filter((op) => op.key === k).length}`).join(", ");
  const count = (x: Outcome) => history.filter((op) => op.outcome === x).length;
  // An unknown write whose (unique) value some ok read returned certainly took effect.
  const readBack = new Set(history.flatMap((op) => (op.outcome === "ok" && op.output && "value" in op.output ? [`${op.key}\u0000${op.output.value}`] : [])));
  const applied = history.filter((op) => op.outcome === "unknown" && op.input.f !== "read" && readBack.has(`${op.key}\u0000${op.input.value}`)).length;
  const why = [...errors].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(", ");
  const summary = `history: ${o.keys.length} keys, ${history.length} ops (${perKey}), ${count("unknown")} unknown (${applied} of them read back), ${count("fail")} fail (errors: ${why || "none"}), ` +
    `writes sent again by withRetry ${[...resent].map(([k, n]) => `${k} ${n}`).join(", ") || "none"}, ${faults.length} faults, verdict ${result.verdict} (${result.keys.map((k) => k.states).reduce((a, b) => a + b, 0)} states, ${checkMs.toFixed(0)} ms; seed ${o.seed})`;
  if (result.verdict !== "linearizable") {
    // The whole history, for a look with the checker offline (Infinity is written as null).
    const file = join(mkdtempSync(join(tmpdir(), "zk-history-")), "history.json");
    writeFileSync(file, JSON.stringify({ seed: o.seed, faults, history }));
    result.message += `\nwhole history: ${file}`;
  }
  return { history, faults, hangs, result, checkMs, summary, syncLine };
}

/**
 * The recorded history made wrong in one place, twice over, for planted checks (each must be rejected):
 * an ok write whose value a later ok read returned, relabelled fail (a failed write that took effect); and
 * an ok read given a value never written. Each picks the candidate nearest the middle of the history, so
 * the search has to get there first. Returns the key each one changed and what it did.
 */
export function plantMislabels(history: readonly HistoryOp[]): { history: HistoryOp[]; key: string; what: string }[] {
  const middle = <T>(xs: T[]): T | undefined => xs[Math.floor(xs.length / 2)];
  const readBack = new Set<string>(); // key + value an ok read returned
  for (const op of history) if (op.outcome === "ok" && op.output && "value" in op.output) readBack.add(`${op.key}\u0000${op.output.value}`);
  const plants: { history: HistoryOp[]; key: string; what: string }[] = [];
  const w = middle([...history.keys()].filter((i) => {
    const op = history[i];
    return op.outcome === "ok" && op.input.f !== "read" && readBack.has(`${op.key}\u0000${op.input.value}`);
  }));
  if (w !== undefined) {
    const copy = [...history];
    const op = history[w];
    copy[w] = { client: op.client, key: op.key, invoke: op.invoke, complete: op.complete, outcome: "fail", input: op.input };
    const value = op.input.f === "read" ? "" : JSON.stringify(op.input.value);
    plants.push({ history: copy, key: op.key, what: `op ${w}: ok ${op.input.f} of ${value} on ${op.key} relabelled fail (it was read back)` });
  }
  const r = middle([...history.keys()].filter((i) => history[i].outcome === "ok" && history[i].input.f === "read"));
  if (r !== undefined) {
    const copy = [...history];
    const op = history[r];
    const version = op.output && "version" in op.output ? op.output.version : 0;
    copy[r] = { ...op, output: { value: "never-written", version } };
    plants.push({ history: copy, key: op.key, what: `op ${r}: an ok read on ${op.key} given a value never written` });
  }
  return plants;
}
