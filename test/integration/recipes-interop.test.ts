// Curator interop under crashes: Java processes running Apache Curator 5.4.0 LeaderLatch and
// zookeeper-ts participant processes share one election path on a real server. Round after round the
// leader is killed -9 (a Java leader, then a TS leader, alternating) and a fresh process of the same
// kind joins at the back. At every stable point exactly one process reports leadership, every
// process's `leader?` names it, the successor is the next in line, and no two leaderships overlap.
import console from "node:console";
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { killAllParticipants as killAllJava, startParticipant as startJava, type JavaParticipant } from "../interop/java-participant.ts";
import { killAllParticipants, type Runtime } from "../support/processes/participant-process.ts";
import { localNs, spawnChaos, type ChaosParticipant } from "../support/chaos/chaos-launcher.ts";
import { foreignWork, intervalsOf, overlaps, quantiles, setOrigin, type Interval, type TimedEvent } from "../support/chaos/chaos-history.ts";
import { itFrom } from "../support/servers/zk-line.ts";

const SESSION_MS = 2000; // tickTime 500 allows it: crash failovers take ~2.5 s
const ROUNDS = 6;
const RUNTIME: Runtime = "node";

interface Proc {
  id: string;
  lang: "java" | "ts";
  marks: TimedEvent[];
  has(): Promise<boolean>;
  leader(): Promise<string | null>;
  waitElected(timeoutMs: number): Promise<unknown>;
  kill(): bigint; // kill -9; returns the stamp taken after kill(2)
  close(): Promise<void>;
  events(): TimedEvent[];
}

function fromJava(j: JavaParticipant): Proc {
  const marks: TimedEvent[] = [];
  return {
    id: j.id,
    lang: "java",
    marks,
    has: async () => (await j.ask("has?", "HAS"))[0] === "true",
    leader: () => j.leader(),
    waitElected: (t) => j.waitFor("ELECTED", t),
    kill: () => {
      void j.kill("SIGKILL");
      const ns = process.hrtime.bigint();
      marks.push({ kind: "kill", ns });
      return ns;
    },
    close: () => {
      // Curator's default (silent) close sends no notLeader and deletes its znode before dropping
      // its flag: count its leadership as over when it is told to close.
      marks.push({ kind: "exit", ns: process.hrtime.bigint() });
      return j.close();
    },
    events: () => [
      ...marks,
      ...j.events.filter((e) => e.kind === "ELECTED" || e.kind === "REVOKED").map((e) => ({ kind: e.kind as "ELECTED" | "REVOKED", ns: j.localNs(e)! })),
    ],
  };
}

function fromTs(c: ChaosParticipant): Proc {
  const marks: TimedEvent[] = [];
  return {
    id: c.id,
    lang: "ts",
    marks,
    has: async () => (await c.p.ask("has?", "HAS"))[0] === "true",
    leader: () => c.p.leader(),
    waitElected: (t) => c.p.waitFor("ELECTED", t),
    kill: () => {
      void c.p.kill("SIGKILL");
      const ns = process.hrtime.bigint();
      marks.push({ kind: "kill", ns });
      return ns;
    },
    close: () => c.p.close(),
    events: () => [
      ...marks,
      ...c.p.lines
        .filter((l) => l.kind === "ELECTED" || l.kind === "REVOKED" || l.kind === "WORK" || l.kind === "EXPIRED")
        .map((l) => ({ kind: l.kind as TimedEvent["kind"], ns: localNs(c.p, l)!, detail: l.kind === "REVOKED" ? l.args[2] : undefined })),
    ],
  };
}

describe("Curator LeaderLatch and zookeeper-ts participants under crashes", () => {
  let server: ZkServer | undefined;

  afterAll(async () => {
    await killAllParticipants();
    await killAllJava();
    await server?.close();
  }, 60_000);

  // Curator 5 (5.4.0 and 5.7.1 alike) does not run against ZooKeeper 3.4 servers (its Java client never
  // gets READY there), so the interop needs 3.5+ whatever our client does.
  itFrom("3.5", `${ROUNDS} rounds of kill -9 of the leader, Java and TS alternating: one leader, agreed by all`, async () => {
    server = await startStandalone({ tickTime: 500 });
    const connectString = server.connectString;
    const path = `/interop-chaos-${process.pid}`;
    const t0 = process.hrtime.bigint();
    setOrigin(t0);
    let serial = 0;
    const spawn = async (lang: "java" | "ts"): Promise<Proc> => {
      const id = `${lang}-${++serial}`;
      if (lang === "ts") return fromTs(await spawnChaos({ connectString, path, id, sessionTimeoutMs: SESSION_MS, runtime: RUNTIME }));
      const j = await startJava({ connectString, electionPath: path, id, sessionTimeoutMs: SESSION_MS });
      await j.waitFor("READY", 30_000);
      return fromJava(j);
    };
    const all: Proc[] = [];
    const line: Proc[] = []; // election order: the first leads
    for (const lang of ["java", "ts", "java", "ts"] as const) {
      const p = await spawn(lang);
      all.push(p);
      line.push(p);
    }
    await line[0].waitElected(10_000);

    /** Exactly one process says it leads, and every process names it. */
    const checkStable = async (expected: Proc): Promise<void> => {
      const has = await Promise.all(line.map((p) => p.has()));
      assert.deepEqual(line.filter((_, i) => has[i]).map((p) => p.id), [expected.id], "exactly one process reports leadership");
      const leaders = await Promise.all(line.map((p) => p.leader()));
      assert.deepEqual(leaders, line.map(() => expected.id), "every process's leader? names the leader");
    };

    await checkStable(line[0]);
    const latency: Record<string, number[]> = { java: [], ts: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      const [leader, successor] = line;
      assert.equal(leader.lang, round % 2 === 1 ? "java" : "ts", "the order alternates Java and TS leaders");
      const killedAt = leader.kill();
      line.shift();
      const elected = successor.waitElected(SESSION_MS + 5000);
      const fresh = spawn(leader.lang); // joins at the back while the session of the dead one expires
      await elected;
      latency[leader.lang].push(Number(process.hrtime.bigint() - killedAt) / 1e6);
      const p = await fresh;
      all.push(p);
      line.push(p);
      await checkStable(successor);
    }

    for (const p of [...line]) {
      await p.close();
      line.shift();
      if (line[0]) await line[0].waitElected(5000);
    }
    const end = process.hrtime.bigint();
    const intervals: Interval[] = [];
    const problems: string[] = [];
    const work: { id: string; ns: bigint }[] = [];
    for (const p of all) {
      const evs = p.events();
      const r = intervalsOf(p.id, evs, end);
      intervals.push(...r.intervals);
      problems.push(...r.problems.map((x) => x.what));
      for (const e of evs) if (e.kind === "WORK") work.push({ id: p.id, ns: e.ns });
    }
    problems.push(...overlaps(intervals).map((x) => x.what), ...foreignWork(work, intervals).map((x) => x.what));
    const fmt = (k: string) => {
      const q = quantiles(latency[k]);
      return `${k} leader killed ×${q.n}: p50 ${q.p50} ms, max ${q.max} ms`;
    };
    console.log(`interop: ${all.length} processes (${all.filter((p) => p.lang === "java").length} Curator), ${intervals.length} leaderships; failover ${fmt("java")}; ${fmt("ts")}; overlaps/foreign work: ${problems.length}`);
    assert.deepEqual(problems, []);
    assert.equal(intervals.length, ROUNDS + 4, "one leadership per round, plus the initial one and the closes at the end");
    for (const v of [...latency.java, ...latency.ts]) assert.ok(v < SESSION_MS + 1000, `failover took ${v} ms`);
  }, 240_000);
});
