// zookeeper-ts ReadWriteLock and Semaphore sharing paths with Curator (InterProcessReadWriteLock,
// InterProcessSemaphoreV2; Debian's libcurator-recipes-java) and kazoo (WriteLock, Semaphore; Debian's python3-kazoo
// 2.8.0) processes (zookeeper-ts ones on Node, Bun and Deno) on a standalone server, with a holder killed -9 midway:
// each process logs its own holds (HOLD/FREE on its monotonic clock, mapped onto ours), and the verdict is drawn from those logs: no writer beside anyone, never more leases than
// permits, every contender served. kazoo 2.8's ReadLock is left out: it waits for the highest writer present, even
// one after it, and deadlocks with it (kazoo #650, fixed in 2.9); its WriteLock is sound.
import assert from "node:assert/strict";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { until } from "../support/wait.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { killAllContenders, spawnContender, type Contender, type ContenderKind } from "./contenders.ts";
import { maxConcurrent, overlapping, type HeldInterval } from "./hold-analysis.ts";
import { onSession, removeRoot, uniqueRoot } from "../support/sessions.ts";

const SESSION_MS = 4000;
const HOLDS_EACH = 5; // every contender is served this many times before the run ends
const root = uniqueRoot("interop-holds"); // every path of the run is below it (kazoo's semaphore puts a sibling <path>-__lock__ beside its path)
const RUNTIMES = ["node", "bun", "deno"] as const;

type Role = "read" | "write" | "sem";
interface Hold extends HeldInterval {
  who: Contender;
  role: Role;
}

/**
 * Runs the contenders until each has held HOLDS_EACH times; with `kill`, then kills -9 a holder (of the foreign kind
 * when one holds) and runs until every survivor has held twice more (its hold ends at the kill; its lease or lock
 * znode stays until the server expires its session). Returns every hold begun before the closing.
 */
async function run(
  path: string,
  naming: "curator" | "kazoo",
  members: Array<[ContenderKind, Role]>,
  options: { permits?: number; kill?: boolean } = {},
): Promise<{ holds: Hold[]; each: Record<string, number>; killed: string | null }> {
  const permits = options.permits;
  const holds: Hold[] = [];
  const open = new Map<Contender, Hold>();
  const contenders = await Promise.all(
    members.map(([kind, role], i) => {
      const runtime = RUNTIMES[members.slice(0, i).filter(([k]) => k === "ts").length % RUNTIMES.length]; // zookeeper-ts ones on Node, Bun, Deno
      return spawnContender({ kind, connectString, path, id: `${kind === "ts" ? runtime : kind}-${role}-${i}`, sessionMs: SESSION_MS, role, variant: naming, permits, runtime });
    }),
  );
  contenders.forEach((c, i) => {
    const role = members[i][1];
    const take = (l: { kind: string; args: string[] }): void => {
      if (l.kind === "HOLD") {
        const h: Hold = { who: c, role, start: c.at(l), end: null, token: 0n };
        holds.push(h);
        open.set(c, h);
      } else if (l.kind === "FREE") {
        const h = open.get(c);
        if (h) h.end = c.at(l);
        open.delete(c);
      }
    };
    for (const l of c.lines) take(l);
    c.onLine(take);
  });
  const count = (): Record<string, number> => Object.fromEntries(contenders.map((c) => [c.id, holds.filter((h) => h.who === c && h.end !== null).length]));
  let closingAt = 0n;
  let killed: Contender | null = null;
  try {
    await until(`every contender served ${HOLDS_EACH} times`, () => Object.values(count()).every((n) => n >= HOLDS_EACH), 90_000, 20);
    if (options.kill) {
      const holder = (): Contender | undefined => [...open.keys()].sort((a, b) => Number(a.kind === "ts") - Number(b.kind === "ts"))[0];
      await until("a holder to kill", () => holder() !== undefined, 20_000, 1);
      const victim = holder()!;
      const at = process.hrtime.bigint();
      await victim.kill("SIGKILL");
      const h = open.get(victim);
      if (h && h.end === null) h.end = at;
      open.delete(victim);
      killed = victim;
      const before = count();
      const survivors = contenders.filter((c) => c !== victim);
      await until("every survivor served twice after the kill", () => survivors.every((c) => count()[c.id] >= before[c.id] + 2), SESSION_MS + 60_000, 20);
    }
  } finally {
    closingAt = process.hrtime.bigint();
    await Promise.all(contenders.map((c) => c.close(5000)));
  }
  // An acquire cut short by the closing reports an error; none before it.
  const errors = contenders.filter((c) => c !== killed).flatMap((c) => c.lines.filter((l) => l.kind === "ERROR" && l.receivedNs < closingAt).map((l) => `${c.id}: ${l.line}`));
  assert.deepEqual(errors, [], "no contender reported an error before the closing");
  return { holds: holds.filter((h) => h.start < closingAt).map((h) => ({ ...h, end: h.end ?? closingAt })), each: count(), killed: killed?.id ?? null };
}

let connectString = "";

describe("ReadWriteLock and Semaphore interop with Curator and kazoo", () => {
  beforeAll(async () => {
    connectString = (await sharedServer()).connectString;
    await onSession(connectString, (zk) => zk.create(root));
  }, 60_000);
  afterAll(async () => {
    await killAllContenders();
    if (connectString) await onSession(connectString, (zk) => removeRoot(zk, root));
  }, 30_000);

  const rw: Array<["curator" | "kazoo", Array<[ContenderKind, Role]>]> = [
    ["curator", [["ts", "read"], ["ts", "write"], ["java", "read"], ["java", "write"], ["ts", "read"]]],
    ["kazoo", [["ts", "read"], ["ts", "write"], ["python", "write"], ["python", "write"], ["ts", "read"]]],
  ];
  for (const [naming, members] of rw) {
    it(`read-write lock, ${naming}: no writer beside a reader or a writer, every contender served, through kill -9 of a holder`, async () => {
      const { holds, each, killed } = await run(`${root}/rwlock-${naming}`, naming, members, { kill: true });
      const bad = overlapping(holds, (a, b) => a.role === "write" || b.role === "write");
      const readersAtOnce = maxConcurrent(holds.filter((h) => h.role === "read"));
      const errors = [...new Set(holds.map((h) => h.who))].map((c) => `${c.id} ±${(Number(c.clockErrorNs) / 1e6).toFixed(2)} ms`).join(", ");
      console.log(`[rwlock interop ${naming}] holds ${holds.length}, writer overlaps ${bad.length}, most readers at once ${readersAtOnce}, each ${JSON.stringify(each)}, killed ${killed}; clock-sync errors ${errors}`);
      assert.deepEqual(bad, []);
    }, 150_000);
  }

  const sem: Array<["curator" | "kazoo", ContenderKind]> = [
    ["curator", "java"],
    ["kazoo", "python"],
  ];
  for (const [naming, foreign] of sem) {
    it(`semaphore, ${naming}: never more leases than permits (2) among zookeeper-ts and ${foreign} holders, every contender served, through kill -9 of a holder`, async () => {
      const members: Array<[ContenderKind, Role]> = [["ts", "sem"], [foreign, "sem"], ["ts", "sem"], [foreign, "sem"], ["ts", "sem"]];
      const { holds, each, killed } = await run(`${root}/semaphore-${naming}`, naming, members, { permits: 2, kill: true });
      const most = maxConcurrent(holds);
      console.log(`[semaphore interop ${naming}] holds ${holds.length}, most leases at once ${most} (permits 2), each ${JSON.stringify(each)}, killed ${killed}`);
      assert.ok(most <= 2, `${most} leases at once`);
    }, 150_000);
  }
});
