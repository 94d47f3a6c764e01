// LeaderElection against a real ZooKeeper server: one leader, fast handover, no herd, Curator's
// ordering rules, fencing. Several sessions in one process; faults live in recipes-election-faults.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CreateMode, ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { LeaderElection, type RevokeReason } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { hold, nextEvent, until } from "../support/wait.ts";

const root = `/t-recipes-election-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();
const client = (): Promise<ZooKeeper> => sessions.client();

/** n participants, each on its own session, started in order (so their sequences ascend). */
async function participants(path: string, n: number): Promise<LeaderElection[]> {
  const out: LeaderElection[] = [];
  for (let i = 0; i < n; i++) {
    const e = new LeaderElection(await client(), path, { id: `p${i}` });
    await e.start();
    out.push(e);
  }
  return out;
}

const leaders = (es: LeaderElection[]) => es.filter((e) => e.isLeader);

async function theLeader(es: LeaderElection[], timeoutMs = 2000): Promise<LeaderElection> {
  await until("exactly one leader", () => leaders(es).length === 1, timeoutMs);
  return leaders(es)[0];
}

describe("LeaderElection", () => {
  sessions.hooks(async () => removeRoot(await client(), root)); // the run's nodes are all below root

  it("bad options are BADARGUMENTS naming the first bad one, before anything is sent; defaults fill the rest", async () => {
    const zk = await client();
    const bad = (options: unknown, message: string): void =>
      assert.throws(
        () => new LeaderElection(zk, `${root}/opts`, options as { id: string }),
        (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.BADARGUMENTS && e.message === `BADARGUMENTS (LeaderElection ${root}/opts): ${message}`,
      );
    bad(undefined, "options.id must be a string");
    bad({ id: 7 }, "options.id must be a string");
    bad({ id: "a", revokeOn: "never" }, 'revokeOn must be "disconnected" or "expired"');
    bad({ id: "a", revokeOn: null }, 'revokeOn must be "disconnected" or "expired"');
    bad({ id: "a", protocol: "etcd" }, 'protocol must be "curator-latch", "curator-selector" or "kazoo"');
    const e = new LeaderElection(zk, `${root}/opts`, { id: "a" });
    assert.deepEqual([e.id, e.revokeOn, e.protocol], ["a", "disconnected", "curator-latch"]);
    assert.equal(await zk.exists(`${root}/opts`), null, "nothing was created");
  });

  it("elects exactly one leader, the lowest sequence, and lists the participants in order", async () => {
    const path = `${root}/one/deep/election`; // missing parents are created (as containers)
    const es = await participants(path, 5);
    const leader = await theLeader(es);
    assert.equal(leader, es[0]);
    await sessions.settled();
    assert.equal(leaders(es).length, 1);
    const ps = await es[3].participants();
    assert.deepEqual(ps.map((p) => p.id), ["p0", "p1", "p2", "p3", "p4"]);
    assert.deepEqual(ps.map((p) => p.isLeader), [true, false, false, false, false]);
    assert.ok(ps.every((p, i) => i === 0 || p.sequence > ps[i - 1].sequence));
    assert.equal((await es[4].leader())?.id, "p0");
    assert.match(ps[0].path, new RegExp(`^${path}/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-\\d{10}$`));
    assert.equal(es[0].candidatePath, ps[0].path);
    const stat = await (await client()).exists(path);
    assert.equal(stat?.ephemeralOwner, 0n);
    for (const e of es) assert.equal(e.token === undefined, e !== leader);
    await Promise.all(es.map((e) => e.close()));
  }, 30_000);

  it("hands over within 1 s when the leader closes, and the token grows", async () => {
    const es = await participants(`${root}/close`, 3);
    const tokens: bigint[] = [];
    for (let i = 0; i < 3; i++) {
      const leader = await theLeader(es);
      assert.equal(leader, es[i]);
      tokens.push(leader.token!);
      if (i === 2) break;
      const elected = nextEvent(es[i + 1], "elected", 1000, `p${i + 1} elected within 1 s`);
      const revoked = nextEvent<[RevokeReason]>(leader, "revoked", 1000);
      const t0 = performance.now();
      await leader.close();
      assert.deepEqual(await revoked, ["closed"]);
      await elected;
      assert.ok(performance.now() - t0 < 1000);
      assert.equal(leader.isLeader, false);
      assert.equal(leader.token, undefined);
    }
    assert.ok(tokens[0] < tokens[1] && tokens[1] < tokens[2], `tokens ${tokens.join(" < ")}`);
    await es[2].close();
  }, 30_000);

  it("a leader whose client closes steps down at once, before the closeSession leaves, and the next is elected after", async () => {
    const path = `${root}/client-close`;
    const za = await client();
    const a = new LeaderElection(za, path, { id: "a" });
    await a.start();
    await a.waitForLeadership();
    const b = new LeaderElection(await client(), path, { id: "b" });
    await b.start();
    const order: string[] = [];
    a.on("revoked", (reason) => order.push(`a revoked ${reason}`));
    b.on("elected", () => order.push("b elected"));
    const elected = nextEvent(b, "elected", 5000, "b elected");
    const closing = za.close();
    // The server deletes a's candidate with the session: a must not read as leader from here on.
    assert.deepEqual(order, ["a revoked closed"]);
    assert.equal(a.isLeader, false);
    assert.equal(a.token, undefined);
    await closing;
    await elected;
    assert.deepEqual(order, ["a revoked closed", "b elected"]);
    await assert.rejects(a.waitForLeadership(), /closed/);
    await b.close();
  }, 30_000);

  it("resign hands over within 1 s and the resigner rejoins at the back", async () => {
    const es = await participants(`${root}/resign`, 3);
    const leader = await theLeader(es);
    const oldPath = leader.candidatePath;
    const elected = nextEvent(es[1], "elected", 1000, "p1 elected within 1 s");
    const revoked = nextEvent<[RevokeReason]>(es[0], "revoked", 1000);
    await es[0].resign();
    assert.deepEqual(await revoked, ["resigned"]);
    await elected;
    assert.notEqual(es[0].candidatePath, oldPath);
    assert.deepEqual((await es[0].participants()).map((p) => p.id), ["p1", "p2", "p0"]);
    // And it comes round again: the others leave, p0 leads.
    const back = nextEvent(es[0], "elected", 2000);
    await es[1].close();
    await es[2].close();
    await back;
    assert.equal(es[0].isLeader, true);
    await es[0].close();
  }, 30_000);

  it("a leader whose znode someone deletes is revoked with 'deleted' and stands again", async () => {
    const es = await participants(`${root}/deleted`, 2);
    const leader = await theLeader(es);
    const admin = await client();
    const revoked = nextEvent<[RevokeReason]>(leader, "revoked", 2000);
    const elected = nextEvent(es[1], "elected", 2000);
    await admin.delete(leader.candidatePath!);
    assert.deepEqual(await revoked, ["deleted"]);
    await elected;
    await until("p0 has a new candidate", async () => (await es[1].participants()).map((p) => p.id).join() === "p1,p0");
    assert.equal(leaders(es).length, 1);
    await Promise.all(es.map((e) => e.close()));
  }, 30_000);

  it("no herd effect: with 10 participants each change wakes at most one of them", async () => {
    const es = await participants(`${root}/herd`, 10);
    const fired = new Map<LeaderElection, number>();
    for (const e of es) e.on("watch", () => fired.set(e, (fired.get(e) ?? 0) + 1));
    for (let i = 0; i < 5; i++) {
      const leader = await theLeader(es);
      assert.equal(leader, es[i]);
      fired.clear();
      const next = nextEvent(es[i + 1], "elected", 1000);
      await leader.close();
      await next;
      await sessions.settled(); // a further (herd) notification, sent at the deletion, has arrived by now
      assert.deepEqual([...fired.entries()].map(([e, n]) => [e.id, n]), [[`p${i + 1}`, 1]], `change ${i}`);
    }
    // A participant in the middle leaving wakes only its successor.
    fired.clear();
    await es[7].close();
    await until("p8 re-checks", () => fired.size > 0, 1000);
    await sessions.settled();
    assert.deepEqual([...fired.entries()].map(([e, n]) => [e.id, n]), [["p8", 1]]);
    assert.equal(leaders(es).length, 1);
    assert.equal(es[5].isLeader, true);
    await Promise.all(es.map((e) => e.close()));
  }, 30_000);

  it("orders by the sequence after the last 'latch-', not by the whole name, and ignores other children", async () => {
    const path = `${root}/order`;
    const other = await client();
    const ours = await participants(path, 1);
    await theLeader(ours);
    // A later candidate whose name sorts first ("_a" < "_c") must not take over.
    const early = await other.create(`${path}/_a_early-latch-`, "foreign-a", { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    await other.create(`${path}/not-a-candidate`, "x", { mode: CreateMode.EPHEMERAL });
    await other.create(`${path}/x-latch-abc`, "x", { mode: CreateMode.EPHEMERAL });
    await sessions.settled();
    assert.equal(ours[0].isLeader, true);
    assert.deepEqual((await ours[0].participants()).map((p) => p.id), ["p0", "foreign-a"]);
    await ours[0].close();
    await other.delete(early);
    // Now a foreign "zzz-" candidate and a Curator-like one come first; a new participant queues behind them.
    const zzz = await other.create(`${path}/zzz-latch-`, "foreign-z", { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const curator = await other.create(`${path}/_c_${randomUUID()}-latch-`, "curator", { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const late = await participants(path, 1);
    assert.deepEqual((await late[0].participants()).map((p) => p.id), ["foreign-z", "curator", "p0"]);
    assert.equal((await late[0].leader())?.id, "foreign-z");
    await sessions.settled();
    assert.equal(late[0].isLeader, false);
    await other.delete(zzz);
    await sessions.settled();
    assert.equal(late[0].isLeader, false, "the Curator-like candidate is still ahead");
    const elected = nextEvent(late[0], "elected", 1000);
    await other.delete(curator);
    await elected;
    await late[0].close();
  }, 30_000);

  it("fencing: transaction() commits while leading and is refused once leadership is gone", async () => {
    const es = await participants(`${root}/fence`, 2);
    const leader = await theLeader(es);
    const admin = await client();
    const resource = `${root}/fence-resource`;
    await admin.create(resource, "0");
    const results = await leader.transaction().setData(resource, "1").commit();
    assert.equal(results.length, 1);
    assert.equal(results[0].type, "setData");
    const tx = es[1].transaction().setData(resource, "follower");
    await assert.rejects(tx.commit(), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
    const prepared = leader.transaction().setData(resource, "2");
    await leader.resign();
    await assert.rejects(prepared.commit(), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NOAUTH);
    assert.equal(new TextDecoder().decode((await admin.getData(resource)).data!), "1");
    await theLeader(es);
    assert.equal(es[1].isLeader, true);
    await es[1].transaction().setData(resource, "3").commit();
    await Promise.all(es.map((e) => e.close()));
  }, 30_000);

  it("waitForLeadership resolves on election, honours timeout and abort, and run() hands over after fn", async () => {
    const es = await participants(`${root}/wait`, 2);
    await theLeader(es);
    await es[0].waitForLeadership();
    await assert.rejects(es[1].waitForLeadership({ timeout: 100 }), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.OPERATIONTIMEOUT);
    const ac = new AbortController();
    const aborted = es[1].waitForLeadership({ signal: ac.signal });
    ac.abort(new Error("stop"));
    await assert.rejects(aborted, /stop/);
    const order: string[] = [];
    const first = es[0].run(async (signal) => {
      order.push("p0 start");
      await hold(100); // the leader's work takes a while: the second run() must wait for it
      assert.equal(signal.aborted, false);
      order.push("p0 end");
      return 7;
    });
    const second = es[1].run(async () => {
      order.push("p1 start");
    });
    assert.equal(await first, 7);
    await second;
    assert.deepEqual(order, ["p0 start", "p0 end", "p1 start"]);
    // run()'s signal aborts when leadership is revoked under it.
    await theLeader(es);
    const leader = leaders(es)[0];
    const admin = await client();
    const reason = leader.run(
      (signal) =>
        new Promise<string>((resolve) => {
          signal.addEventListener("abort", () => resolve(String((signal.reason as Error).cause)));
          void admin.delete(leader.candidatePath!);
        }),
    );
    assert.equal(await reason, "deleted");
    await Promise.all(es.map((e) => e.close()));
    await assert.rejects(es[0].waitForLeadership(), (e: unknown) => e instanceof ZooKeeperError);
  }, 30_000);
});
