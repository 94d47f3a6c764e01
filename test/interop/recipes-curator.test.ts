// zookeeper-ts's SharedCount, Barrier and DoubleBarrier sharing paths with Apache Curator's SharedCount,
// DistributedBarrier and DistributedDoubleBarrier (Debian's libcurator-recipes-java; CuratorRecipes.java) on the
// shared server: concurrent increments add up, each side's barrier releases the other's waiters, and a mixed
// double barrier lets nobody in before all have entered and nobody out before all have left.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Barrier, DoubleBarrier, SharedCount } from "../../src/recipes/index.ts";
import { describe, it, beforeAll } from "../support/bdd.ts";
import { LineProcess } from "../support/processes/line-process.ts";
import { SharedSessions, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { JVM_FLAGS, compileJava, curatorClasspath } from "./java-participant.ts";

const SOURCE = fileURLToPath(new URL("./CuratorRecipes.java", import.meta.url));
const root = uniqueRoot("curator-recipes");
const sessions = new SharedSessions();
const running = new Set<LineProcess>();
let classpath = "";

function curator(recipe: string, path: string, ...args: string[]): LineProcess {
  const argv = [...JVM_FLAGS, "-cp", classpath, "CuratorRecipes", sessions.connectString, recipe, path, ...args];
  return new LineProcess(`curator-${recipe}`, spawn("java", argv, { stdio: ["pipe", "pipe", "pipe"] }), running);
}

describe("Recipes interop with Curator: SharedCount, DistributedBarrier, DistributedDoubleBarrier", () => {
  sessions.hooks(async () => {
    await Promise.all([...running].map((p) => p.kill()));
    await removeRoot(await sessions.client(), root);
  });
  beforeAll(async () => {
    classpath = [await compileJava(SOURCE), ...(await curatorClasspath())].join(":");
  }, 120_000);

  it("SharedCount: 2 x 30 increments by Curator and 2 x 30 by zookeeper-ts add up to 120", async () => {
    const path = `${root}/count`;
    const ours = await Promise.all([0, 1].map(async () => new SharedCount(await sessions.client(), path)));
    const theirs = [curator("count", path, "30"), curator("count", path, "30")];
    await Promise.all(ours.map(async (c) => { for (let i = 0; i < 30; i++) await c.increment(); }));
    for (const p of theirs) await p.expect("DONE", 60_000);
    assert.equal((await ours[0]!.get()).value, 120);
  }, 120_000);

  it("Barrier: Curator's setBarrier and removeBarrier drive our wait; our remove releases Curator's waitOnBarrier", async () => {
    const path = `${root}/barrier`;
    await curator("barrier-set", path).expect("DONE", 30_000);
    const b = new Barrier(await sessions.client(), path);
    assert.equal(await b.isSet(), true);
    let released = false;
    const waiting = b.wait({ timeout: 30_000 }).then(() => void (released = true));
    await sessions.settled();
    assert.equal(released, false);
    await curator("barrier-remove", path).expect("DONE", 30_000);
    await waiting;

    await b.set();
    const waiter = curator("barrier-wait", path);
    await waiter.expect("UP", 30_000);
    await b.remove();
    await waiter.expect("CLEARED", 30_000);
  }, 120_000);

  it("DoubleBarrier (curator naming) with two Curator participants: nobody in before the third, nobody out before the last", async () => {
    const path = `${root}/double`;
    const admin = await sessions.client();
    const theirs = [curator("double", path, "3"), curator("double", path, "3")];
    await until("two Curator participants", async () => (await admin.getChildren(path).catch(() => [])).length === 2, 60_000);
    const ours = new DoubleBarrier(await sessions.client(), path, { size: 3, id: "ts", naming: "curator" });
    const enteredAt = process.hrtime.bigint();
    assert.deepEqual(theirs.flatMap((p) => p.lines.filter((l) => l.kind === "ENTERED" || l.kind === "ERROR")), [], "nobody in with 2 of 3");
    await ours.enter({ timeout: 30_000 });
    for (const p of theirs) await p.expect("ENTERED", 30_000);
    assert.ok(theirs.every((p) => p.lines.find((l) => l.kind === "ENTERED")!.receivedNs > enteredAt));
    let left = false;
    const ourNode = ours.nodePath!;
    const leaving = ours.leave({ timeout: 30_000 }).then(() => void (left = true));
    theirs[0]!.send("leave");
    await until("our participant gone", async () => (await admin.exists(ourNode)) === null); // Curator's lowest keeps its own until the rest are gone
    await sessions.settled();
    assert.equal(left, false, "a Curator participant is still in");
    theirs[1]!.send("leave");
    await leaving;
    for (const p of theirs) await p.expect("LEFT", 30_000);
    assert.deepEqual(await admin.getChildren(path), [], "ready is gone with the last");
  }, 120_000);
});
