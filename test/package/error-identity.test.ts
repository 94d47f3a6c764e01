// One error identity across module copies: the ESM build, the CommonJS build and the TypeScript sources are
// loaded side by side in one process (as an app mixing `import` and `require` gets them), and each copy's
// isZooKeeperError / instanceof recognises the others' errors. The recipes of one copy classify the errors
// a client of another copy rejects with, against a real server.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as src from "../../src/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";

type Copy = typeof src;
// import.meta is cast because Deno type-checks against this repo's lib settings, which lack its url (see golden.ts).
const here = (import.meta as { url: string }).url;
const root = fileURLToPath(new URL("../..", here));
let esm: Copy;
let cjs: Copy;

describe("error identity across the ESM build, the CommonJS build and the sources", () => {
  beforeAll(async () => {
    // npm test builds before the tests run; a lone run of this file builds here when dist/ is missing or stale.
    const built = `${root}/dist/cjs/client/errors.js`;
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(`${root}/src/client/errors.ts`).mtimeMs) {
      execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" });
    }
    esm = (await import(pathToFileURL(`${root}/dist/esm/index.js`).href)) as Copy;
    cjs = createRequire(here)(`${root}/dist/cjs/index.js`) as Copy;
  }, 120_000);

  it("the copies are really distinct classes", () => {
    assert.notEqual(esm.ZooKeeperError, cjs.ZooKeeperError);
    assert.notEqual(esm.ZooKeeperError, src.ZooKeeperError);
    assert.notEqual(cjs.ZooKeeperError, src.ZooKeeperError);
  });

  it("each copy recognises every copy's errors, with and without a code", () => {
    const copies = { esm: () => esm, cjs: () => cjs, src: () => src } as const;
    for (const [maker, m] of Object.entries(copies)) {
      const err = new (m().ZooKeeperError)(src.ErrorCode.NONODE, undefined, { op: "getData", path: "/x" });
      for (const [checker, c] of Object.entries(copies)) {
        const at = `${maker} error seen by ${checker}`;
        assert.equal(c().isZooKeeperError(err), true, at);
        assert.equal(c().isZooKeeperError(err, src.ErrorCode.NONODE), true, at);
        assert.equal(c().isZooKeeperError(err, src.ErrorCode.NODEEXISTS), false, at);
        assert.equal(err instanceof c().ZooKeeperError, true, at);
        assert.equal(err instanceof Error, true, at);
      }
    }
  });

  it("look-alikes are not ZooKeeperErrors", () => {
    const fake = Object.assign(new Error("NONODE"), { name: "ZooKeeperError", code: -101 });
    for (const c of [esm, cjs, src]) {
      assert.equal(c.isZooKeeperError(fake), false);
      assert.equal(fake instanceof c.ZooKeeperError, false);
      assert.equal(c.isZooKeeperError(null), false);
      assert.equal(c.isZooKeeperError({ code: -101 }), false);
    }
  });

  it("a subclass's instanceof still means that subclass", () => {
    class Mine extends src.ZooKeeperError {}
    const plain = new src.ZooKeeperError(src.ErrorCode.NONODE);
    assert.equal(plain instanceof Mine, false);
    assert.equal(new Mine(src.ErrorCode.NONODE) instanceof Mine, true);
    assert.equal(new Mine(src.ErrorCode.NONODE) instanceof cjs.ZooKeeperError, true);
  });

  it("a recipe's error subclass is recognised across copies, and only as itself", async () => {
    type Recipes = typeof import("../../src/recipes/index.ts");
    const esmR = (await import(pathToFileURL(`${root}/dist/esm/recipes/index.js`).href)) as Recipes;
    const cjsR = createRequire(here)(`${root}/dist/cjs/recipes/index.js`) as Recipes;
    const err = new cjsR.LockNotReentrantError("/lock");
    assert.equal(err instanceof esmR.LockNotReentrantError, true);
    assert.equal(err instanceof esm.ZooKeeperError, true);
    assert.equal(esm.isZooKeeperError(err, src.ErrorCode.APIERROR), true);
    assert.equal(new esm.ZooKeeperError(src.ErrorCode.APIERROR) instanceof cjsR.LockNotReentrantError, false);
  });

  describe("against a real server", () => {
    let zk: src.ZooKeeper;
    beforeAll(async () => {
      zk = await cjs.ZooKeeper.connect((await sharedServer()).connectString, { sessionTimeout: 10_000 });
    }, 60_000);
    afterAll(async () => {
      await zk?.close();
    });

    it("a CommonJS client's rejection is classified by the ESM copy", async () => {
      const err: unknown = await zk.getData(`/t-identity-${randomUUID()}`).then(() => null, (e: unknown) => e);
      assert.equal(esm.isZooKeeperError(err, esm.ErrorCode.NONODE), true);
      assert.equal(src.isZooKeeperError(err, src.ErrorCode.NONODE), true);
    });

    it("the ESM recipes handle a CommonJS client's NONODE as their own", async () => {
      const { GroupMember } = (await import(pathToFileURL(`${root}/dist/esm/recipes/index.js`).href)) as typeof import("../../src/recipes/index.ts");
      const group = new GroupMember(zk, `/t-identity-${randomUUID()}/group`, { id: "m" });
      assert.deepEqual(await group.members(), []); // NONODE from getChildren means an empty group
    });
  });
});
