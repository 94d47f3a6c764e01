// Mutual-exclusion torture: contenders of several kinds on one lock path, each logging HOLD/FREE
// on one monotonic clock, while holders are killed (-9), paused (SIGSTOP past their session) and the
// server a holder is connected to is killed. The record says how many holds, overlaps, wakes per
// release (zookeeper-ts waiters report theirs), failover times and whether tokens grew.
import type { LineEvent } from "../support/processes/line-process.ts";
import type { ZkEnsemble } from "../support/servers/zk-server.ts";
import { hold, until } from "../support/wait.ts";
import { within } from "../stress/helpers.ts";
import { analyseHolds, type HeldInterval } from "./hold-analysis.ts";
import { spawnContender, type Contender, type ContenderKind } from "./contenders.ts";

export type Fault = "kill" | "stop" | "server";

export interface TortureConfig {
  connectString: string;
  ensemble?: ZkEnsemble; // needed for "server" faults
  path: string;
  kinds: ContenderKind[];
  naming: "curator" | "kazoo";
  sessionMs: number;
  acquisitions: number;
  faults: Fault[]; // in this order, one every `faultEvery` holds (then holds until `acquisitions`)
  faultEvery: number;
  log?: (line: string) => void;
}

interface Hold extends HeldInterval {
  who: Contender;
}

export interface TortureRecord {
  holds: number;
  byKind: Record<string, number>;
  overlaps: string[];
  maxWakesPerRelease: number;
  wakes: number;
  tokensIncreasing: boolean;
  failovers: { fault: Fault; victim: string; ms: number }[];
  seconds: number;
}

export async function runTorture(cfg: TortureConfig): Promise<TortureRecord> {
  const t0 = performance.now();
  const holds: Hold[] = [];
  const wakes: bigint[] = [];
  const contenders: Contender[] = [];
  const open = new Map<Contender, Hold>();
  let serial = 0;
  let onHold: (() => void) | null = null;

  const add = async (kind: ContenderKind): Promise<Contender> => {
    const c = await spawnContender({ kind, connectString: cfg.connectString, path: cfg.path, id: `${kind}-${serial++}`, sessionMs: cfg.sessionMs, role: "lock", variant: cfg.naming });
    const take = (l: LineEvent): void => {
      if (l.kind === "HOLD") {
        const h = { who: c, start: c.at(l), end: null, token: BigInt(l.args[2]) };
        holds.push(h);
        open.set(c, h);
        onHold?.();
      } else if (l.kind === "FREE") {
        const h = open.get(c);
        if (h) h.end = c.at(l);
        open.delete(c);
      } else if (l.kind === "WATCH") {
        const ns = c.localNs(l); // zookeeper-ts waiters stamp their wake-ups
        if (ns === null) throw new Error(`${c.id}: unstamped wake-up line "${l.line}"`);
        wakes.push(ns);
      }
    };
    for (const l of c.lines) take(l); // lines that came before READY was seen
    c.onLine(take);
    contenders.push(c);
    return c;
  };
  const nextHold = (after: number, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (holds.length > after) return resolve();
      const timer = setTimeout(() => reject(new Error(`no hold within ${timeoutMs} ms (${holds.length} so far)`)), timeoutMs);
      onHold = () => {
        if (holds.length > after) {
          clearTimeout(timer);
          onHold = null;
          resolve();
        }
      };
    });
  const holderNow = async (want?: (c: Contender) => boolean): Promise<Contender | null> => {
    const find = (): Contender | null => {
      for (const [c, h] of open) if (c.alive && h.end === null && (!want || want(c))) return c;
      return null;
    };
    return until("a holder", () => find() !== null, 10_000, 2).then(find, () => null);
  };

  const failovers: TortureRecord["failovers"] = [];
  let closingAt = 0n;
  try {
    for (const k of cfg.kinds) await add(k);
    const target = holds.length + cfg.acquisitions; // counted once every contender is in
    for (const fault of cfg.faults) {
      await nextHold(holds.length + cfg.faultEvery - 1, 60_000);
      const victim = await holderNow(fault === "stop" ? (c) => c.kind === "ts" : undefined);
      if (!victim) throw new Error(`no ${fault === "stop" ? "zookeeper-ts " : ""}holder to ${fault} within 10 s`);
      const before = holds.length;
      const at = process.hrtime.bigint();
      if (fault === "kill") {
        await victim.kill("SIGKILL");
        const h = open.get(victim);
        if (h && h.end === null) h.end = at;
        open.delete(victim);
      } else if (fault === "stop") {
        process.kill(victim.pid!, "SIGSTOP");
      } else {
        const port = await victim.serverPort().catch(() => null);
        const server = cfg.ensemble?.servers.find((s) => s.clientPort === port && s.running);
        if (!server) throw new Error(`holder ${victim.id} reports server port ${port}: not in the ensemble`);
        await server.kill("SIGKILL");
        void server.start().catch((e: Error) => cfg.log?.(`restart failed: ${e.message}`));
      }
      await nextHold(before, cfg.sessionMs + 20_000);
      const next = holds[before];
      failovers.push({ fault, victim: victim.id, ms: Number(next.start - at) / 1e6 });
      cfg.log?.(`${fault} ${victim.id}: next hold by ${next.who.id} after ${failovers.at(-1)!.ms.toFixed(0)} ms`);
      if (fault === "stop") {
        // The fault is a pause past the session: its length is the property (time, not a fact to wait for).
        await hold(Math.max(0, cfg.sessionMs + 500 - Number(process.hrtime.bigint() - at) / 1e6));
        process.kill(victim.pid!, "SIGCONT"); // its session has expired: it reads "not held" and exits
        await within(victim.exited, 15_000);
        if (victim.alive) await victim.kill("SIGKILL");
      }
      if (!victim.alive) await add(victim.kind);
      if (cfg.ensemble) await cfg.ensemble.waitForQuorum();
    }
    await nextHold(target - 1, 120_000);
  } finally {
    closingAt = process.hrtime.bigint();
    await Promise.all(contenders.map((c) => c.close(5000)));
  }
  // Judge what happened before the closing began: a hold still open then ends there.
  const judged = holds.filter((h) => h.start < closingAt).map((h) => ({ ...h, end: h.end ?? closingAt }));

  const a = analyseHolds(judged, wakes);
  const byKind: Record<string, number> = {};
  for (const h of holds) byKind[h.who.kind] = (byKind[h.who.kind] ?? 0) + 1;
  return {
    holds: holds.length,
    byKind,
    ...a,
    wakes: wakes.length,
    failovers,
    seconds: (performance.now() - t0) / 1000,
  };
}
