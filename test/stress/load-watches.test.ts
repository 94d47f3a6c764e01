// 100,000 watches on one session survive a reconnect: the client re-registers them in SetWatches
// batches of about 128 K path characters (counted and decoded by a frame tap), the server's `wchs`
// shows them all again, and every one fires once its node is created.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { AddWatchMode, EventType, Op, ZooKeeper, type WatchedEvent } from "../../src/index.ts";
import { JuteReader, OpCode, readSetWatches, readSetWatches2 } from "../../src/protocol/index.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { startFrameTap, type FrameTap } from "./frame-tap.ts";
import { memory, until } from "./helpers.ts";

const N = 100_000;
const BATCH_CHARS = 128 * 1024;

async function totalWatches(server: ZkServer): Promise<number> {
  const m = /Total watches:\s*(\d+)/.exec(await server.fourLetter("wchs"));
  return m ? Number(m[1]) : -1;
}

describe(`${N} watches on one session`, () => {
  let server: ZkServer;
  let tap: FrameTap;
  let zk: ZooKeeper;
  let direct: ZooKeeper;
  const root = "/load-watches";

  beforeAll(async () => {
    server = await startStandalone();
    tap = await startFrameTap("127.0.0.1", server.clientPort, [OpCode.setWatches, OpCode.setWatches2]);
    direct = await ZooKeeper.connect(server.connectString);
    await direct.create(root);
    await direct.create(`${root}/p`);
  });

  afterAll(async () => {
    await zk?.close();
    await direct?.close();
    await tap?.close();
    await server?.close();
  });

  it("are re-registered in ≤128 K-character SetWatches batches after a reconnect, and all fire", async () => {
    memory("watches: before");
    zk = await ZooKeeper.connect(tap.connectString, { sessionTimeout: 30_000 });
    const fired = new Map<string, number>();
    const onEvent = (e: WatchedEvent): void => {
      if (e.type === EventType.NodeCreated && e.path) fired.set(e.path, (fired.get(e.path) ?? 0) + 1);
    };
    const persistentEvents: WatchedEvent[] = [];
    const path = (i: number): string => `${root}/w-${String(i).padStart(6, "0")}`;
    const t0 = performance.now();
    // Exist watches on absent nodes: no znodes needed up front, and each fires NodeCreated later.
    for (let from = 0; from < N; from += 10_000) {
      const stats = await Promise.all(Array.from({ length: Math.min(10_000, N - from) }, (_, k) => zk.exists(path(from + k), onEvent)));
      assert.ok(stats.every((s) => s === null));
    }
    await zk.addWatch(`${root}/p`, AddWatchMode.PERSISTENT, (e) => persistentEvents.push(e));
    const setMs = performance.now() - t0;
    assert.equal(await totalWatches(server), N + 1, "server-side watches before the reconnect");
    const mem1 = memory(`watches: ${N} registered in ${setMs.toFixed(0)} ms`);

    const sessionId = zk.sessionId;
    const mark = tap.frames.length;
    tap.cutAll();
    await until("disconnected", () => zk.state !== "connected", 10_000, 5);
    await until("reconnected", () => zk.state === "connected", 20_000);
    await zk.sync("/"); // FIFO: every SetWatches batch before it has been applied
    assert.equal(zk.sessionId, sessionId);

    const batches = tap.frames.slice(mark).filter((f) => f.opcode === OpCode.setWatches || f.opcode === OpCode.setWatches2);
    const paths: string[] = [];
    const sizes = batches.map((b) => {
      const r = new JuteReader(b.payload, 8, b.payload.length, 2 * 1024 * 1024);
      const sw = b.opcode === OpCode.setWatches2 ? readSetWatches2(r) : { ...readSetWatches(r), persistentWatches: [], persistentRecursiveWatches: [] };
      const all = [...sw.dataWatches, ...sw.existWatches, ...sw.childWatches, ...sw.persistentWatches, ...sw.persistentRecursiveWatches];
      paths.push(...all);
      return { bytes: b.size, chars: all.reduce((n, p) => n + p.length, 0), opcode: b.opcode };
    });
    const totalChars = sizes.reduce((n, s) => n + s.chars, 0);
    process.stdout.write(
      `watches: reconnect sent ${batches.length} SetWatches frames (${sizes.filter((s) => s.opcode === OpCode.setWatches2).length} setWatches2), ` +
        `largest ${Math.max(...sizes.map((s) => s.bytes))} bytes / ${Math.max(...sizes.map((s) => s.chars))} path chars, total ${totalChars} chars\n`,
    );
    assert.equal(paths.length, N + 1, "every watch re-registered");
    assert.equal(new Set(paths).size, N + 1, "no path twice");
    for (const s of sizes) {
      // The batch closes once it reaches 128 K characters, so it may pass by at most one path.
      assert.ok(s.chars <= BATCH_CHARS + path(0).length, `a batch of ${s.chars} path characters`);
      assert.ok(s.bytes < 1_048_575, `a batch frame of ${s.bytes} bytes would break jute.maxbuffer`);
    }
    assert.ok(batches.length >= Math.ceil(totalChars / (BATCH_CHARS + path(0).length)), `${batches.length} batches for ${totalChars} chars`);
    assert.ok(sizes.some((s) => s.opcode === OpCode.setWatches2), "the persistent watch needs setWatches2");
    await until("server-side watches restored", async () => (await totalWatches(server)) === N + 1, 10_000, 100);

    // Create every watched node (multi batches of 1000) and wait for all the NodeCreated events.
    const t1 = performance.now();
    for (let from = 0; from < N; from += 1000) {
      await direct.multi(Array.from({ length: 1000 }, (_, k) => Op.create(path(from + k))));
    }
    await direct.create(`${root}/p/child`);
    await direct.setData(`${root}/p`, "x");
    await until(`${N} NodeCreated events`, () => fired.size === N, 60_000, 50);
    process.stdout.write(`watches: ${N} nodes created and all watches fired in ${(performance.now() - t1).toFixed(0)} ms\n`);
    assert.ok([...fired.values()].every((n) => n === 1), "a one-shot watch fired twice");
    await until("the persistent watch fired", () => persistentEvents.some((e) => e.type === EventType.NodeDataChanged), 10_000);
    const mem2 = memory("watches: after all fired");
    assert.ok(mem1.rssMB > 0 && mem2.rssMB > 0);
    assert.equal(await totalWatches(server), 1, "only the persistent watch is left on the server");
  }, 300_000);
});
