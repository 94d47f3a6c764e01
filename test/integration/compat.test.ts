// What the running server generation can do, probed feature by feature with a fresh client each, and
// recorded as JSON (docs/records/compat/<line>.json) for `npm run compat-table`, which renders docs/server-lines.md's
// compatibility table from those files. Each probe also asserts its outcome against what is documented
// for the line (REAL-SERVERS.md, ZooKeeper's release notes), so a wrong probe or a regression fails.
// "unsupported" = the server (or the client, knowing the server) answered UNIMPLEMENTED or MARSHALLINGERROR.
// Node only (vitest): probes the client cannot express yet are skipped at run time, visibly.
import { afterAll, beforeAll, describe, it } from "vitest";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AddWatchMode, CreateMode, EventType, ReadOp, WatcherType, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import type { WatchedEvent } from "../../src/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { compareVersions, serverLine } from "../support/servers/zk-line.ts";
import { fourLetterWordOff, onSession, removeRoot, serverWatches, ttlNodesOff, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

type Outcome = "supported" | "unsupported" | "removed" | "left on server" | "shadowed" | "delivered" | "zxid" | "-1";
const T = 30_000;
const { line, version } = serverLine();
const from = (min: string): boolean => compareVersions(version, min) >= 0;
const results: Record<string, { outcome: Outcome; expected: Outcome; note?: string }> = {};

async function client(): Promise<ZooKeeper> {
  return ZooKeeper.connect((await sharedServer()).connectString, { sessionTimeout: 10_000 });
}

/** The file's root: each probe's node is a child of it; made before the probes, deleted after them. */
const fileRoot = uniqueRoot("compat");
let probes = 0;

/** Runs one probe on a fresh client; UNIMPLEMENTED / MARSHALLINGERROR mean the server cannot take it. */
async function probe(fn: (zk: ZooKeeper, root: string) => Promise<Outcome>): Promise<Outcome> {
  const zk = await client();
  const root = `${fileRoot}/p${++probes}`;
  try {
    await zk.create(root);
    return await fn(zk, root);
  } catch (e) {
    if (e instanceof ZooKeeperError && (e.codeName === "UNIMPLEMENTED" || e.codeName === "MARSHALLINGERROR")) return "unsupported";
    throw e;
  } finally {
    await zk.close();
  }
}

function check(feature: string, outcome: Outcome, expected: Outcome, note?: string): void {
  results[feature] = { outcome, expected, ...(note ? { note } : {}) };
  assert.equal(outcome, expected, `${feature} on ZooKeeper ${version}`);
}

const supportedFrom = (min: string): Outcome => (from(min) ? "supported" : "unsupported");

describe(`compatibility probes on ZooKeeper ${version} (line ${line})`, () => {
  beforeAll(async () => onSession((await sharedServer()).connectString, (zk) => zk.create(fileRoot)));
  afterAll(async () => onSession((await sharedServer()).connectString, (zk) => removeRoot(zk, fileRoot)));
  afterAll(() => {
    const dir = fileURLToPath(new URL("../../docs/records/compat/", import.meta.url));
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${line}.json`), JSON.stringify({ line, version, features: results }, null, 2) + "\n");
  });

  it("container create", async () => {
    const o = await probe(async (zk, root) => (await zk.create(`${root}/c`, null, { mode: CreateMode.CONTAINER }), "supported"));
    check("container create", o, supportedFrom("3.5.3"));
  }, T);

  it("TTL create (extendedTypesEnabled)", async () => {
    const off = from("3.5.3") ? await onSession((await sharedServer()).connectString, (zk) => ttlNodesOff(zk, fileRoot)) : null;
    if (off !== null) return void console.log(`[compat] TTL create: skipped: ${off}`);
    const o = await probe(async (zk, root) => (await zk.create(`${root}/t`, null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 60_000 }), "supported"));
    check("TTL create", o, supportedFrom("3.5.3"));
  }, T);

  it("create2 (createWithStat)", async () => {
    const o = await probe(async (zk, root) => {
      const { stat } = await zk.createWithStat(`${root}/s`, "x");
      assert.equal(stat.dataLength, 1);
      return "supported";
    });
    // On 3.4 the client may emulate it with create + exists (not atomic): that also counts as usable.
    if (!from("3.5") && o === "supported") return check("create2", o, o, "client emulation (create + exists)");
    check("create2", o, supportedFrom("3.5"));
  }, T);

  for (const [name, mode] of [["addWatch persistent", AddWatchMode.PERSISTENT], ["addWatch persistent recursive", AddWatchMode.PERSISTENT_RECURSIVE]] as const) {
    it(name, async () => {
      const o = await probe(async (zk, root) => {
        const events: WatchedEvent[] = [];
        await zk.addWatch(root, mode, (e) => events.push(e));
        await zk.setData(root, "1");
        await until("the persistent watch fires", () => events.some((e) => e.type === EventType.NodeDataChanged));
        return "supported";
      });
      check(name, o, supportedFrom("3.6"));
    }, T);
  }

  for (const [name, mode, type] of [
    ["removeWatches persistent (type 4)", AddWatchMode.PERSISTENT, WatcherType.Persistent],
    ["removeWatches persistent recursive (type 5)", AddWatchMode.PERSISTENT_RECURSIVE, WatcherType.PersistentRecursive],
    ["removeWatches persistent recursive with Any (type 3)", AddWatchMode.PERSISTENT_RECURSIVE, WatcherType.Any],
  ] as const) {
    it(`${name}: nothing left on the server (wchc)`, async () => {
      const off = await fourLetterWordOff((await sharedServer()).connectString, "wchc");
      if (off !== null) return void console.log(`[compat] ${name}: skipped: ${off}`);
      const o = await probe(async (zk, root) => {
        await zk.addWatch(root, mode, () => {});
        assert.ok((await serverWatches((await sharedServer()).connectString, zk)).includes(root), "wchc lists the watch just added");
        await zk.removeAllWatches(root, type);
        return (await serverWatches((await sharedServer()).connectString, zk)).includes(root) ? "left on server" : "removed";
      });
      check(name, o, from("3.6") ? "removed" : "unsupported");
    }, T);
  }

  it("removeWatches of a one-shot data watch (type 2)", async () => {
    const off = await fourLetterWordOff((await sharedServer()).connectString, "wchc");
    if (off !== null) return void console.log(`[compat] removeWatches data (type 2): skipped: ${off}`);
    const o = await probe(async (zk, root) => {
      await zk.getData(root, () => {});
      await zk.removeAllWatches(root, WatcherType.Data);
      return (await serverWatches((await sharedServer()).connectString, zk)).includes(root) ? "left on server" : "removed";
    });
    check("removeWatches data (type 2)", o, from("3.5") ? "removed" : "unsupported");
  }, T);

  it("getEphemerals", async () => {
    const o = await probe(async (zk, root) => {
      await zk.create(`${root}/e`, null, { mode: CreateMode.EPHEMERAL });
      assert.deepEqual(await zk.getEphemerals(root), [`${root}/e`]);
      return "supported";
    });
    check("getEphemerals", o, supportedFrom("3.6"));
  }, T);

  it("getAllChildrenNumber", async () => {
    const o = await probe(async (zk, root) => {
      await zk.create(`${root}/a`);
      await zk.create(`${root}/a/b`);
      assert.equal(await zk.getAllChildrenNumber(root), 2);
      return "supported";
    });
    check("getAllChildrenNumber", o, supportedFrom("3.6"));
  }, T);

  it("whoAmI", async () => {
    const o = await probe(async (zk) => {
      const ids = await zk.whoAmI();
      assert.ok(ids.some((i) => i.scheme === "ip" && i.id === "127.0.0.1"), JSON.stringify(ids));
      return "supported";
    });
    check("whoAmI", o, supportedFrom("3.7"));
  }, T);

  it("multiRead", async () => {
    const o = await probe(async (zk, root) => {
      const res = await zk.multiRead([ReadOp.getData(root), ReadOp.getChildren(root)]);
      assert.equal(res.length, 2);
      return "supported";
    });
    check("multiRead", o, supportedFrom("3.6"));
  }, T);

  it("getConfig", async () => {
    const o = await probe(async (zk) => {
      await zk.getConfig();
      return "supported";
    });
    check("getConfig", o, supportedFrom("3.5"));
  }, T);

  it("notification zxid", async () => {
    const o = await probe(async (zk, root) => {
      const events: WatchedEvent[] = [];
      await zk.getData(root, (e) => events.push(e));
      await zk.setData(root, "z");
      await until("the data watch fires", () => events.length > 0);
      const ev = events[0] as WatchedEvent;
      return ev.zxid !== undefined && ev.zxid !== -1n ? "zxid" : "-1";
    });
    check("notification zxid", o, from("3.9") ? "zxid" : "-1");
  }, T);

  it("a recursive watch shadows a one-shot child watch on the same path (ZOOKEEPER-4466)", async () => {
    const o = await probe(async (zk, root) => {
      const recursive: WatchedEvent[] = [];
      const child: WatchedEvent[] = [];
      await zk.getChildren(root, (e) => child.push(e));
      await zk.addWatch(root, AddWatchMode.PERSISTENT_RECURSIVE, (e) => recursive.push(e));
      await zk.create(`${root}/kid`);
      await until("the recursive watch sees the child", () => recursive.some((e) => e.type === EventType.NodeCreated));
      await zk.sync(root); // notifications of that change come before this reply
      await zk.exists(root);
      return child.some((e) => e.type === EventType.NodeChildrenChanged) ? "delivered" : "shadowed";
    });
    check("recursive watch vs one-shot child watch", o, !from("3.6") ? "unsupported" : from("3.9") ? "delivered" : "shadowed");
  }, T);
});
