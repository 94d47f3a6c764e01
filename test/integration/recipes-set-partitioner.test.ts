// SetPartitioner against a real server: members join, leave (finish) and crash (their session closes); once the
// party is stable every item is held by exactly one member, as kazoo splits it, and from each member's own log
// (the items it reports from "acquired" until it calls release(), finish() or crashes) no item is ever held by
// two members at once. The rebalance timeline is printed.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, isZooKeeperError, type ZooKeeper } from "../../src/index.ts";
import { type PartitionState, PartitionTimeoutError, SetPartitioner } from "../../src/recipes/index.ts";
import { kazooPartition } from "../../src/recipes/set-partitioner.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

const root = `/t-recipes-partition-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();
const ITEMS = Array.from({ length: 12 }, (_, i) => `q${String(i).padStart(2, "0")}`);

interface Hold { member: string; item: string; from: number; to: number }

/** Members that release as soon as told, each logging what it holds and when, on this process's clock. */
class Party {
  readonly t0 = performance.now();
  readonly timeline: string[] = [];
  readonly holds: Hold[] = [];
  readonly members = new Map<string, { zk: ZooKeeper; p: SetPartitioner; open: Hold[] }>();

  private readonly path: string;

  constructor(path: string) {
    this.path = path;
  }

  private note(id: string, what: string): void {
    this.timeline.push(`${(performance.now() - this.t0).toFixed(0).padStart(6)} ms  ${id.padEnd(3)} ${what}`);
  }

  /** Ends the member's holds: it stops using its items before it releases them. */
  private close(m: { open: Hold[] }): void {
    const now = performance.now();
    for (const h of m.open) this.holds.push({ ...h, to: now });
    m.open = [];
  }

  async join(id: string, connectString?: string): Promise<void> {
    const zk = await sessions.client({ connectString });
    const p = new SetPartitioner(zk, this.path, { set: ITEMS, id, settle: 200, reaction: 200 });
    const m = { zk, p, open: [] as Hold[] };
    this.members.set(id, m);
    p.on("state", (state: PartitionState) => {
      if (state === "acquired") {
        const from = performance.now();
        m.open = p.partition.map((item) => ({ member: id, item, from, to: Infinity }));
        this.note(id, `acquired [${p.partition.join(" ")}]`);
      } else if (state === "release") {
        this.close(m);
        this.note(id, "release: gives its items up");
        void p.release();
      } else this.note(id, state);
    });
    await p.start();
  }

  async finish(id: string): Promise<void> {
    const m = this.members.get(id)!;
    this.close(m);
    this.note(id, "finish()");
    this.members.delete(id);
    await m.p.finish();
  }

  async crash(id: string): Promise<void> {
    const m = this.members.get(id)!;
    this.close(m);
    this.note(id, "crash: its session closes");
    this.members.delete(id);
    await m.zk.close();
  }

  /** Every live member acquired, and their partitions are kazoo's split of the items among them. */
  async stable(what: string): Promise<void> {
    await until(what, () => {
      const ids = [...this.members.keys()];
      return [...this.members].every(([id, m]) => m.p.state === "acquired" && m.p.partition.join() === kazooPartition(id, ids, ITEMS).join());
    });
    const held = [...this.members.values()].flatMap((m) => m.p.partition).sort();
    assert.deepEqual(held, ITEMS, "every item held by exactly one member");
    this.note("--", `stable: ${what}`);
  }

  /** From the members' own logs: two holds of one item never overlap. */
  overlaps(): string[] {
    const all = [...this.holds, ...[...this.members.values()].flatMap((m) => m.open)];
    const out: string[] = [];
    for (const a of all) for (const b of all) if (a !== b && a.item === b.item && a.member !== b.member && a.from < b.to && b.from < a.to && a.from <= b.from) out.push(`${a.item}: ${a.member} and ${b.member}`);
    return out;
  }
}

describe("SetPartitioner", () => {
  sessions.hooks(async () => removeRoot(await sessions.client(), root));

  it("splits the set as kazoo does, rebalances on join, leave and crash, and never gives an item to two members", async () => {
    const party = new Party(`${root}/queues`);
    await Promise.all(["w1", "w2", "w3"].map((id) => party.join(id)));
    await party.stable("w1 w2 w3");
    await party.join("w4");
    await party.stable("w4 joined");
    await party.finish("w2");
    await party.stable("w2 finished");
    await party.crash("w3");
    await party.stable("w3 crashed");
    await party.join("w5");
    await party.join("w6");
    await party.stable("w5 and w6 joined");
    console.log(`SetPartitioner rebalance timeline (12 items):\n${party.timeline.join("\n")}`);
    assert.deepEqual(party.overlaps(), []);
    assert.ok(party.holds.length >= 12, `${party.holds.length} holds ended`);
    const admin = await sessions.client();
    const party_ = (await admin.getChildren(`${root}/queues/party`)).sort();
    assert.equal(party_.length, 4);
    assert.ok(party_.every((n) => /^[0-9a-f]{32}-w[1-6]$/.test(n)), party_.join(","));
    const q00 = await admin.getChildren(`${root}/queues/locks/q00`);
    assert.ok(q00.length === 1 && /^[0-9a-f]{32}__lock__\d{10}$/.test(q00[0]!), q00.join(","));
    for (const id of [...party.members.keys()]) await party.finish(id);
    assert.deepEqual(await admin.getChildren(`${root}/queues/party`).catch(() => []), []);
  }, 90_000);

  it("a member cut off from the server goes to release, and takes its items back once reconnected; the other keeps its own", async () => {
    const party = new Party(`${root}/cut`);
    const proxy = await sessions.proxy();
    await party.join("a", proxy.connectString);
    await party.join("b");
    await party.stable("a b");
    const a = party.members.get("a")!;
    const b = party.members.get("b")!;
    const aItems = [...a.p.partition];
    const bStates: PartitionState[] = [];
    b.p.on("state", (s) => bStates.push(s));
    proxy.refuse(true);
    proxy.cut();
    await until("a released its items", () => a.p.state === "allocating");
    proxy.refuse(false);
    await party.stable("a is back");
    console.log(`SetPartitioner cut-off timeline:\n${party.timeline.join("\n")}`);
    assert.deepEqual(a.p.partition, aItems);
    assert.deepEqual(bStates, [], "b's share never changed");
    assert.deepEqual(party.overlaps(), []);
    for (const id of ["a", "b"]) await party.finish(id);
  }, 60_000);

  it("waitForAcquire resolves with the partition, times out with PartitionTimeoutError, rejects after finish()", async () => {
    const zk = await sessions.client();
    const path = `${root}/alone`;
    const p = new SetPartitioner(zk, path, { set: ["b", "a", "b"], id: "solo", settle: 0, reaction: 100 });
    assert.deepEqual(p.set, ["a", "b"]);
    await assert.rejects(p.waitForAcquire({ timeout: 0 }), (e: unknown) => e instanceof PartitionTimeoutError);
    await p.start();
    assert.deepEqual(await p.waitForAcquire({ timeout: 10_000 }), ["a", "b"]);
    await p.finish();
    assert.equal(p.state, "failure");
    await assert.rejects(p.waitForAcquire(), (e: unknown) => isZooKeeperError(e, ErrorCode.APIERROR));
    assert.throws(() => new SetPartitioner(zk, path, { set: ["a/b"], id: "x" }), (e: unknown) => isZooKeeperError(e, ErrorCode.BADARGUMENTS));
  }, 30_000);
});
