// Judging a lost write from the node read back after a later attempt was refused (src/client/outcome.ts), and
// withRetry's rule: a rejection is OutcomeUnknownError exactly when a write it sent may have been applied.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { CreateMode, ErrorCode } from "../../src/protocol/constants.ts";
import type { Stat } from "../../src/protocol/records.ts";
import { type LostWrite, LostWrites, judge } from "../../src/client/outcome.ts";
import { OutcomeUnknownError, ZooKeeperError, withRetry } from "../../src/index.ts";
import type { Call } from "../../src/client/wire/call-record.ts";

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const stat = (s: Partial<Stat>): Stat => ({ czxid: 10n, mzxid: 10n, ctime: 0, mtime: 0, version: 0, cversion: 0, aversion: 0, ephemeralOwner: 0n, dataLength: 0, numChildren: 0, pzxid: 10n, ...s });
const loss = (op: string, path: string): ZooKeeperError => new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "cut", { op, path, sent: true });

function lostWrite(w: Partial<LostWrite> & Pick<LostWrite, "op">): LostWrite {
  return { path: "/k", data: enc("ours"), version: 4, flags: 0, unique: true, error: loss(w.op, "/k"), seenZxid: 100n, ...w };
}

describe("judging a lost write from a read-back", () => {
  it("setData: our unique bytes at version + 1, written after the loss, is the write applied; bytes others may write too are unknown", () => {
    const lost = lostWrite({ op: "setData" });
    assert.deepEqual(judge(lost, ErrorCode.BADVERSION, { data: enc("ours"), stat: stat({ version: 5, mzxid: 101n }) }, 1n), { kind: "applied" });
    const shared = judge({ ...lost, unique: false }, ErrorCode.BADVERSION, { data: enc("ours"), stat: stat({ version: 5, mzxid: 101n }) }, 1n);
    assert.equal(shared.kind, "unknown");
    assert.match((shared as { why: string }).why, /another client may have written the very same bytes/);
  });

  it("setData: data last changed before the loss was seen, or other bytes at version + 1 of the same node, is a true BADVERSION", () => {
    const lost = lostWrite({ op: "setData" });
    assert.equal(judge(lost, ErrorCode.BADVERSION, { data: enc("ours"), stat: stat({ version: 5, mzxid: 100n }) }, 1n).kind, "refused");
    assert.equal(judge(lost, ErrorCode.BADVERSION, { data: enc("theirs"), stat: stat({ version: 5, mzxid: 120n, czxid: 3n }) }, 1n).kind, "refused");
  });

  it("setData: later writes, a deleted node or a node made again since leave it unknown", () => {
    const lost = lostWrite({ op: "setData" });
    assert.equal(judge(lost, ErrorCode.BADVERSION, { data: enc("later"), stat: stat({ version: 7, mzxid: 130n }) }, 1n).kind, "unknown");
    assert.equal(judge(lost, ErrorCode.BADVERSION, null, 1n).kind, "unknown");
    assert.equal(judge(lost, ErrorCode.BADVERSION, { data: enc("theirs"), stat: stat({ version: 5, mzxid: 120n, czxid: 110n }) }, 1n).kind, "unknown");
    assert.equal(judge(lost, ErrorCode.NONODE, null, 1n).kind, "unknown");
  });

  it("delete: the same node still there is a true BADVERSION; NONODE is unknown", () => {
    const lost = lostWrite({ op: "delete", data: null });
    assert.equal(judge(lost, ErrorCode.BADVERSION, { data: null, stat: stat({ version: 9, czxid: 50n, mzxid: 140n }) }, 1n).kind, "refused");
    assert.equal(judge(lost, ErrorCode.BADVERSION, { data: null, stat: stat({ version: 9, czxid: 150n, mzxid: 150n }) }, 1n).kind, "unknown");
    assert.equal(judge(lost, ErrorCode.NONODE, null, 1n).kind, "unknown");
  });

  it("create: a node older than the loss is a true NODEEXISTS; ours (owner, or bytes at version 0) is applied", () => {
    const eph = lostWrite({ op: "create", version: -1, flags: CreateMode.EPHEMERAL });
    assert.equal(judge(eph, ErrorCode.NODEEXISTS, { data: enc("x"), stat: stat({ czxid: 90n }) }, 7n).kind, "refused");
    assert.equal(judge(eph, ErrorCode.NODEEXISTS, { data: enc("x"), stat: stat({ czxid: 101n, mzxid: 101n, ephemeralOwner: 7n }) }, 7n).kind, "applied");
    assert.equal(judge(eph, ErrorCode.NODEEXISTS, { data: enc("x"), stat: stat({ czxid: 101n, mzxid: 101n, ephemeralOwner: 8n }) }, 7n).kind, "unknown");
    const persistent = lostWrite({ op: "createWithStat", version: -1, flags: CreateMode.PERSISTENT });
    assert.equal(judge(persistent, ErrorCode.NODEEXISTS, { data: enc("ours"), stat: stat({ czxid: 101n, mzxid: 101n }) }, 7n).kind, "applied");
    assert.equal(judge({ ...persistent, unique: false }, ErrorCode.NODEEXISTS, { data: enc("ours"), stat: stat({ czxid: 101n, mzxid: 101n }) }, 7n).kind, "unknown");
    assert.equal(judge({ ...eph, unique: false }, ErrorCode.NODEEXISTS, { data: enc("x"), stat: stat({ czxid: 101n, mzxid: 101n, ephemeralOwner: 7n }) }, 7n).kind, "applied"); // the owner proves it
    assert.equal(judge(persistent, ErrorCode.NODEEXISTS, { data: enc("ours"), stat: stat({ czxid: 101n, mzxid: 105n, version: 1 }) }, 7n).kind, "unknown");
    assert.equal(judge(persistent, ErrorCode.NODEEXISTS, null, 7n).kind, "unknown");
  });

  it("LostWrites: only judgeable writes are kept; the earliest of repeated losses is the one judged", () => {
    let lastZxid = 100n;
    const lost = new LostWrites({ get lastZxid() { return lastZxid; }, sessionId: 1n });
    const setData = { op: "setData", path: "/k", data: enc("v"), version: 3 } as Call<unknown, unknown>;
    lost.record({ op: "setData", path: "/k", data: enc("v"), version: -1 } as Call<unknown, unknown>, loss("setData", "/k")); // unversioned: not judgeable
    lost.record({ op: "create", path: "/s-", data: null, flags: CreateMode.PERSISTENT_SEQUENTIAL } as Call<unknown, unknown>, loss("create", "/s-"));
    lost.record({ op: "multi" } as Call<unknown, unknown>, loss("multi", ""));
    assert.equal(lost.size, 0);
    lost.record(setData, loss("setData", "/k"));
    lastZxid = 200n;
    lost.record(setData, loss("setData", "/k"));
    assert.equal(lost.size, 2);
    assert.equal(lost.take({ ...setData, data: enc("other") } as Call<unknown, unknown>), null); // other bytes: another write
    assert.equal(lost.take(setData)?.seenZxid, 100n);
    assert.equal(lost.size, 0);
  });
});

describe("withRetry and unknown outcomes", () => {
  it("retries a call that was never sent, whatever it is; a sent write it cannot judge is unknown at once", async () => {
    let calls = 0;
    const notSent = new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "no link", { op: "multi", sent: false });
    assert.equal(await withRetry(async () => (calls++ === 0 ? Promise.reject(notSent) : "done"), { baseDelay: 1 }), "done");
    assert.equal(calls, 2);
    assert.match(notSent.message, /\(not sent\)$/);

    calls = 0;
    const sent = new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "cut", { op: "multi", sent: true });
    assert.match(sent.message, /\(sent: it may have been applied\)$/);
    const e = await withRetry(async () => (calls++, Promise.reject(sent)), { baseDelay: 1 }).catch((x: unknown) => x);
    assert.equal(calls, 1);
    assert.ok(e instanceof OutcomeUnknownError, String(e));
    assert.equal(e.code, ErrorCode.CONNECTIONLOSS);
    assert.equal(e.sent, true);
    assert.deepEqual(e.attempts, [sent]);
    assert.match(e.message, /^CONNECTIONLOSS \(multi\): the outcome is unknown/);
  });

  it("a sent read is retried; a later definite failure after a lost write that nobody judged is unknown", async () => {
    let calls = 0;
    const readLoss = new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "cut", { op: "getData", path: "/k", sent: true });
    assert.equal(await withRetry(async () => (calls++ === 0 ? Promise.reject(readLoss) : 1), { baseDelay: 1 }), 1);
    // A write lost, then (once retried by a caller that judged it resendable... here a not-sent attempt) a refusal.
    const writeLoss = new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "cut", { op: "setData", path: "/k", sent: false });
    const refused = new ZooKeeperError(ErrorCode.BADVERSION, undefined, { op: "setData", path: "/k" });
    calls = 0;
    await assert.rejects(withRetry(async () => Promise.reject(calls++ === 0 ? writeLoss : refused), { baseDelay: 1 }), (x) => x === refused); // not sent: the refusal is true
    assert.equal(calls, 2);
  });
});
