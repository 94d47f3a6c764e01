// zookeeper-ts's SharedCount, Barrier, DoubleBarrier and SetPartitioner sharing paths with kazoo's Counter,
// Barrier, DoubleBarrier and SetPartitioner (Debian's python3-kazoo; kazoo_recipes.py) on the shared server:
// concurrent increments add up on both encodings, each side's barrier releases the other's waiters, a mixed
// double barrier lets nobody in before all have entered, and a mixed party that members join one by one and leave
// splits a set with no item held twice (its rebalance timeline of states and splits is printed).
// Node only: the partition holds are compared on CLOCK_MONOTONIC, which Node's process.hrtime and Python's
// time.monotonic_ns share (Bun's and Deno's hrtime start at their process start).
import assert from "node:assert/strict";
import { ZooKeeper } from "../../src/index.ts";
import { Barrier, DoubleBarrier, SetPartitioner, SharedCount } from "../../src/recipes/index.ts";
import { kazooPartition } from "../../src/recipes/set-partitioner.ts";
import { describe, it } from "../support/bdd.ts";
import { LineProcess } from "../support/processes/line-process.ts";
import { SharedSessions, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { kazooRecipe } from "./contenders.ts";

const root = uniqueRoot("kazoo-recipes");
const sessions = new SharedSessions();
const running = new Set<LineProcess>();

function kazoo(recipe: string, path: string, ...args: string[]): LineProcess {
  return kazooRecipe(sessions.connectString, recipe, path, args, running);
}

describe("Recipes interop with kazoo: Counter, Barrier, DoubleBarrier, SetPartitioner", () => {
  sessions.hooks(async () => {
    await Promise.all([...running].map((p) => p.kill()));
    await removeRoot(await sessions.client(), root);
  });

  for (const naming of ["kazoo", "curator"] as const) {
    it(`SharedCount (${naming}) and kazoo's Counter${naming === "curator" ? " (support_curator)" : ""}: 2 x 40 increments each side add up`, async () => {
      const path = `${root}/count-${naming}`;
      const ours = await Promise.all([0, 1].map(async () => new SharedCount(await sessions.client(), path, { naming })));
      await ours[0]!.get(); // the znode with our encoding of 0 (kazoo's own would be empty)
      const theirs = [kazoo("counter", path, "40", naming === "curator" ? "curator" : "text"), kazoo("counter", path, "40", naming === "curator" ? "curator" : "text")];
      await Promise.all(ours.map(async (c) => { for (let i = 0; i < 40; i++) await c.increment(); }));
      for (const p of theirs) await p.expect("DONE", 60_000);
      assert.equal((await ours[1]!.get()).value, 160);
    }, 90_000);
  }

  it("Barrier: kazoo's create and remove release our waiter; our remove releases kazoo's wait", async () => {
    const path = `${root}/barrier`;
    await kazoo("barrier-create", path).expect("DONE", 20_000);
    const b = new Barrier(await sessions.client(), path);
    assert.equal(await b.isSet(), true);
    let released = false;
    const waiting = b.wait({ timeout: 20_000 }).then(() => void (released = true));
    await sessions.settled();
    assert.equal(released, false);
    assert.deepEqual(await kazoo("barrier-remove", path).expect("DONE", 20_000), ["True"]);
    await waiting;

    await b.set();
    const waiter = kazoo("barrier-wait", path);
    await waiter.expect("UP", 20_000); // kazoo sees our barrier up
    await b.remove();
    await waiter.expect("CLEARED", 20_000);
  }, 60_000);

  it("DoubleBarrier (kazoo naming) with two kazoo participants: nobody in before the third, all out together", async () => {
    const path = `${root}/double`;
    const admin = await sessions.client();
    const theirs = [kazoo("double", path, "3", "py-a"), kazoo("double", path, "3", "py-b")];
    await until("two kazoo participants", async () => (await admin.getChildren(path).catch(() => [])).length === 2);
    const ours = new DoubleBarrier(await sessions.client(), path, { size: 3, id: "ts", naming: "kazoo" });
    const enteredAt = process.hrtime.bigint();
    assert.deepEqual(theirs.flatMap((p) => p.lines.filter((l) => l.kind === "ENTERED" || l.kind === "ERROR")), [], "nobody in with 2 of 3");
    await ours.enter({ timeout: 20_000 });
    for (const p of theirs) await p.expect("ENTERED", 20_000);
    assert.ok(theirs.every((p) => p.lines.find((l) => l.kind === "ENTERED")!.receivedNs > enteredAt));
    const ids = await Promise.all((await admin.getChildren(path)).filter((c) => c !== "ready").map(async (c) => new TextDecoder().decode((await admin.getData(`${path}/${c}`)).data!)));
    assert.deepEqual(ids.sort(), ["py-a", "py-b", "ts"]);
    theirs[0]!.send("leave");
    let left = false;
    const ourNode = ours.nodePath!;
    const leaving = ours.leave({ timeout: 20_000 }).then(() => void (left = true));
    await until("our participant gone", async () => (await admin.exists(ourNode)) === null); // kazoo's lowest keeps its own until the rest are gone
    await sessions.settled();
    assert.equal(left, false, "py-b is still in");
    theirs[1]!.send("leave");
    await leaving;
    for (const p of theirs) await p.expect("LEFT", 20_000);
  }, 60_000);

  it("SetPartitioner: kazoo and zookeeper-ts members join one by one and leave; after each change the party splits the set as one, never holding an item twice", async () => {
    const path = `${root}/partition`;
    const items = ["i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"];
    const holds: { member: string; item: string; from: bigint; to: bigint }[] = [];
    const open = new Map<string, { items: string[]; from: bigint }>();
    const timeline: string[] = [];
    const t0 = process.hrtime.bigint();
    const note = (member: string, what: string, at: bigint): void => void timeline.push(`${String((at - t0) / 1_000_000n).padStart(6)} ms  ${member.padEnd(4)} ${what}`);
    const acquired = (member: string, list: string[], at: bigint): void => {
      if (open.get(member)?.items.join() === list.join()) return; // reported again: the hold began at the first report
      open.set(member, { items: list, from: at });
      note(member, `acquired [${list.join(" ")}]`, at);
    };
    const gaveUp = (member: string, what: string, at: bigint): void => {
      const o = open.get(member);
      if (o) for (const item of o.items) holds.push({ member, item, from: o.from, to: at });
      open.delete(member);
      note(member, what, at);
    };
    const pys = new Map<string, LineProcess>();
    const joinKazoo = (id: string): void => {
      note(id, "joins (kazoo)", process.hrtime.bigint());
      const p = kazoo("partition", path, id, items.join(","));
      p.onLine((l) => {
        if (l.kind === "ACQUIRED") acquired(id, l.args[1] === "-" ? [] : l.args[1]!.split(","), BigInt(l.args[0]!));
        else if (l.kind === "RELEASE" || l.kind === "FINISHED") gaveUp(id, l.kind.toLowerCase(), BigInt(l.args[0]!));
        else if (l.kind === "ALLOCATING") note(id, "allocating", BigInt(l.args[0]!));
      });
      pys.set(id, p);
    };
    const ts = new Map<string, SetPartitioner>();
    const joinOurs = async (id: string): Promise<void> => {
      note(id, "joins (zookeeper-ts)", process.hrtime.bigint());
      const p = new SetPartitioner(await sessions.client(), path, { set: items, id, settle: 200, reaction: 200 });
      p.on("state", (state) => {
        const at = process.hrtime.bigint();
        if (state === "acquired") acquired(id, [...p.partition], at);
        else if (state === "release") {
          gaveUp(id, "release", at);
          void p.release();
        } else if (state === "allocating") note(id, "allocating", at);
      });
      ts.set(id, p);
      await p.start();
      if (p.state === "allocating") note(id, "allocating", process.hrtime.bigint()); // its first state (no event)
    };
    const stable = async (what: string, ids: string[]): Promise<void> => {
      await until(what, () => ids.every((id) => open.get(id)?.items.join() === kazooPartition(id, ids, items).join()), 30_000);
      assert.deepEqual(ids.flatMap((id) => open.get(id)!.items).sort(), items, "every item held by exactly one member");
      note("--", `settled after "${what}": ${ids.map((id) => `${id}=[${open.get(id)!.items.join(" ")}]`).join(" ")}`, process.hrtime.bigint());
    };
    joinKazoo("py1");
    await stable("py1 alone", ["py1"]);
    await joinOurs("ts2");
    await stable("ts2 joined", ["py1", "ts2"]);
    joinKazoo("py3");
    await stable("py3 joined", ["py1", "ts2", "py3"]);
    await joinOurs("ts4");
    await stable("ts4 joined", ["py1", "ts2", "py3", "ts4"]);
    pys.get("py3")!.send("finish");
    await stable("py3 left", ["py1", "ts2", "ts4"]);
    const ts4 = ts.get("ts4")!;
    gaveUp("ts4", "finish()", process.hrtime.bigint());
    await ts4.finish();
    await stable("ts4 left", ["py1", "ts2"]);
    pys.get("py1")!.send("finish");
    await stable("py1 left", ["ts2"]);
    console.log(`mixed SetPartitioner rebalance timeline (8 items, CLOCK_MONOTONIC):\n${timeline.join("\n")}`);
    const all = [...holds, ...[...open].flatMap(([member, o]) => o.items.map((item) => ({ member, item, from: o.from, to: BigInt(Number.MAX_SAFE_INTEGER) * 1000n })))];
    const overlaps = all.flatMap((a) => all.filter((b) => b !== a && b.item === a.item && b.member !== a.member && a.from <= b.from && b.from < a.to).map((b) => `${a.item}: ${a.member} and ${b.member}`));
    assert.deepEqual(overlaps, []);
    await ts.get("ts2")!.finish();
    await pys.get("py1")!.expect("FINISHED", 20_000);
  }, 120_000);
});
