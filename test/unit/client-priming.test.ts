// SetWatches batching (src/client/session/priming.ts): every watch in exactly one batch, in the Java client's
// order (data, exist, child, persistent, recursive), each batch closed once it holds >= 128 K chars.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { SET_WATCHES_BATCH_CHARS, watchBatches } from "../../src/client/session/priming.ts";
import { WatchRegistry, type WatchKind } from "../../src/client/watches/watches.ts";

const kinds: WatchKind[] = ["data", "exist", "child", "persistent", "persistentRecursive"];
const fields = ["dataWatches", "existWatches", "childWatches", "persistentWatches", "persistentRecursiveWatches"] as const;

describe("SetWatches batching", () => {
  it("sends nothing without watches", () => {
    assert.deepEqual(watchBatches(new WatchRegistry(), 5n), []);
  });

  it("splits 500 K chars of paths into batches of at most the limit plus one path", () => {
    const reg = new WatchRegistry();
    const all = new Map<WatchKind, string[]>();
    let n = 0;
    for (const kind of kinds) {
      const list: string[] = [];
      for (let i = 0; i < 600; i++) {
        const p = `/${kind}/${String(n++).padStart(6, "0")}-${"x".repeat(150)}`;
        reg.add(kind, p, () => {});
        list.push(p);
      }
      all.set(kind, list);
    }
    const batches = watchBatches(reg, 42n);
    assert.ok(batches.length >= 4, `${batches.length} batches`);
    for (const b of batches) {
      assert.equal(b.relativeZxid, 42n);
      const lens = fields.flatMap((f) => b[f].map((p) => p.length));
      const total = lens.reduce((a, x) => a + x, 0);
      assert.ok(total - lens.at(-1)! < SET_WATCHES_BATCH_CHARS, `batch of ${total} chars was not closed in time`);
    }
    kinds.forEach((kind, i) => assert.deepEqual(batches.flatMap((b) => b[fields[i]!]), all.get(kind)));
  });
});
