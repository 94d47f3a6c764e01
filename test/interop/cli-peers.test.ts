// zkts semaphore / partition / lock --semaphore on the layouts the real peers make: Curator's InterProcessSemaphoreV2
// (MutexParticipant.java, Debian's libcurator-recipes-java) and kazoo's Semaphore and SetPartitioner
// (kazoo_participant.py, kazoo_recipes.py; Debian's python3-kazoo) on the shared server. `zkts semaphore` must list
// the leases the peers say they hold (their lease znodes, their sessions) and the peer waiting; `zkts partition` the
// split the kazoo members report; and `zkts lock --semaphore 2` beside two peers never makes a third holder, counted
// from the peers' own HOLD/FREE logs and our children's own start/end stamps (one CLOCK_MONOTONIC: Node only).
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ZooKeeper } from "../../src/index.ts";
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { killClis, startCli, zkts, type CliProcess, type CliResult } from "../support/processes/cli-run.ts";
import type { LineProcess } from "../support/processes/line-process.ts";
import { until } from "../support/wait.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";
import { killAllContenders, kazooRecipe, spawnContender, type Contender, type ContenderKind } from "./contenders.ts";
import { maxConcurrent, type HeldInterval } from "./hold-analysis.ts";

const root = uniqueRoot("cli-peers");
const PEER: Record<"curator" | "kazoo", ContenderKind> = { curator: "java", kazoo: "python" };
const base = (p: string): string => p.slice(p.lastIndexOf("/") + 1);

interface Listed {
  layout: string | null;
  permits: number | null;
  leases: { id: string; path: string; session: string }[];
  waiters: { id: string; path: string; session: string; lease?: string }[];
}

// The child `zkts lock` runs: stamps its start and end (process.hrtime, CLOCK_MONOTONIC as ours) into the log file.
const CHILD = `const fs = require("node:fs");
const [log, who] = process.argv.slice(1);
fs.appendFileSync(log, "start " + who + " " + process.hrtime.bigint() + "\\n");
setTimeout(() => fs.appendFileSync(log, "end " + who + " " + process.hrtime.bigint() + "\\n"), 40);`;

describe("zkts semaphore / partition / lock --semaphore with Curator's and kazoo's own recipes", () => {
  let connect = "";
  let zk: ZooKeeper;
  const cli: CliProcess[] = [];
  const scripts = new Set<LineProcess>();
  const run = (...args: string[]): Promise<CliResult> => zkts(["--server", connect, ...args]);
  const ok = (r: CliResult): CliResult => (assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.err}`), r);
  const children = (path: string): Promise<string[]> => zk.getChildren(path).catch(() => []);
  const contender = (naming: "curator" | "kazoo", path: string, id: string, holdMs: number, sessionMs = 10_000): Promise<Contender> =>
    spawnContender({ kind: PEER[naming], connectString: connect, path, id, sessionMs, role: "sem", variant: naming, permits: 2, holdMs });

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  }, 60_000);
  afterAll(async () => {
    await killClis(cli);
    await Promise.all([...scripts].map((p) => p.kill()));
    await killAllContenders();
    if (zk) await removeRoot(zk, root);
    await zk?.close();
  }, 60_000);

  for (const naming of ["curator", "kazoo"] as const) {
    const peer = naming === "curator" ? "Curator InterProcessSemaphoreV2" : "kazoo Semaphore";
    it(`\`zkts semaphore\` lists the two leases ${peer} holders hold (as they report them) and the one waiting`, async () => {
      const path = `${root}/sem-${naming}`;
      const mutex = naming === "curator" ? `${path}/locks` : `${path}-__lock__`;
      const holders: Contender[] = [];
      for (const id of ["peer-a", "peer-b"]) {
        const h = await contender(naming, path, id, 600_000); // holds until closed
        await h.expect("HOLD", 30_000);
        holders.push(h);
      }
      const waiter = await contender(naming, path, "peer-c", 600_000, 30_000); // outlives a few seconds of SIGSTOP
      await until("the waiter in the mutex", async () => (await children(mutex)).length === 1, 30_000);
      if (naming === "curator") await until("the waiter's lease znode", async () => (await children(`${path}/leases`)).length === 3, 30_000);
      const [leaseA, leaseB] = await Promise.all(holders.map(async (h) => (await h.ask("lease?", "LEASE"))[0]));
      const [sa, sb, sc] = await Promise.all([...holders, waiter].map(async (p) => (await p.ask("session?", "SESSION"))[0]));
      assert.deepEqual(waiter.lines.filter((l) => l.kind === "HOLD").length, 0, "the third waits");

      const plain = ok(await run("semaphore", path)).out;
      console.log(`[cli-peers] zkts semaphore on ${peer}'s layout:\n${plain}`);
      const listed = JSON.parse(ok(await run("--json", "semaphore", path)).out) as Listed;
      assert.equal(listed.layout, naming);
      assert.equal(listed.permits, naming === "kazoo" ? 2 : null); // kazoo stores max_leases; Curator nothing
      assert.deepEqual(listed.leases.map((l) => [l.id, base(l.path), l.session]), [["peer-a", base(leaseA), sa], ["peer-b", base(leaseB), sb]]);
      assert.equal(listed.waiters.length, 1, JSON.stringify(listed.waiters));
      const [w] = listed.waiters;
      assert.equal(w.session, sc);
      assert.equal(w.path, `${mutex}/${(await children(mutex))[0]}`);
      if (naming === "curator") {
        // Curator's waiter made its lease znode too (the id as its data: setNodeData); its mutex znode carries Curator's
        // default data (the host's address), so the waiter is named by its lease.
        const pending = (await children(`${path}/leases`)).map((n) => `${path}/leases/${n}`).filter((p) => base(p) !== base(leaseA) && base(p) !== base(leaseB));
        assert.deepEqual([w.lease], pending);
        assert.equal(new TextDecoder().decode((await zk.getData(pending[0])).data!), "peer-c");
        assert.notEqual(new TextDecoder().decode((await zk.getData(w.path)).data!), "peer-c");
        assert.equal(w.id, "peer-c");
        // --permits 2 (what the peers were given) makes it exact, and agrees.
        const exact = JSON.parse(ok(await run("--json", "semaphore", "--permits", "2", path)).out) as Listed;
        assert.deepEqual({ ...exact, permits: null }, listed);
        assert.equal(exact.permits, 2);
        assert.match(ok(await run("semaphore", "--permits", "2", path)).out, /^semaphore \S+: Curator InterProcessSemaphoreV2, 2 permits \(--permits\)\n/);
        // --permits 3: three lease znodes fit, so the mutex holder's is one that fits (a lie about the permits shows as such).
        const three = JSON.parse(ok(await run("--json", "semaphore", "--permits", "3", path)).out) as Listed;
        assert.deepEqual([three.leases.length, three.waiters[0].lease], [3, undefined]);
      } else {
        // kazoo's inner Lock stores str() of the identifier's bytes, "b'peer-c'": shown as the id its lease will carry.
        assert.equal(w.id, "peer-c");
        assert.equal(new TextDecoder().decode((await zk.getData(w.path)).data!), "b'peer-c'");
        assert.equal(w.lease, undefined);
        assert.deepEqual([await run("semaphore", "--permits", "3", path)].map((r) => [r.code, r.err.trim()]), [[1, `${path} stores 2 permits (kazoo's max_leases); --permits says 3`]]);
        assert.deepEqual(JSON.parse(ok(await run("--json", "semaphore", "--permits", "2", path)).out), listed);
      }

      if (naming === "curator") {
        // The moment the guess gets wrong, held still: peer-c stopped (SIGSTOP) in its wait, peer-a closes its session
        // (its lease znode goes with it). peer-c's lease now fits, but peer-c still holds the mutex: without the
        // permits that lease is shown as waiting; with --permits 2 as held, and peer-c's mutex znode as the next taker.
        process.kill(waiter.pid!, "SIGSTOP");
        try {
          await holders[0].close(10_000);
          await until("peer-a's lease gone", async () => (await children(`${path}/leases`)).length === 2, 30_000);
          const guess = JSON.parse(ok(await run("--json", "semaphore", path)).out) as Listed;
          assert.deepEqual([guess.leases.map((l) => l.id), guess.waiters.map((x) => [x.id, x.lease])], [["peer-b"], [["peer-c", w.lease]]]);
          const exactPlain = ok(await run("semaphore", "--permits", "2", path)).out;
          console.log(`[cli-peers] peer-a gone, peer-c stopped before it saw its lease fit; zkts semaphore --permits 2:\n${exactPlain}`);
          const exact = JSON.parse(ok(await run("--json", "semaphore", "--permits", "2", path)).out) as Listed;
          assert.deepEqual(exact.leases.map((l) => [l.id, l.path, l.session]), [["peer-b", `${path}/leases/${base(leaseB)}`, sb], ["peer-c", w.lease, sc]]);
          assert.deepEqual(exact.waiters.map((x) => [x.path, x.session, x.lease]), [[w.path, sc, undefined]]);
          assert.deepEqual(waiter.lines.filter((l) => l.kind === "HOLD"), []);
        } finally {
          process.kill(waiter.pid!, "SIGCONT");
        }
      } else {
        // peer-a closes its session (its lease znode goes with it): peer-c takes a lease.
        await holders[0].close(10_000);
      }
      await waiter.expect("HOLD", 30_000);
      const leaseC = (await waiter.ask("lease?", "LEASE"))[0];
      const after = JSON.parse(ok(await run("--json", "semaphore", path)).out) as Listed;
      assert.deepEqual(after.leases.map((l) => [l.id, base(l.path), l.session]), [["peer-b", base(leaseB), sb], ["peer-c", base(leaseC), sc]]);
      assert.deepEqual(after.waiters, []);
      await Promise.all([holders[1].close(10_000), waiter.close(10_000)]);
    }, 120_000);
  }

  it("`zkts partition` shows the split kazoo's SetPartitioner members report, and follows one leaving", async () => {
    const path = `${root}/partition`;
    const items = ["i0", "i1", "i2", "i3", "i4"];
    const last = (p: LineProcess): string[] | undefined => {
      const l = p.lines.filter((x) => x.kind === "ACQUIRED").at(-1);
      return l && l.args[1] !== "-" ? l.args[1].split(",") : l ? [] : undefined;
    };
    const settled = (ps: LineProcess[]): boolean => {
      const split = ps.map(last);
      return split.every((s) => s !== undefined) && split.flatMap((s) => s!).sort().join() === items.join() && ps.every((p) => p.lines.at(-1)?.kind === "ACQUIRED");
    };
    const [a, b] = ["py-a", "py-b"].map((id) => kazooRecipe(connect, "partition", path, [id, items.join(",")], scripts));
    await until("both kazoo members acquired, the set split between them", () => settled([a, b]), 60_000);
    const plain = ok(await run("partition", path)).out;
    console.log(`[cli-peers] zkts partition on kazoo's SetPartitioner:\n${plain}`);
    const listed = JSON.parse(ok(await run("--json", "partition", path)).out) as { members: { id: string; items: string[]; waiting: string[]; inParty: boolean }[]; unheld: string[] };
    assert.deepEqual(listed, {
      path,
      members: [
        { id: "py-a", items: last(a), waiting: [], inParty: true },
        { id: "py-b", items: last(b), waiting: [], inParty: true },
      ],
      unheld: [],
    });
    assert.equal(plain, `partition ${path}: 2 members, 5 items\n  py-a  ${last(a)!.join(" ")}\n  py-b  ${last(b)!.join(" ")}\n`);
    b.send("finish");
    await b.expect("FINISHED", 30_000);
    await until("py-a holding all five", () => last(a)?.length === 5 && a.lines.at(-1)?.kind === "ACQUIRED", 60_000);
    assert.equal(ok(await run("partition", path)).out, `partition ${path}: 1 member, 5 items\n  py-a  ${items.join(" ")}\n`);
    a.send("finish");
    await a.expect("FINISHED", 30_000);
  }, 120_000);

  for (const naming of ["curator", "kazoo"] as const) {
    const peer = naming === "curator" ? "Curator" : "kazoo";
    it(`\`zkts lock --semaphore 2 --naming ${naming}\` beside two ${peer} holders: never more than 2 at once, everyone served`, async () => {
      const path = `${root}/lock-${naming}`;
      const dir = mkdtempSync(join(tmpdir(), "zkts-peers-"));
      const log = join(dir, "log");
      try {
        const peers = await Promise.all(["peer-1", "peer-2"].map((id) => contender(naming, path, id, 40)));
        const holds: HeldInterval[] = [];
        const open = new Map<Contender, HeldInterval>();
        for (const c of peers) {
          const take = (l: { kind: string; args: string[] }): void => {
            if (l.kind === "HOLD") {
              const h: HeldInterval = { who: c, start: c.at(l), end: null, token: 0n };
              holds.push(h);
              open.set(c, h);
            } else if (l.kind === "FREE" && open.has(c)) {
              open.get(c)!.end = c.at(l);
              open.delete(c);
            }
          };
          for (const l of c.lines) take(l);
          c.onLine(take);
        }
        // Three loops of two `zkts lock` runs each, beside the peers' own acquire/release loops.
        const ours = async (loop: number): Promise<void> => {
          for (let i = 0; i < 2; i++) {
            const p = await startCli(["--server", connect, "lock", "--semaphore", "2", "--naming", naming, path, "--", "node", "-e", CHILD, log, `ts-${loop}-${i}`], { killAfterMs: 60_000 });
            cli.push(p);
            const r = await p.done;
            assert.equal(r.code, 0, r.err);
          }
        };
        const startedAt = process.hrtime.bigint();
        await Promise.all([0, 1, 2].map(ours));
        const peerHolds = (c: Contender): number => holds.filter((h) => h.who === c && h.start > startedAt).length;
        await until("each peer served meanwhile too", () => peers.every((c) => peerHolds(c) >= 1), 30_000);
        const closingAt = process.hrtime.bigint(); // an acquire cut short by the closing reports an error; none before it
        await Promise.all(peers.map((c) => c.close(10_000)));
        const lines = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => l.split(" ")) : [];
        const starts = new Map(lines.filter(([w]) => w === "start").map(([, who, ns]) => [who, BigInt(ns)]));
        const ownHolds: HeldInterval[] = lines.filter(([w]) => w === "end").map(([, who, ns]) => ({ who: { id: who, clockErrorNs: 0n }, start: starts.get(who)!, end: BigInt(ns), token: 0n }));
        assert.equal(ownHolds.length, 6, "every zkts lock ran its child");
        const all = [...holds.filter((h) => h.end !== null), ...ownHolds];
        const most = maxConcurrent(all);
        console.log(`[cli-peers] lock --semaphore 2 --naming ${naming}: ${ownHolds.length} zkts children, ${holds.length} ${peer} holds (${peers.map((c) => `${c.id} ${holds.filter((h) => h.who === c).length}`).join(", ")}), most at once ${most}`);
        assert.ok(most <= 2, `${most} holders at once`);
        assert.deepEqual(peers.flatMap((c) => c.lines.filter((l) => l.kind === "ERROR" && l.receivedNs < closingAt).map((l) => `${c.id}: ${l.line}`)), [], "no peer reported an error");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 180_000);
  }
});


