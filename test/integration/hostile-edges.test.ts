// Edge faults: a server that never answers the first handshake, a request cut half-way on the
// wire, a request the server applied whose reply was lost, and faults that outlast the session.
// Each states what the client must do and checks it against a real server behind the fault proxy.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { CreateMode, EventType, KeeperState, ZooKeeper, ZooKeeperError, type SessionState, type WatchedEvent } from "../../src/index.ts";
import { OpCode } from "../../src/protocol/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { hold, settle, trackUnhandled, until } from "../stress/helpers.ts";
import { never } from "../support/wait.ts";

function codeOf(r: Awaited<ReturnType<typeof settle>>): string {
  if (r.ok) return "resolved";
  const e = (r as { error: unknown }).error;
  return e instanceof ZooKeeperError ? e.codeName : `threw ${String(e)}`;
}

describe("edge faults", () => {
  let server: ZkServer;
  let proxy: FaultProxy;
  let direct: ZooKeeper;
  const root = `/hostile-edges-${randomUUID()}`;

  beforeAll(async () => {
    server = await startStandalone({ tickTime: 500 }); // sessions down to 1 s
    proxy = await startFaultProxy("127.0.0.1", server.clientPort, { replyGraceMs: 3000 });
    direct = await ZooKeeper.connect(server.connectString);
    await direct.create(root);
  });

  afterAll(async () => {
    await direct?.close();
    await proxy?.close();
    await server?.close();
  });

  it("first handshake into a blackhole: connect() rejects CONNECTIONLOSS at connectTimeout, no session is left", async () => {
    const unhandled = trackUnhandled();
    proxy.blackhole(true);
    try {
      const r = await settle(ZooKeeper.connect(proxy.connectString, { connectTimeout: 2000, sessionTimeout: 4000 }));
      assert.equal(codeOf(r), "CONNECTIONLOSS");
      assert.ok(r.ms >= 1900 && r.ms < 4000, `rejected after ${r.ms.toFixed(0)} ms`);
      assert.match(String((r as { error: unknown }).error), /no session established within 2000 ms/);
      await never("an unhandled rejection", () => unhandled.reasons.length > 0, 100);
    } finally {
      proxy.blackhole(false);
      unhandled.stop();
    }
  });

  it("a request cut half-way on the wire: CONNECTIONLOSS, the server applied nothing, the session survives", async () => {
    const zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 6000 });
    try {
      const sessionId = zk.sessionId;
      const path = `${root}/half`;
      await zk.create(path, "old");
      // setData of 64 KB; the proxy forwards 1000 bytes of it and then cuts both ways.
      const cut = proxy.cutAfterClientBytes(1000);
      const r = await settle(zk.setData(path, new Uint8Array(64 * 1024).fill(1)));
      await cut;
      assert.equal(codeOf(r), "CONNECTIONLOSS");
      await until("reconnected", () => zk.state === "connected", 15_000);
      assert.equal(zk.sessionId, sessionId);
      const { data, stat } = await zk.getData(path);
      assert.equal(new TextDecoder().decode(data!), "old", "a torn request must not be applied");
      assert.equal(stat.version, 0);
    } finally {
      await zk.close();
    }
  });

  it("reply lost after the server applied the create: CONNECTIONLOSS (sent), the node exists after the reconnect, and the same create again is judged applied", async () => {
    const zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 6000 });
    try {
      const path = `${root}/applied`;
      const cut = proxy.cutAfterRequest(OpCode.create, { forward: true });
      const r = await settle(zk.create(path, "x", { uniqueData: true }));
      const info = await cut;
      assert.ok(info.fired);
      assert.equal(info.serverErr, 0, "the server did apply the create");
      assert.equal(codeOf(r), "CONNECTIONLOSS", "the client cannot know: it must say CONNECTIONLOSS, not success or failure");
      assert.equal(((r as { error: unknown }).error as ZooKeeperError).sent, true);
      await until("reconnected", () => zk.state === "connected", 15_000);
      assert.ok(await zk.exists(path), "the applied create is visible after the reconnect");
      // The same create sent again meets its own node: the client reads it back (made after the loss, the same
      // bytes, which nobody else writes, never changed) and resolves with the path instead of a false NODEEXISTS.
      // Other bytes are a true one.
      const again = await settle(zk.create(path, "x", { uniqueData: true }));
      assert.equal(codeOf(again), "resolved");
      assert.equal((again as { value: unknown }).value, path);
      const other = await settle(zk.create(path, "y"));
      assert.equal(codeOf(other), "NODEEXISTS");
    } finally {
      await zk.close();
    }
  });

  for (const clientSideExpiry of [true, false]) {
    it(`a blackhole longer than the session (clientSideExpiry ${clientSideExpiry}): expired, ephemeral gone, every call SESSIONEXPIRED`, async () => {
      const unhandled = trackUnhandled();
      const zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 2000, clientSideExpiry });
      const states: SessionState[] = [];
      zk.on("state", (s) => states.push(s));
      const events: WatchedEvent[] = [];
      try {
        const eph = await zk.create(`${root}/eph-${clientSideExpiry}`, null, { mode: CreateMode.EPHEMERAL });
        await zk.getData(eph, (e) => events.push(e));
        proxy.blackhole(true);
        const pending = settle(zk.getData(eph));
        // The server expires the session after 2 s without hearing from it.
        await until("the server dropped the ephemeral", async () => (await direct.exists(eph)) === null, 15_000, 100);
        assert.equal(codeOf(await pending), "CONNECTIONLOSS");
        if (clientSideExpiry) {
          // 4/3 of the negotiated timeout without a server: the client concludes expiry on its own.
          await until("expired by the client", () => zk.state === "expired", 10_000);
        } else {
          assert.notEqual(zk.state, "expired", "without client-side expiry only the server can say so");
          proxy.blackhole(false);
          await until("expired by the server on reconnect", () => zk.state === "expired", 15_000);
        }
        assert.deepEqual(states.slice(-1), ["expired"]);
        assert.ok(!states.includes("closed"));
        await until("the watcher heard of the expiry", () => events.length > 0, 5000);
        assert.deepEqual(events, [{ type: EventType.None, typeName: "None", state: KeeperState.Expired, stateName: "Expired", path: null, zxid: undefined }]);
        const calls: (() => Promise<unknown>)[] = [() => zk.getData(eph), () => zk.create(`${root}/after`), () => zk.exists("/")];
        for (const call of calls) {
          const r = await settle(call());
          assert.equal(codeOf(r), "SESSIONEXPIRED");
        }
        await zk.close(); // closing an expired client is harmless
        assert.equal(zk.state, "expired");
        assert.deepEqual(unhandled.reasons, []);
      } finally {
        proxy.blackhole(false);
        await zk.close();
        unhandled.stop();
      }
    }, 60_000);
  }

  it("a reset storm: 10 resets in a row, each as soon as the client is back, with requests running; nothing hangs, the session survives", async () => {
    const unhandled = trackUnhandled();
    const zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: 6000 });
    try {
      const sessionId = zk.sessionId;
      const eph = await zk.create(`${root}/storm`, "s", { mode: CreateMode.EPHEMERAL });
      let ok = 0;
      let lost = 0;
      for (let i = 0; i < 10; i++) {
        await until("connected", () => zk.state === "connected", 15_000);
        const calls = Array.from({ length: 50 }, () => settle(zk.getData(eph)));
        await hold(Math.random() * 5);
        proxy.reset();
        for (const r of await Promise.all(calls)) {
          if (r.ok) ok++;
          else if (codeOf(r) === "CONNECTIONLOSS") lost++;
          else assert.fail(`unexpected ${codeOf(r)}`);
        }
      }
      await until("connected", () => zk.state === "connected", 15_000);
      assert.equal(ok + lost, 500);
      assert.equal(zk.sessionId, sessionId);
      assert.ok(await zk.exists(eph));
      assert.deepEqual(unhandled.reasons, []);
      process.stdout.write(`reset storm: ${ok} ok, ${lost} CONNECTIONLOSS, same session\n`);
    } finally {
      await zk.close();
      unhandled.stop();
    }
  }, 120_000);
});
