// Partitions between the servers of a real ensemble (test/support/servers/zk-partition.ts: every server in a
// network namespace of its own, quorum/election links over bridges we cut; client links stay up).
// Each scenario states what ZooKeeper and our client must do, checks it, and adds a row to the
// scenario table printed at the end. tickTime 500, syncLimit 6: a server cut from its quorum
// notices within 3 s (plus election time).
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { LeaderElection } from "../../src/recipes/index.ts";
import { startPartitionedEnsemble, type PartitionedEnsemble } from "../support/servers/zk-partition.ts";
import { uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { connectOn } from "../support/servers/zk-ensemble.ts";

/** A row of the scenario table, printed by afterAll (and copied into the engineer's note). */
interface Row {
  scenario: string;
  expected: string;
  observed: string;
}

function printTable(title: string, rows: Row[]): void {
  const lines = [`\n${title}`, "| scenario | expected | observed |", "|---|---|---|", ...rows.map((r) => `| ${r.scenario} | ${r.expected} | ${r.observed} |`)];
  console.log(lines.join("\n"));
}

const rows: Row[] = [];
const text = (d: Uint8Array | null) => new TextDecoder().decode(d ?? new Uint8Array());

describe("partitions between servers (3 servers in network namespaces)", () => {
  let ens: PartitionedEnsemble | undefined;
  afterAll(async () => {
    await ens?.close();
    printTable("ensemble partitions: expected vs observed", rows);
  }, 60_000);

  it("a client on an isolated follower moves to the majority within its session", async () => {
    ens = await startPartitionedEnsemble({ size: 3 });
    const leader = await ens.leader();
    const follower = ens.servers.find((s) => s !== leader)!;
    const zk = await connectOn(follower, ens.connectString);
    try {
      const root = uniqueRoot("iso-f");
      await zk.create(root, "before");
      const session = zk.sessionId;
      const t0 = Date.now();
      ens.isolate(follower.id);
      await until("the isolated follower to stop serving", async () => (await follower.mode()) === null, 30_000);
      const stopped = Date.now() - t0;
      await until("the client on another server", () => zk.state === "connected" && zk.remoteAddress !== follower.connectString, 30_000);
      const moved = Date.now() - t0;
      assert.equal(zk.sessionId, session, "same session");
      await zk.setData(root, "after");
      assert.equal(text((await zk.getData(root)).data), "after");
      rows.push({ scenario: "client on isolated follower", expected: "follower stops serving; client moves to the majority, same session, writes work",
        observed: `stopped serving after ${stopped} ms; client on the majority after ${moved} ms, same session, write ok` });
    } finally {
      await zk.close();
      ens.heal();
      await ens.waitForQuorum();
    }
  }, 180_000);

  it("a client on an isolated leader moves to the new majority leader's side", async () => {
    const old = await ens!.leader();
    const zk = await connectOn(old, ens!.connectString);
    try {
      const root = uniqueRoot("iso-l");
      await zk.create(root, "before");
      const session = zk.sessionId;
      const t0 = Date.now();
      ens!.isolate(old.id);
      await until("a new leader on the majority", async () => {
        const modes = await ens!.modes();
        return ens!.servers.some((s, i) => s !== old && modes[i] === "leader");
      }, 60_000);
      const elected = Date.now() - t0;
      await until("the old leader to stop serving", async () => (await old.mode()) === null, 30_000);
      await until("the client on the majority", () => zk.state === "connected" && zk.remoteAddress !== old.connectString, 30_000);
      const moved = Date.now() - t0;
      assert.equal(zk.sessionId, session);
      await zk.setData(root, "after");
      assert.equal(text((await zk.getData(root)).data), "after");
      rows.push({ scenario: "client on isolated leader", expected: "old leader stops serving; majority elects a new one; client follows, same session",
        observed: `new leader after ${elected} ms; client on the majority after ${moved} ms, same session, write ok` });
    } finally {
      await zk.close();
      ens!.heal();
      await ens!.waitForQuorum();
    }
  }, 180_000);

  it("sync() + read on a lagging follower returns the latest acknowledged write", async () => {
    const leader = await ens!.leader();
    const follower = ens!.servers.find((s) => s !== leader)!;
    const writer = await connectOn(leader, ens!.connectString);
    const reader = await connectOn(follower, ens!.connectString);
    try {
      const path = uniqueRoot("lag");
      await writer.create(path, "v0");
      await reader.sync(path);
      assert.equal(text((await reader.getData(path)).data), "v0");
      // Cut the follower's quorum link for well under syncLimit × tickTime (3 s): it keeps serving
      // its clients but receives none of the proposals the majority acknowledges meanwhile.
      ens!.isolate(follower.id);
      let last = "";
      for (let i = 1; i <= 10; i++) await writer.setData(path, (last = `v${i}`));
      const stale = text((await reader.getData(path)).data);
      const synced = reader.sync(path).then(() => reader.getData(path));
      ens!.heal();
      const fresh = text((await synced).data);
      assert.equal(stale, "v0", "the cut-off follower had not seen the writes (a plain read is stale)");
      assert.equal(fresh, last, "sync() then read sees the latest write");
      assert.equal(reader.remoteAddress, follower.connectString, "read on the lagging follower itself");
      rows.push({ scenario: "sync()+read on lagging follower", expected: "plain read may be stale; sync()+read returns the latest acknowledged write",
        observed: `plain read "${stale}" (stale), after sync "${fresh}" = latest of 10 writes` });
    } finally {
      await writer.close();
      await reader.close();
      ens!.heal();
    }
  }, 120_000);

  it("a linearizable read on a lagging follower returns the latest acknowledged write, never the stale one", async () => {
    const leader = await ens!.leader();
    const follower = ens!.servers.find((s) => s !== leader)!;
    const writer = await connectOn(leader, ens!.connectString);
    const reader = await connectOn(follower, ens!.connectString);
    try {
      const path = uniqueRoot("lin");
      await writer.create(path, "v0");
      await reader.sync(path);
      ens!.isolate(follower.id);
      let last = "";
      for (let i = 1; i <= 10; i++) await writer.setData(path, (last = `v${i}`));
      const stale = text((await reader.getData(path)).data);
      // The follower answers the read from its own stale copy; the check that follows is ordered by the leader,
      // so it can only pass once the version read is the current one.
      const linearizable = reader.getData(path, undefined, { linearizable: true });
      ens!.heal();
      const got = await linearizable;
      assert.equal(stale, "v0", "a plain read on the cut-off follower is stale");
      assert.equal(text(got.data), last, "the linearizable read returns the latest write");
      assert.equal(got.stat.version, 10);
      assert.equal(await reader.exists(`${path}/none`, undefined, { linearizable: true }), null);
      assert.equal(reader.remoteAddress, follower.connectString, "read on the lagging follower itself");
      rows.push({ scenario: "linearizable read on lagging follower", expected: "never the stale value: the check the leader orders fails until the read is current",
        observed: `plain read "${stale}" (stale), linearizable read "${text(got.data)}" = latest of 10 writes` });
    } finally {
      await writer.close();
      await reader.close();
      ens!.heal();
    }
  }, 120_000);

  it("one-way link (the leader's packets to a follower dropped): the follower leaves, the quorum serves", async () => {
    const leader = await ens!.leader();
    const [deaf, other] = ens!.servers.filter((s) => s !== leader);
    const zk = await connectOn(other!, ens!.connectString);
    try {
      const path = uniqueRoot("oneway");
      await zk.create(path, "before");
      const t0 = Date.now();
      ens!.dropOneWay(leader.id, deaf!.id);
      await until("the deaf follower to stop serving", async () => (await deaf!.mode()) === null, 30_000);
      const stopped = Date.now() - t0;
      await zk.setData(path, "during");
      const modes = await ens!.modes();
      assert.equal(modes[leader.id - 1], "leader", "the leader kept its quorum");
      ens!.heal();
      await ens!.waitForQuorum();
      const back = await ZooKeeper.connect(deaf!.connectString, { sessionTimeout: 10_000, connectTimeout: 30_000 });
      const seen = text((await back.getData(path)).data);
      await back.close();
      assert.equal(seen, "during", "the healed follower caught up");
      rows.push({ scenario: "one-way link leader → follower dropped", expected: "the follower stops serving; leader + other follower keep serving; after heal it catches up",
        observed: `follower stopped serving after ${stopped} ms; write during the cut ok; leader unchanged; healed follower reads "${seen}"` });
    } finally {
      await zk.close();
      ens!.heal();
      await ens!.waitForQuorum();
    }
  }, 120_000);
});

describe("a LeaderElection leader on the minority side (5 servers, split 2 | 3)", () => {
  let ens: PartitionedEnsemble | undefined;
  afterAll(async () => {
    await ens?.close();
    printTable("ensemble partitions (5 servers): expected vs observed", rows.filter((r) => r.scenario.includes("minority")));
  }, 60_000);

  it("revokes before any successor is elected on the majority (the margin is measured)", async () => {
    ens = await startPartitionedEnsemble({ size: 5 });
    const minority = [1, 2];
    const majority = [3, 4, 5];
    const only = (ids: number[]) => ids.map((id) => ens!.server(id).connectString).join(",");
    const path = `${uniqueRoot("minority")}/election`;
    // The old leader's client knows only the minority servers, so it cannot move; the successor's
    // only the majority. A 6 s session: longer than the 3 s in which a server notices its lost quorum.
    const zkOld = await ZooKeeper.connect(only(minority), { sessionTimeout: 6000, connectTimeout: 30_000 });
    const zkNew = await ZooKeeper.connect(only(majority), { sessionTimeout: 20_000, connectTimeout: 30_000 });
    const oldE = new LeaderElection(zkOld, path, { id: "old" });
    const newE = new LeaderElection(zkNew, path, { id: "new" });
    try {
      await oldE.start();
      await oldE.waitForLeadership({ timeout: 30_000 });
      await newE.start();
      let revokedAt = 0;
      let electedAt = 0;
      oldE.on("revoked", () => (revokedAt ||= Date.now()));
      newE.on("elected", () => (electedAt ||= Date.now()));
      const t0 = Date.now();
      ens.partition([minority, majority]);
      await newE.waitForLeadership({ timeout: 60_000 });
      assert.ok(revokedAt > 0, "the old leader revoked");
      assert.ok(revokedAt < electedAt, `revoked ${revokedAt - t0} ms, successor elected ${electedAt - t0} ms`);
      assert.equal(oldE.isLeader, false);
      const margin = electedAt - revokedAt;
      rows.push({ scenario: "LeaderElection leader on the minority (2|3)", expected: "old leader revokes before the majority elects a successor",
        observed: `revoked at +${revokedAt - t0} ms, successor elected at +${electedAt - t0} ms: margin ${margin} ms` });
      console.log(`[minority-leader] revoke +${revokedAt - t0} ms, successor +${electedAt - t0} ms, margin ${margin} ms`);
    } finally {
      ens.heal();
      await oldE.close().catch(() => {});
      await newE.close().catch(() => {});
      await zkOld.close();
      await zkNew.close();
    }
  }, 180_000);
});

describe("a readOnly client on the minority side (3 servers, local sessions)", () => {
  let ens: PartitionedEnsemble | undefined;
  afterAll(async () => {
    await ens?.close();
    printTable("ensemble partitions (read-only): expected vs observed", rows.filter((r) => r.scenario.includes("readOnly")));
  }, 60_000);

  it("reads from the isolated server and never leads", async () => {
    ens = await startPartitionedEnsemble({ size: 3, readOnly: true });
    const setup = await ZooKeeper.connect(ens.connectString, { sessionTimeout: 10_000 });
    const root = uniqueRoot("ro");
    await setup.create(root, "seen");
    await setup.close();
    const leader = await ens.leader();
    const lone = ens.servers.find((s) => s !== leader)!;
    ens.isolate(lone.id);
    await until("the isolated server to turn read-only", async () => (await lone.fourLetter("isro").catch(() => "")) === "ro", 60_000);
    const zk = await ZooKeeper.connect(lone.connectString, { readOnly: true, sessionTimeout: 10_000, connectTimeout: 30_000 });
    const majority = ens.servers.filter((s) => s !== lone).map((s) => s.connectString).join(",");
    const zkMaj = await ZooKeeper.connect(majority, { sessionTimeout: 10_000, connectTimeout: 30_000 });
    const roE = new LeaderElection(zk, `${root}/election`, { id: "ro" });
    const rwE = new LeaderElection(zkMaj, `${root}/election`, { id: "rw" });
    let roElected = false;
    roE.on("elected", () => (roElected = true));
    try {
      assert.equal(zk.state, "connectedReadOnly");
      await zk.sync(root).catch(() => {}); // may be refused read-only; the read below is what counts
      const value = text((await zk.getData(root)).data);
      assert.equal(value, "seen");
      const err = await roE.start().then(() => null, (e: unknown) => e);
      assert.ok(err instanceof ZooKeeperError && err.codeName === "NOTREADONLY", `start on a read-only session: ${String(err)}`);
      await rwE.start();
      await rwE.waitForLeadership({ timeout: 30_000 });
      assert.equal(roE.isLeader, false);
      assert.equal(roElected, false);
      rows.push({ scenario: "readOnly client on the minority", expected: "connectedReadOnly; reads work; LeaderElection.start fails NOTREADONLY, never leads",
        observed: `state connectedReadOnly, read "${value}", start rejected ${err.codeName}, isLeader false; majority participant leads` });
    } finally {
      await roE.close().catch(() => {});
      await rwE.close().catch(() => {});
      await zk.close();
      await zkMaj.close();
      ens.heal();
    }
  }, 180_000);
});
