// The second public-API scenario for model-vs-server.test.ts: the ops the first one leaves out (ACLs,
// getEphemerals, getAllChildrenNumber, whoAmI, multiRead, containers, TTL, createWithStat, watch
// removal, persistent watches, getConfig, deleteRecursive, the server line the probes find) and the
// recipes (LeaderElection, GroupMember) on two clients. Logged as relations, never raw zxids or times.
import { AddWatchMode, CreateMode, GroupMember, LeaderElection, Op, ReadOp, WatcherType, type WatchedEvent } from "../../src/index.ts";
import { type Connect, outcomeLog } from "./scenario.ts";

/** What the scenario does: `ttl: false` leaves its TTL create out (for a real server without TTL nodes). */
export const scenarioSettings = { ttl: true };

export async function scenarioOps(connect: Connect, root: string): Promise<string[]> {
  const format = (v: unknown): string => JSON.stringify(v ?? null, (_, x) => (typeof x === "bigint" ? `${x}n` : typeof x === "string" ? x.replaceAll(root, "R") : x));
  const { log, seen, onEvent, nextEvent, step } = outcomeLog(root, format);
  const a = await connect();
  const b = await connect();
  try {
    await step("generation", async () => a.serverFeatures.generation);
    await step("create root", () => a.create(root));
    await step("createWithStat", async () => {
      const { path, stat } = await a.createWithStat(`${root}/n`, "abc");
      return [path, stat.version, stat.dataLength, stat.czxid === stat.mzxid, stat.czxid === stat.pzxid];
    });
    await step("container", () => a.create(`${root}/box`, "", { mode: CreateMode.CONTAINER }));
    await step("container stat", async () => (await a.exists(`${root}/box`))?.ephemeralOwner);
    if (scenarioSettings.ttl) await step("ttl", () => a.create(`${root}/ttl`, "", { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000 }));
    await step("getACL", async () => {
      const { acl, stat } = await a.getACL(`${root}/n`);
      return [acl, stat.aversion];
    });
    await step("setACL bad version", () => a.setACL(`${root}/n`, [{ perms: 31, id: { scheme: "world", id: "anyone" } }], 5));
    await step("setACL", async () => (await a.setACL(`${root}/n`, [{ perms: 31, id: { scheme: "world", id: "anyone" } }], 0)).aversion);
    await step("getACL missing", () => a.getACL(`${root}/missing`));
    await step("ephemerals", async () => {
      await a.create(`${root}/e1`, "", { mode: CreateMode.EPHEMERAL });
      await a.create(`${root}/n/e2`, "", { mode: CreateMode.EPHEMERAL });
      await b.create(`${root}/e3`, "", { mode: CreateMode.EPHEMERAL });
      return [(await a.getEphemerals(root)).sort(), (await b.getEphemerals(root)).sort(), (await a.getEphemerals(`${root}/n`)).sort()];
    });
    await step("getAllChildrenNumber", async () => [await a.getAllChildrenNumber(root), await a.getAllChildrenNumber(`${root}/n`)]);
    await step("getAllChildrenNumber missing", () => a.getAllChildrenNumber(`${root}/missing`));
    await step("whoAmI", async () => (await a.whoAmI()).map((i) => i.scheme));
    await step("multiRead", async () => {
      const r = await a.multiRead([ReadOp.getData(`${root}/n`), ReadOp.getData(`${root}/missing`), ReadOp.getChildren(`${root}/n`)]);
      return r.map((x) => ("error" in x ? `err ${(x as { error: { code: number } }).error.code}` : Object.keys(x).sort().join("+")));
    });
    await step("getChildrenWithStat", async () => {
      const { children, stat } = await a.getChildrenWithStat(root);
      return [children.sort(), stat.numChildren, stat.cversion];
    });
    await step("sync", () => a.sync(root));
    // Watch removal: a one-shot data watch removed before it fires; removing what is not there.
    const gone = onEvent("removed");
    await step("exists watch", async () => (await b.exists(`${root}/n`, gone)) !== null);
    await step("removeWatches", () => b.removeWatches(`${root}/n`, gone, WatcherType.Data));
    await step("removeWatches again", () => b.removeWatches(`${root}/n`, gone, WatcherType.Data));
    await step("removeAllWatches none", () => b.removeAllWatches(`${root}/n`, WatcherType.Children));
    await step("setData after removal", async () => (await a.setData(`${root}/n`, "d")).version);
    // A persistent (not recursive) watch: children changes, data changes and the delete of the node itself.
    await step("persistent", () => b.addWatch(`${root}/n`, AddWatchMode.PERSISTENT, onEvent("pers")));
    let ev = nextEvent();
    await step("create n/c", () => a.create(`${root}/n/c`));
    await ev;
    ev = nextEvent();
    await step("setData n", async () => (await a.setData(`${root}/n`, "e", 1)).version);
    await ev;
    await step("create n/c/d (not seen)", () => a.create(`${root}/n/c/d`));
    await step("child watch on n/c", async () => (await b.getChildren(`${root}/n/c`, onEvent("child"))).length);
    ev = nextEvent();
    await step("delete n/c/d", () => a.delete(`${root}/n/c/d`));
    await ev;
    await step("removeAllWatches persistent", () => b.removeAllWatches(`${root}/n`, WatcherType.Any));
    await step("transaction mixed", async () => (await a.transaction().create(`${root}/t`, "1").delete(`${root}/n/c`).check(`${root}/t`, 0).setData(`${root}/t`, "2", 0).commit()).map((r) => r.type));
    await step("multi errors", () => a.multi([Op.check(`${root}/t`, 0), Op.create(`${root}/t`), Op.setData(`${root}/t`, "x")]));
    await step("getConfig", async () => typeof (await a.getConfig()));
    await step("deleteRecursive", async () => {
      await a.create(`${root}/r`);
      await a.create(`${root}/r/x`);
      await a.create(`${root}/r/x/y`, "1");
      await a.deleteRecursive(`${root}/r`);
      return a.exists(`${root}/r`);
    });
    await step("delete ephemeral parent with child", () => a.delete(`${root}/n`));
    // The recipes on two clients.
    const ea = new LeaderElection(a, `${root}/election`, { id: "a" });
    const eb = new LeaderElection(b, `${root}/election`, { id: "b" });
    ea.on("elected", () => seen.push("a elected"));
    eb.on("elected", () => seen.push("b elected"));
    ea.on("revoked", (why) => seen.push(`a revoked ${why}`));
    await step("a start", async () => (await ea.start(), await ea.waitForLeadership(), ea.isLeader));
    await step("b start", async () => (await eb.start(), eb.isLeader));
    await step("participants", async () => (await eb.participants()).map((p) => [p.id, p.isLeader]));
    await step("leader", async () => (await eb.leader())?.id);
    await step("a resign", async () => (await ea.resign(), await eb.waitForLeadership(), [ea.isLeader, eb.isLeader]));
    await step("tokens grow", async () => eb.token !== undefined);
    const ga = new GroupMember(a, `${root}/group`, { id: "ga" });
    const gb = new GroupMember(b, `${root}/group`, { id: "gb" });
    await step("join", async () => (await ga.join(), await gb.join(), (await ga.members()).map((m) => m.id).sort()));
    await step("leave", async () => (await gb.leave(), (await ga.members()).map((m) => m.id).sort()));
    await step("close recipes", async () => (await ea.close(), await eb.close(), await ga.leave(), eb.isLeader));
    await step("generation after", async () => [a.serverFeatures.generation, b.serverFeatures.generation]);
    // The recipes' parents are containers: the real server reaps the empty ones on its own clock (1 s in
    // the test servers), so whether they are still there is a race, not an outcome; the rest is compared.
    await step("children at end", async () => (await a.getChildren(root)).filter((c) => c !== "election" && c !== "group").sort());
    await step("clean up", async () => {
      await b.close();
      await a.deleteRecursive(root);
    });
    log.push(...seen);
  } finally {
    await a.close();
    await b.close();
  }
  return log;
}
