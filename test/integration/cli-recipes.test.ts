// zkts and the newer recipes against a real server, under the runtime running this file: `lock --shared` (the read
// side of a ReadWriteLock) and `lock --semaphore N` (a Semaphore lease) supervising shell scripts that log their own
// start and end to one shared file (appends, in the order they happen), from which the test counts how many ran at
// once; `zkts semaphore` listing leases and waiters of Semaphores the recipe made, in Curator's and kazoo's layouts;
// `zkts partition` showing the split SetPartitioner members made; and the usage errors of the new options.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, Lock, Semaphore, SetPartitioner, ZooKeeper, ZooKeeperError, type SemaphoreLease } from "../../src/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { killClis, startCli, statusEvents, zkts, type CliProcess, type CliResult } from "../support/processes/cli-run.ts";
import { until } from "../support/wait.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";

// $1: the log directory. Logs "start PID" and, once told to stop (the file stop.PID), "end PID", then exits 0.
const CHILD = `#!/bin/sh
dir=$1
me=$$
echo "start $me" >> "$dir/log"
while [ ! -e "$dir/stop.$me" ]; do sleep 0.02; done
echo "end $me" >> "$dir/log"
`;

/** The children of one test: the shared log they write, and how many of them ran at once by it. */
class Runs {
  readonly dir = mkdtempSync(join(tmpdir(), "zkts-recipes-"));

  constructor() {
    writeFileSync(join(this.dir, "child.sh"), CHILD, { mode: 0o755 });
  }

  command(): string[] {
    return ["sh", join(this.dir, "child.sh"), this.dir];
  }

  /** The log's whole lines: [what, pid]. */
  log(): [string, number][] {
    const file = join(this.dir, "log");
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    return text.split("\n").slice(0, -1).map((l) => {
      const [what, pid] = l.split(" ");
      return [what, Number(pid)];
    });
  }

  started(): number[] {
    return this.log().filter(([w]) => w === "start").map(([, p]) => p);
  }

  /** The pids of the children that have started, once `n` have. */
  async startedAtLeast(n: number): Promise<number[]> {
    await until(`${n} children to start`, () => this.started().length >= n);
    return this.started();
  }

  stop(pid: number): void {
    writeFileSync(join(this.dir, `stop.${pid}.tmp`), "");
    renameSync(join(this.dir, `stop.${pid}.tmp`), join(this.dir, `stop.${pid}`));
  }

  /** The most children running at once, from the log: a child runs from its start line to its end line. */
  maxAtOnce(): number {
    let now = 0;
    let max = 0;
    for (const [what] of this.log()) {
      now += what === "start" ? 1 : -1;
      max = Math.max(max, now);
    }
    return max;
  }

  close(): void {
    for (const [, pid] of this.log()) if (!existsSync(join(this.dir, `stop.${pid}`))) this.stop(pid);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A `zkts --json` process with its status lines (stderr) as they come. */
interface Supervisor {
  cli: CliProcess;
  events(): Record<string, unknown>[];
}

describe("zkts and the recipes: lock --shared / --semaphore, semaphore, partition (real server)", () => {
  let connect: string;
  let zk: ZooKeeper;
  const root = uniqueRoot("cli-recipes");
  const running: CliProcess[] = [];
  const others: ZooKeeper[] = [];
  const run = (...args: string[]): Promise<CliResult> => zkts(["--server", connect, ...args]);
  const ok = (r: CliResult): CliResult => (assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.err}`), r);
  const session = async (): Promise<ZooKeeper> => {
    const c = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    others.push(c);
    return c;
  };
  const children = (path: string): Promise<string[]> =>
    zk.getChildren(path).catch((e: unknown) => {
      if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) return [];
      throw e;
    });
  const supervisor = async (args: string[]): Promise<Supervisor> => {
    const cli = await startCli(["--server", connect, "--json", ...args], { killAfterMs: 20_000 });
    running.push(cli);
    return { cli, events: () => statusEvents(cli) };
  };
  const event = (s: Supervisor, name: string): Record<string, unknown> | undefined => s.events().find((e) => e.event === name);
  /** The supervisor that reported starting child `pid` (its status line may come after the child's own log line). */
  const owner = async (sups: Supervisor[], pid: number): Promise<Supervisor> => {
    const has = (s: Supervisor): boolean => s.events().some((e) => e.event === "child-started" && e.pid === pid);
    await until(`a supervisor to report child ${pid}`, () => sups.some(has));
    return sups.find(has)!;
  };
  const withRuns = async (body: (runs: Runs) => Promise<void>): Promise<void> => {
    const runs = new Runs();
    try {
      await body(runs);
    } finally {
      runs.close();
    }
  };

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await zk.create(root);
  }, 60_000);

  afterAll(async () => {
    await killClis(running);
    await Promise.all(others.map((c) => c.close()));
    if (zk) await removeRoot(zk, root);
    await zk?.close();
  }, 60_000);

  for (const naming of ["curator", "kazoo"] as const) {
  it(`two \`lock --shared --naming ${naming}\` run their children at once; a \`lock --exclusive\` on the same path waits until both have ended`, () =>
    withRuns(async (runs) => {
      const path = `${root}/rw-${naming}`;
      const lock = (mode: string): Promise<Supervisor> => supervisor(["lock", mode, "--naming", naming, path, "--", ...runs.command()]);
      const readers = [await lock("--shared"), await lock("--shared")];
      const [r1, r2] = await runs.startedAtLeast(2);
      const writer = await lock("--exclusive");
      // The layout's read-write lock names (Curator InterProcessReadWriteLock, kazoo ReadLock / WriteLock): two readers, the writer queued behind them.
      await until("the writer's contender", async () => (await children(path)).length === 3);
      const names = await children(path);
      const [read, write] = naming === "curator" ? [/^_c_[0-9a-f-]{36}-__READ__\d{10}$/, /^_c_[0-9a-f-]{36}-__WRIT__\d{10}$/] : [/^[0-9a-f]{32}__rlock__\d{10}$/, /^[0-9a-f]{32}__lock__\d{10}$/];
      assert.equal(names.filter((n) => read.test(n)).length, 2, names.join(" "));
      assert.equal(names.filter((n) => write.test(n)).length, 1, names.join(" "));
      assert.equal(runs.started().length, 2, "the writer's child started beside the readers");
      for (const r of readers) assert.deepEqual([event(r, "acquired")?.mode, event(r, "acquired")?.naming], ["shared", naming]);
      runs.stop(r1);
      const first = await (await owner(readers, r1)).cli.done;
      assert.equal(first.code, 0, first.err);
      assert.equal(runs.started().length, 2, "the writer's child started beside a reader");
      runs.stop(r2);
      const [, , w] = await runs.startedAtLeast(3);
      const second = await (await owner(readers, r2)).cli.done;
      assert.equal(second.code, 0, second.err);
      assert.equal(event(writer, "acquired")?.mode, "exclusive");
      runs.stop(w);
      const last = await writer.cli.done;
      assert.equal(last.code, 0, last.err);
      // From the children's own log: the readers overlapped, the writer ran alone after both.
      assert.deepEqual(runs.log(), [["start", r1], ["start", r2], ["end", r1], ["end", r2], ["start", w], ["end", w]]);
    }), 90_000);
  }

  for (const naming of ["curator", "kazoo"] as const) {
    it(`four \`lock --semaphore 2 --naming ${naming}\`: at most two children at once, all four run; \`zkts semaphore\` shows the two leases and two waiters`, () =>
      withRuns(async (runs) => {
        const path = `${root}/sem-${naming}`;
        const sups = await Promise.all([0, 1, 2, 3].map(() => supervisor(["lock", "--semaphore", "2", "--naming", naming, path, "--", ...runs.command()])));
        await runs.startedAtLeast(2);
        // Both waiters stand in the semaphore's mutex (Curator's holder has made its lease znode too).
        const mutex = naming === "curator" ? `${path}/locks` : `${path}-__lock__`;
        await until("two waiters in the mutex", async () => (await children(mutex)).length === 2);
        if (naming === "curator") await until("the waiting lease znode", async () => (await children(`${path}/leases`)).length === 3);
        assert.equal(runs.started().length, 2);
        const listed = JSON.parse(ok(await run("--json", "semaphore", path)).out) as { layout: string; permits: number | null; leases: { id: string; path: string }[]; waiters: { id: string; lease?: string }[] };
        assert.equal(listed.layout, naming);
        assert.equal(listed.permits, naming === "kazoo" ? 2 : null);
        const holders = sups.filter((s) => event(s, "acquired") !== undefined);
        assert.equal(holders.length, 2);
        assert.deepEqual(listed.leases.map((l) => l.path).sort(), holders.map((s) => event(s, "acquired")!.lease as string).sort());
        assert.deepEqual(listed.leases.map((l) => l.id).sort(), holders.map((s) => event(s, "waiting")!.id as string).sort());
        const waiting = sups.filter((s) => !holders.includes(s)).map((s) => event(s, "waiting")!.id as string);
        assert.deepEqual(listed.waiters.map((w) => w.id).sort(), waiting.sort());
        assert.equal(listed.waiters[0].lease !== undefined, naming === "curator"); // Curator's mutex holder made its lease znode
        // Each child is told to end once started: the next waiter gets the lease freed.
        for (let i = 0; i < 4; i++) runs.stop((await runs.startedAtLeast(i + 1))[i]);
        for (const s of sups) assert.equal((await s.cli.done).code, 0, s.cli.err());
        assert.equal(runs.started().length, 4);
        assert.equal(runs.maxAtOnce(), 2, JSON.stringify(runs.log()));
      }), 90_000);
  }

  for (const naming of ["curator", "kazoo"] as const) {
    it(`\`zkts semaphore\` on a Semaphore the recipe made (${naming} layout): leases and waiters, in order, as they change`, async () => {
      const path = `${root}/listed-${naming}`;
      const sem = (c: ZooKeeper, id: string): Semaphore => new Semaphore(c, path, { permits: 2, naming, id });
      const [a, b, c, d] = await Promise.all([session(), session(), session(), session()]);
      const alpha = await sem(a, "alpha").acquire();
      const beta = await sem(b, "beta").acquire();
      const gamma = sem(c, "gamma").acquire();
      const mutex = naming === "curator" ? `${path}/locks` : `${path}-__lock__`;
      await until("gamma in the mutex", async () => (await children(mutex)).length === 1);
      const delta = sem(d, "delta id").acquire(); // an id with a space: quoted in the plain output
      await until("delta in the mutex", async () => (await children(mutex)).length === 2);
      if (naming === "curator") await until("gamma's lease znode", async () => (await children(`${path}/leases`)).length === 3);
      const lines = ok(await run("semaphore", path)).out.trimEnd().split("\n");
      const kind = naming === "curator" ? "Curator InterProcessSemaphoreV2, permits not stored" : "kazoo Semaphore, 2 permits (max_leases)";
      assert.equal(lines[0], `semaphore ${path}: ${kind}`);
      assert.equal(lines[1], "leases (2):");
      const lease = naming === "curator" ? /^_c_[0-9a-f-]{36}-lease-\d{10}$/ : /^[0-9a-f]{32}$/;
      const lock = naming === "curator" ? /^_c_[0-9a-f-]{36}-lock-\d{10}$/ : /^[0-9a-f]{32}__lock__\d{10}$/;
      const row = (l: string): string[] => l.trim().split(/ {2}/);
      assert.deepEqual(lines.slice(2, 4).map((l) => row(l)[0]), ["alpha", "beta"]);
      for (const l of lines.slice(2, 4)) assert.match(row(l)[1], lease);
      assert.equal(lines[4], "waiters (2):");
      assert.equal(row(lines[5])[0], "gamma");
      assert.match(row(lines[5])[1], lock);
      assert.match(row(lines[5])[2], naming === "curator" ? /^holds the mutex; its lease _c_\S+-lease-\d{10} waits for a free one$/ : /^holds the mutex$/);
      assert.deepEqual(row(lines[6]).slice(0, 1), ['"delta id"']);
      assert.equal(lines.length, 7);
      // alpha gives its lease back: gamma holds one, delta moves up.
      await alpha.release();
      const gammaLease: SemaphoreLease = await gamma;
      await until("delta holding the mutex", async () => (await children(mutex)).length === 1);
      if (naming === "curator") await until("delta's lease znode", async () => (await children(`${path}/leases`)).length === 3);
      const j = JSON.parse(ok(await run("--json", "semaphore", path)).out) as { leases: { id: string; path: string; session: string }[]; waiters: { id: string }[] };
      assert.deepEqual(j.leases.map((l) => l.id), ["beta", "gamma"]);
      assert.equal(j.leases[1].path, gammaLease.path);
      assert.equal(j.leases[0].session, `0x${b.sessionId.toString(16)}`);
      assert.deepEqual(j.waiters.map((w) => w.id), ["delta id"]);
      await Promise.all([beta.release(), gammaLease.release()]);
      await (await delta).release();
      const empty = JSON.parse(ok(await run("--json", "semaphore", path)).out) as { leases: unknown[]; waiters: unknown[] };
      assert.deepEqual([empty.leases, empty.waiters], [[], []]);
    }, 90_000);
  }

  it("`zkts semaphore`: a node that is neither layout is exit 1; a missing one NONODE (exit 1); --naming reads it as told; an empty one shows nothing", async () => {
    const p = `${root}/not-a-semaphore`;
    await zk.create(`${p}/child`, null, { createParents: true });
    const r = await run("semaphore", p);
    assert.deepEqual([r.code, r.out], [1, ""]);
    assert.match(r.err, /is not a semaphore of either layout \(children: child\); --naming tells which/);
    const missing = await run("semaphore", `${root}/missing`);
    assert.deepEqual([missing.code, missing.err], [1, `NONODE (getData ${root}/missing)\n`]);
    const forced = JSON.parse(ok(await run("--json", "semaphore", "--naming", "kazoo", p)).out) as { layout: string; leases: { id: string }[] };
    assert.deepEqual([forced.layout, forced.leases.length], ["kazoo", 1]);
    const empty = `${root}/empty-semaphore`;
    await zk.create(empty);
    assert.equal(ok(await run("semaphore", empty)).out, `semaphore ${empty}: nothing there (no leases, no mutex), layout unknown\nleases (0):\nwaiters (0):\n`);
  }, 60_000);

  it("`zkts partition` shows each member's items as SetPartitioner members split them, and follows a member leaving", async () => {
    const path = `${root}/partition`;
    const set = ["a", "b", "c", "d", "e"];
    const members = await Promise.all(
      ["m-1", "m-2"].map(async (id) => {
        const p = new SetPartitioner(await session(), path, { set, id, settle: 100, reaction: 200 });
        p.on("state", (s) => void (s === "release" ? p.release().catch(() => {}) : undefined));
        await p.start();
        return p;
      }),
    );
    await Promise.all(members.map((m) => m.waitForAcquire({ timeout: 20_000 })));
    assert.deepEqual(members.map((m) => m.partition), [["a", "c", "e"], ["b", "d"]]);
    assert.equal(ok(await run("partition", path)).out, `partition ${path}: 2 members, 5 items\n  m-1  a c e\n  m-2  b d\n`);
    assert.deepEqual(JSON.parse(ok(await run("--json", "partition", "--set", "a,b,c,d,e,f", path)).out), {
      path,
      members: [
        { id: "m-1", items: ["a", "c", "e"], waiting: [], inParty: true },
        { id: "m-2", items: ["b", "d"], waiting: [], inParty: true },
      ],
      unheld: ["f"],
    });
    assert.equal(ok(await run("partition", "--set", "a,b,c,d,e,f", path)).out, `partition ${path}: 2 members, 6 items\n  m-1  a c e\n  m-2  b d\nunheld: f\n`);
    await members[1].finish(); // m-2 leaves: m-1 takes every item
    await until("m-1 holding all five", () => members[0].state === "acquired" && members[0].partition.length === 5);
    assert.equal(ok(await run("partition", path)).out, `partition ${path}: 1 member, 5 items\n  m-1  a b c d e\n`);
    // An item's kazoo Lock held by an id outside the party, and a member queued for it (as during a hand-over).
    const ghost = new Lock(await session(), `${path}/locks/z`, { naming: "kazoo", id: "ghost" });
    await ghost.acquire();
    const queued = new Lock(await session(), `${path}/locks/z`, { naming: "kazoo", id: "m-1" });
    const turn = queued.acquire();
    await until("m-1 queued for z", async () => (await children(`${path}/locks/z`)).length === 2);
    assert.equal(ok(await run("partition", path)).out, `partition ${path}: 1 member, 6 items\n  m-1  a b c d e  (waiting for z)\n  ghost  z  (not in the party)\n`);
    await ghost.release();
    await turn;
    await queued.release();
    await members[0].finish();
  }, 90_000);

  it("`lock --semaphore 1`: a lease deleted behind its back is lost: the child is stopped, exit 3", () =>
    withRuns(async (runs) => {
      const path = `${root}/lost`;
      const s = await supervisor(["lock", "--semaphore", "1", path, "--", ...runs.command()]);
      await runs.startedAtLeast(1);
      await until("the acquired line", () => event(s, "acquired") !== undefined);
      await zk.delete(event(s, "acquired")!.lease as string);
      const r = await s.cli.done;
      assert.equal(r.code, 3, r.err);
      assert.deepEqual(s.events().map((e) => e.event), ["waiting", "acquired", "child-started", "lost", "child-ended"]);
      assert.equal(event(s, "lost")!.reason, "deleted");
    }), 60_000);

  it("usage errors exit 2 before connecting, with the usage on stderr", async () => {
    const cases: [string[], RegExp][] = [
      [["semaphore"], /semaphore: expected semaphore \[--naming curator\|kazoo\] \[--permits N\] PATH/],
      [["semaphore", "--permits", "0", "/s"], /semaphore --permits N must be an integer ≥ 1, got "0"/],
      [["partition"], /partition: expected partition \[--set ITEM\[,ITEM\.\.\.\]\] PATH/],
      [["lock", "--shared", "--", "true"], /lock: expected lock \[--shared \| --exclusive \| --semaphore N\]/],
      [["lock", "--semaphore", "0", "/s", "--", "true"], /lock --semaphore N must be an integer ≥ 1, got "0"/],
      [["lock", "--semaphore", "two", "/s", "--", "true"], /lock --semaphore N must be an integer ≥ 1, got "two"/],
      [["lock", "--shared", "--semaphore", "2", "/s", "--", "true"], /lock: --shared and --semaphore exclude each other/],
      [["lock", "--shared", "--exclusive", "/s", "--", "true"], /lock: --shared and --exclusive exclude each other/],
      [["lock", "--naming", "zoo", "/s", "--", "true"], /lock --naming must be curator or kazoo, got "zoo"/],
      [["semaphore", "--naming", "zoo", "/s"], /semaphore --naming must be curator or kazoo, got "zoo"/],
      [["partition", "--set", "a,b/c", "/p"], /partition --set: items are znode names \(no "\/"\), got "a,b\/c"/],
    ];
    // A server that is never dialled: a usage error exits before connecting.
    for (const [args, message] of cases) {
      const r = await zkts(args, { env: { ZK_CONNECT: "127.0.0.1:1" } });
      assert.equal(r.code, 2, `${args.join(" ")}: exit ${r.code}; ${r.err}`);
      assert.match(r.err, message);
      assert.match(r.err, /^usage: zkts /m);
      assert.equal(r.out, "");
    }
  }, 60_000);
});
