// The recipes' error classes (src/recipes/errors.ts): each keeps the code the recipes always rejected with
// (so `err.code` checks still hold), is a ZooKeeperError, and `instanceof` works across the ESM build, the
// CommonJS build and the sources, each class only as itself. Against a real server: the throw sites.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as src from "../../src/index.ts";
import * as srcR from "../../src/recipes/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { until } from "../support/wait.ts";
import { removeRoot } from "../support/sessions.ts";

type Copy = typeof src;
type Recipes = typeof srcR;
const here = (import.meta as { url: string }).url;
const root = fileURLToPath(new URL("../..", here));
let esm: Copy;
let esmR: Recipes;
let cjsR: Recipes;

const { ErrorCode } = src;
/** Every recipe error class with a sample and the code it must keep. */
const samples = (r: Recipes) =>
  [
    ["LockNotReentrantError", new r.LockNotReentrantError("/l"), ErrorCode.APIERROR],
    ["LockTimeoutError", new r.LockTimeoutError("/l", 5), ErrorCode.OPERATIONTIMEOUT],
    ["LockReleasedError", new r.LockReleasedError("/l"), ErrorCode.CONNECTIONLOSS],
    ["LockNotHeldError", new r.LockNotHeldError("/l"), ErrorCode.NOAUTH],
    ["LockUpgradeError", new r.LockUpgradeError("/l"), ErrorCode.APIERROR],
    ["SemaphoreTimeoutError", new r.SemaphoreTimeoutError("/s", 5), ErrorCode.OPERATIONTIMEOUT],
    ["NotLeaderError", new r.NotLeaderError("/e", "p1"), ErrorCode.NOAUTH],
    ["LeadershipTimeoutError", new r.LeadershipTimeoutError("/e", 5), ErrorCode.OPERATIONTIMEOUT],
    ["ElectionClosedError", new r.ElectionClosedError("/e", "resign", "closed"), ErrorCode.CONNECTIONLOSS],
    ["RecipeStateError", new r.RecipeStateError("/e", "start", "start() may be called once"), ErrorCode.APIERROR],
    ["MemberIdTakenError", new r.MemberIdTakenError("/g/m", "m"), ErrorCode.NODEEXISTS],
  ] as const;

describe("recipe errors", () => {
  beforeAll(async () => {
    const built = `${root}/dist/cjs/recipes/errors.js`;
    const newest = Math.max(...["src/client/errors.ts", "src/recipes/errors.ts", "src/recipes/index.ts"].map((f) => statSync(`${root}/${f}`).mtimeMs));
    if (!existsSync(built) || statSync(built).mtimeMs < newest) execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" });
    esm = (await import(pathToFileURL(`${root}/dist/esm/index.js`).href)) as Copy;
    esmR = (await import(pathToFileURL(`${root}/dist/esm/recipes/index.js`).href)) as Recipes;
    cjsR = createRequire(here)(`${root}/dist/cjs/recipes/index.js`) as Recipes;
  }, 120_000);

  it("keep their codes, names and messages", () => {
    for (const [name, err, code] of samples(srcR)) {
      assert.equal(err.code, code, name);
      assert.equal(err.name, name);
      assert.equal(src.isZooKeeperError(err, code), true, name);
      assert.ok(err instanceof src.ZooKeeperError && err instanceof Error, name);
    }
    assert.equal(new srcR.ElectionClosedError("/e", "election", "expired").code, ErrorCode.SESSIONEXPIRED);
    assert.equal(new srcR.ElectionClosedError("/e", "resign", "notStarted").message, "CONNECTIONLOSS (resign /e): the election is not started");
    assert.equal(new srcR.NotLeaderError("/e", "p1").message, 'NOAUTH (transaction /e): participant "p1" is not the leader');
    assert.equal(new srcR.LockTimeoutError("/l", 5).message, "OPERATIONTIMEOUT (acquire /l): lock not acquired within 5 ms");
  });

  it("are recognised across copies, each only as itself", () => {
    const copies = { src: srcR, esm: () => esmR, cjs: () => cjsR };
    const get = (c: Recipes | (() => Recipes)): Recipes => (typeof c === "function" ? c() : c);
    for (const [maker, m] of Object.entries(copies)) {
      const made = samples(get(m));
      for (const [checker, c] of Object.entries(copies)) {
        const classes = get(c) as unknown as Record<string, abstract new (...a: never[]) => unknown>;
        for (const [name, err] of made) {
          const at = `${maker} ${name} seen by ${checker}`;
          assert.equal(err instanceof classes[name]!, true, at);
          assert.equal(err instanceof esm.ZooKeeperError, true, at);
          for (const [other] of made) if (other !== name) assert.equal(err instanceof classes[other]!, false, `${at} as ${other}`);
        }
      }
    }
    assert.equal(new esm.ZooKeeperError(ErrorCode.NOAUTH) instanceof cjsR.NotLeaderError, false);
  });

  describe("thrown by the recipes (real server)", () => {
    let zk: src.ZooKeeper;
    const base = `/t-recipe-errors-${randomUUID().slice(0, 8)}`;
    beforeAll(async () => {
      zk = await src.ZooKeeper.connect((await sharedServer()).connectString, { sessionTimeout: 10_000 });
    }, 60_000);
    afterAll(async () => {
      if (zk) await removeRoot(zk, base);
      await zk?.close();
    });

    it("LeaderElection: NotLeaderError before sending, LeadershipTimeoutError, RecipeStateError, ElectionClosedError", async () => {
      const path = `${base}/election`;
      const a = new srcR.LeaderElection(zk, path, { id: "a" });
      await assert.rejects(a.resign(), (e) => e instanceof srcR.ElectionClosedError && e.reason === "notStarted" && e.code === ErrorCode.CONNECTIONLOSS);
      await a.start();
      await a.waitForLeadership({ timeout: 5000 });
      const b = new srcR.LeaderElection(zk, path, { id: "b" });
      await b.start();
      await assert.rejects(b.start(), (e) => e instanceof srcR.RecipeStateError && e.code === ErrorCode.APIERROR);
      await assert.rejects(b.transaction().create(`${base}/x`).commit(), (e) => e instanceof srcR.NotLeaderError && e.code === ErrorCode.NOAUTH && e.id === "b");
      assert.equal(await zk.exists(`${base}/x`), null);
      await assert.rejects(b.waitForLeadership({ timeout: 20 }), (e) => e instanceof srcR.LeadershipTimeoutError && e.code === ErrorCode.OPERATIONTIMEOUT && e.timeout === 20);
      const waiting = b.waitForLeadership().then(() => null, (e: unknown) => e);
      await b.close();
      const err = await waiting;
      assert.ok(err instanceof srcR.ElectionClosedError && err.reason === "closed" && err.code === ErrorCode.CONNECTIONLOSS, String(err));
      await a.close();
    }, 30_000);

    it("Lock: LockNotReentrantError, LockTimeoutError, LockReleasedError", async () => {
      const path = `${base}/lock`;
      const holder = new srcR.Lock(zk, path);
      await holder.acquire();
      await assert.rejects(holder.acquire(), (e) => e instanceof srcR.LockNotReentrantError);
      const other = new srcR.Lock(zk, path);
      await assert.rejects(other.acquire({ timeout: 50 }), (e) => e instanceof srcR.LockTimeoutError && e.code === ErrorCode.OPERATIONTIMEOUT);
      const pending = other.acquire().then(() => null, (e: unknown) => e);
      // release() must find the acquire pending: its znode made, second behind the holder's.
      await until("the second acquire's znode", () => other.nodePath !== null);
      assert.deepEqual((await other.contenders()).map((c) => c.path), [holder.nodePath, other.nodePath]);
      await other.release();
      const err = await pending;
      assert.ok(err instanceof srcR.LockReleasedError && err.code === ErrorCode.CONNECTIONLOSS, String(err));
      await holder.release();
    }, 30_000);

    it("GroupMember: MemberIdTakenError when another session holds the id", async () => {
      const other = await src.ZooKeeper.connect((await sharedServer()).connectString, { sessionTimeout: 10_000 });
      try {
        const path = `${base}/group`;
        const first = new srcR.GroupMember(other, path, { id: "m" });
        await first.join();
        await assert.rejects(new srcR.GroupMember(zk, path, { id: "m" }).join(), (e) => e instanceof srcR.MemberIdTakenError && e.code === ErrorCode.NODEEXISTS && e.id === "m");
        await first.leave();
      } finally {
        await other.close();
      }
    }, 30_000);
  });
});
