// Big elections (docs/recipes.md "Big elections"): 200 LeaderElection participants, 60 Lock contenders and 200
// GroupMembers, each on its own session against the shared server. Facts only, no times: exactly one
// leader, handover in sequence order, one wake-up per change, at most one session watching each
// candidate znode besides the leader's own watch (the 4lw `wchp`), and coalesced "change" events that
// converge to the full membership, with the group watched only by sessions that listen.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { ZooKeeper } from "../../src/index.ts";
import { GroupMember, LeaderElection, Lock, type Member } from "../../src/recipes/index.ts";
import { countWatchers, parseWchp } from "../../bench/big/stats.ts";
import { SharedSessions, fourLetterWordAt, fourLetterWordOff, removeRoot } from "../support/sessions.ts";
import { never, nextEvent, until } from "../support/wait.ts";
import { sharedServer } from "../support/servers/zk-server.ts";

const N = 200;
const root = `/t-recipes-big-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();

async function clients(n: number): Promise<ZooKeeper[]> {
  const out: ZooKeeper[] = [];
  for (let i = 0; i < n; i += 25) out.push(...(await Promise.all(Array.from({ length: Math.min(25, n - i) }, () => sessions.client()))));
  return out;
}

/** Why the watcher layout cannot be read here (a ZK_CONNECT server whose 4lw whitelist lacks wchp), or null: the file's cases are skipped then, saying so. */
async function wchpOff(what: string): Promise<boolean> {
  const off = await fourLetterWordOff((await sharedServer()).connectString, "wchp");
  if (off !== null) console.log(`[recipes-big] ${what}: skipped: ${off}`);
  return off !== null;
}

async function wchp(): Promise<string> {
  return fourLetterWordAt((await sharedServer()).connectString, "wchp", 30_000);
}

/** Watching sessions per candidate znode under `path`, and the count on the first (the leader's or holder's). */
async function layout(zk: ZooKeeper, path: string, first: string): Promise<{ layout: Record<string, number>; onFirst: number }> {
  const text = await wchp();
  return { layout: countWatchers(text, path, await zk.getChildren(path)), onFirst: parseWchp(text).get(first) ?? 0 };
}

/** Counts the client's listings of `path` (getChildren), so a test can tell a walk-down from a relisting. */
function countListings(zk: ZooKeeper, path: string): () => number {
  let n = 0;
  const list = zk.getChildren.bind(zk);
  zk.getChildren = (p, ...rest) => {
    if (p === path) n++;
    return list(p, ...rest);
  };
  return () => n;
}

describe("big elections", () => {
  sessions.hooks(async () => removeRoot(await sessions.client(), root)); // the run's nodes are all below root

  it(`${N} participants: one leader, handover in sequence order, one wake-up per change, one watcher per candidate`, async () => {
    if (await wchpOff("participants")) return;
    const path = `${root}/election`;
    const zks = await clients(N);
    const es = zks.map((zk, i) => new LeaderElection(zk, path, { id: `p${i}` }));
    const byId = new Map(es.map((e) => [e.id, e]));
    const wakes: string[] = [];
    for (const e of es) e.on("watch", () => wakes.push(e.id));
    const listings = zks.map((zk) => countListings(zk, path));
    await Promise.all(es.map((e) => e.start())); // all at once: the server orders them
    const order = (await es[0].participants()).map((p) => p.id);
    assert.equal(order.length, N);
    await until("the lowest sequence leads", () => byId.get(order[0])!.isLeader, 10_000);
    assert.deepEqual(es.filter((e) => e.isLeader).map((e) => e.id), [order[0]]);
    const first = await layout(zks[0], path, byId.get(order[0])!.candidatePath!);
    assert.deepEqual(first.layout, { "0": 1, "1": N - 2, "2": 1 }, "each waiter watches its predecessor only; the leader its own znode");
    assert.equal(first.onFirst, 2, "the leader's znode: the leader and its successor");
    assert.deepEqual(wakes, [], "joining wakes no one");

    // 25 resigns: each hands over to the next in sequence order (well past the 16 lower candidates a
    // participant remembers: after the walk-down, the leader hint stands in for a listing of all N) and
    // wakes exactly that one, which takes over without listing the children.
    const rounds = 25;
    const successorListings: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const next = byId.get(order[r + 1])!;
      const before = listings[es.indexOf(next)]();
      const elected = nextEvent(next, "elected", 20_000, `${order[r + 1]} elected after ${order[r]} resigned`);
      await byId.get(order[r])!.resign();
      await elected;
      successorListings.push(listings[es.indexOf(next)]() - before);
      assert.deepEqual(es.filter((e) => e.isLeader).map((e) => e.id), [next.id], `round ${r}`);
    }
    assert.deepEqual(successorListings, new Array(rounds).fill(0), "a successor takes over without listing the candidates");
    await never("a further wake-up", () => wakes.length > rounds, 300);
    assert.deepEqual(wakes, order.slice(1, rounds + 1), "one wake-up per deletion, the successor's");

    // A participant in the middle leaving wakes only its successor; the resigned ones queue at the back.
    const now = (await es[0].participants()).map((p) => p.id);
    assert.deepEqual(now.slice(0, N - rounds), order.slice(rounds), "the queue keeps sequence order");
    assert.deepEqual(new Set(now.slice(N - rounds)), new Set(order.slice(0, rounds)));
    wakes.length = 0;
    await byId.get(now[50])!.close();
    await until("its successor re-checks", () => wakes.length > 0, 10_000);
    await never("a further wake-up", () => wakes.length > 1, 300);
    assert.deepEqual(wakes, [now[51]]);
    // Its successor's watch on the next lower candidate lands a round trip after the wake-up.
    const expected = JSON.stringify({ layout: { "0": 1, "1": N - 3, "2": 1 }, onFirst: 2 });
    let seen = "";
    await until("one watcher per candidate again", async () => (seen = JSON.stringify(await layout(zks[0], path, byId.get(now[0])!.candidatePath!))) === expected, 20_000).catch(() => {
      assert.equal(seen, expected);
    });
    assert.deepEqual(es.filter((e) => e.isLeader).map((e) => e.id), [now[0]]);
    await Promise.all(es.map((e) => e.close()));
  }, 300_000);

  it("60 Lock contenders: acquired in sequence order, one wake-up per release, one watcher per contender", async () => {
    if (await wchpOff("Lock contenders")) return;
    const path = `${root}/lock`;
    const n = 60;
    const zks = await clients(n);
    const locks = zks.map((zk, i) => new Lock(zk, path, { id: `l${i}` }));
    const wakes: string[] = [];
    for (const l of locks) l.on("watch", () => wakes.push(l.id));
    const acquired = locks.map((l) => l.acquire({ timeout: 120_000 }));
    for (const a of acquired) a.catch(() => {}); // the last ones are released before they acquire
    await until("every contender queued", async () => (await locks[0].contenders()).length === n, 30_000);
    const order = (await locks[0].contenders()).map((c) => c.id);
    const byId = new Map(locks.map((l, i) => [l.id, { l, acquired: acquired[i] }]));
    await byId.get(order[0])!.acquired;
    const first = await layout(zks[0], path, byId.get(order[0])!.l.nodePath!);
    assert.deepEqual(first.layout, { "0": 1, "1": n - 2, "2": 1 });
    assert.equal(first.onFirst, 2);
    for (let r = 0; r < 20; r++) {
      await byId.get(order[r])!.l.release();
      await byId.get(order[r + 1])!.acquired;
      assert.deepEqual(locks.filter((l) => l.isHeld).map((l) => l.id), [order[r + 1]]);
    }
    await never("a further wake-up", () => wakes.length > 20, 300);
    assert.deepEqual(wakes, order.slice(1, 21));
    await Promise.all(locks.map((l) => l.release()));
    await Promise.all(acquired.map((a) => a.catch(() => {})));
  }, 300_000);

  it(`${N} GroupMembers: coalesced change events converge to the full membership; only listeners watch the group`, async () => {
    if (await wchpOff("GroupMembers")) return;
    const path = `${root}/group`;
    const zks = await clients(N);
    const gs = zks.map((zk, i) => new GroupMember(zk, path, { id: `m${String(i).padStart(3, "0")}`, data: `d${i}` }));
    const ids = gs.map((g) => g.id).sort();
    const seen = new Map<GroupMember, Member[][]>();
    const listen = (g: GroupMember): ((m: Member[]) => void) => {
      const lists: Member[][] = [];
      seen.set(g, lists);
      const f = (m: Member[]): void => void lists.push(m);
      g.on("change", f);
      return f;
    };
    const listeners = [gs[0], gs[99], gs[199]].map((g) => ({ g, f: listen(g) }));
    await Promise.all(gs.map((g) => g.join()));
    for (const { g } of listeners) {
      await until(`${g.id} sees all ${N}`, () => seen.get(g)!.at(-1)?.length === N, 60_000);
      const lists = seen.get(g)!;
      assert.deepEqual(lists.at(-1)!.map((m) => m.id), ids);
      assert.equal(new TextDecoder().decode(lists.at(-1)!.find((m) => m.id === "m007")!.data!), "d7");
      assert.ok(lists.length < N, `${lists.length} change events for ${N} joins: coalesced`);
      for (const l of lists) assert.deepEqual(l.map((m) => m.id), [...new Set(l.map((m) => m.id))].sort(), "each list sorted, no duplicates");
    }
    assert.equal(parseWchp(await wchp()).get(path), 3, "only the 3 listening sessions watch the group");
    await gs[150].leave();
    for (const { g } of listeners) await until(`${g.id} sees the leave`, () => seen.get(g)!.at(-1)?.length === N - 1, 30_000);
    for (const { g, f } of listeners) g.off("change", f);
    await until("no session watches the group once nobody listens", async () => !parseWchp(await wchp()).has(path), 10_000);
    await Promise.all(gs.map((g) => g.leave()));
  }, 300_000);
});
