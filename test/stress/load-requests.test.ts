// Heavy requests on one session against a real server: 10,000 requests in flight at once all
// resolve in order, a getChildren reply near 1 MB decodes, and a reply larger than the client's
// maxBufferSize fails that call, drops the connection with a logged reason and recovers.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { CreateMode, ErrorCode, Op, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { capturingLogger, memory, settle, until } from "./helpers.ts";

describe("heavy requests on one session", () => {
  let server: ZkServer;
  let zk: ZooKeeper;
  const root = "/load-requests";

  beforeAll(async () => {
    server = await startStandalone();
    zk = await ZooKeeper.connect(server.connectString, { sessionTimeout: 30_000 });
    await zk.create(root);
  });

  afterAll(async () => {
    await zk?.close();
    await server?.close();
  });

  it("10,000 requests in flight on one session all resolve, in submission order", async () => {
    const N = 10_000;
    await zk.create(`${root}/seq`);
    await zk.create(`${root}/data`, "payload");
    memory("inflight: before");
    const t0 = performance.now();
    const creates: Promise<string>[] = [];
    const reads: Promise<{ data: Uint8Array | null }>[] = [];
    for (let i = 0; i < N / 2; i++) {
      creates.push(zk.create(`${root}/seq/n-`, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL }));
      reads.push(zk.getData(`${root}/data`));
    }
    const mem = memory(`inflight: ${N} submitted`);
    const [paths, datas] = await Promise.all([Promise.all(creates), Promise.all(reads)]);
    const ms = performance.now() - t0;
    memory(`inflight: ${N} resolved in ${ms.toFixed(0)} ms (${Math.round(N / (ms / 1000))} ops/s)`);
    assert.ok(mem.heapMB > 0);
    const seqs = paths.map((p) => Number(p.slice(-10)));
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! > seqs[i - 1]!, `sequence ${seqs[i]} after ${seqs[i - 1]}: replies out of order`);
    assert.equal(new Set(paths).size, N / 2);
    assert.ok(datas.every((d) => new TextDecoder().decode(d.data!) === "payload"));
    assert.equal((await zk.getChildren(`${root}/seq`)).length, N / 2);
  }, 120_000);

  describe("a getChildren reply near 1 MB", () => {
    const dir = `${root}/many`;
    const NAME = 200;
    const COUNT = 4900; // 16 + 4 + 4900 × (4 + 200) = 999,620 bytes of reply
    const name = (i: number): string => `c${String(i).padStart(5, "0")}-`.padEnd(NAME, "x");

    beforeAll(async () => {
      await zk.create(dir);
      for (let from = 0; from < COUNT; from += 200) {
        await zk.multi(Array.from({ length: Math.min(200, COUNT - from) }, (_, k) => Op.create(`${dir}/${name(from + k)}`)));
      }
    }, 120_000);

    it("decodes with the default maxBufferSize", async () => {
      const t0 = performance.now();
      const children = await zk.getChildren(dir);
      const ms = performance.now() - t0;
      assert.equal(children.length, COUNT);
      assert.deepEqual([...children].sort(), Array.from({ length: COUNT }, (_, i) => name(i)));
      const { stat } = await zk.getChildrenWithStat(dir);
      assert.equal(stat.numChildren, COUNT);
      memory(`1MB children: ${COUNT} names (≈0.95 MB reply) in ${ms.toFixed(0)} ms`);
    });

    it("over maxBufferSize: that call fails, the link drops with a logged reason, the client recovers", async () => {
      const log = capturingLogger();
      const small = await ZooKeeper.connect(server.connectString, { maxBufferSize: 100_000, sessionTimeout: 30_000, logger: log });
      const states: string[] = [];
      small.on("state", (s) => states.push(s));
      try {
        const sessionId = small.sessionId;
        const eph = await small.create(`${root}/small-eph`, "e", { mode: CreateMode.EPHEMERAL });
        const r = await settle(small.getChildren(dir));
        assert.equal(r.ok, false, "a reply beyond maxBufferSize must not be accepted");
        const err = (r as { error: unknown }).error;
        assert.ok(err instanceof ZooKeeperError, String(err));
        assert.equal(err.code, ErrorCode.CONNECTIONLOSS, err.message);
        assert.match(err.message, /frame length 999\d{3} is outside 0\.\.100000/);
        const line = log.lines.find((l) => /frame length 999\d{3} is outside 0\.\.100000/.test(l));
        assert.ok(line, `no logged reason; log:\n${log.lines.join("\n")}`);
        await until("reconnected", () => small.state === "connected", 20_000);
        assert.deepEqual(states.slice(0, 2), ["disconnected", "connected"]);
        assert.equal(small.sessionId, sessionId, "same session");
        assert.ok(await small.exists(eph), "ephemeral kept");
        assert.equal((await small.getChildren(root)).includes("many"), true, "smaller calls work");
        memory("1MB children: after the oversized reply and recovery");
      } finally {
        await small.close();
      }
    });
  });
});
