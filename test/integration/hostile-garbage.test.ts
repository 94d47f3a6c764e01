// A server that completes a real handshake and then sends garbage: the client drops that connection
// with a logged reason, fails what was in flight there, and resumes the same session on the next
// host (a real server behind a fault proxy). The connect string lists both; the client shuffles
// hosts, so when it lands on the real server first the test cuts that link to walk it to the fake.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { CreateMode, ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { startFakeServer, type FakeServerOptions, type Garbage } from "../support/fakes/fake-server.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { capturingLogger, settle, trackUnhandled, until, within } from "../stress/helpers.ts";

interface Case {
  garbage: Garbage;
  when: FakeServerOptions["when"];
  /** The code of the request answered with garbage (firstRequest only). */
  code?: number;
  /** What the logged reason must say. */
  reason: RegExp;
}

const cases: Case[] = [
  { garbage: "oversized", when: "afterConnect", reason: /bad frame .*frame length 2147483647 is outside/ },
  { garbage: "negative", when: "afterConnect", reason: /bad frame .*frame length -5 is outside/ },
  { garbage: "random", when: "afterConnect", reason: /(bad|malformed) frame/ },
  { garbage: "beyond", when: "firstRequest", code: ErrorCode.CONNECTIONLOSS, reason: /bad frame .*frame length 1048576 is outside 0\.\.1048575/ },
  { garbage: "short-frame", when: "firstRequest", code: ErrorCode.CONNECTIONLOSS, reason: /malformed frame .*short input/ },
  { garbage: "junk-reply", when: "firstRequest", code: ErrorCode.CONNECTIONLOSS, reason: /malformed frame .*xid out of order/ },
  { garbage: "bad-body", when: "firstRequest", code: ErrorCode.MARSHALLINGERROR, reason: /malformed frame .*bad buffer length 2147483647/ },
  // Bytes keep coming but no frame ever completes: only whole frames may count as hearing from the
  // server (as in the Java client), so the read timeout (2/3 of 10 s) must still drop the link.
  { garbage: "trickle", when: "firstRequest", code: ErrorCode.CONNECTIONLOSS, reason: /no reply from .* \(read timeout/ },
];

describe("a server that sends garbage after a valid handshake", () => {
  let server: ZkServer;
  let proxy: FaultProxy;
  const root = `/hostile-garbage-${randomUUID()}`;

  beforeAll(async () => {
    server = await startStandalone();
    proxy = await startFaultProxy("127.0.0.1", server.clientPort);
    const zk = await ZooKeeper.connect(server.connectString);
    await zk.create(root);
    await zk.close();
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  for (const c of cases) {
    it(`${c.garbage} (${c.when}): connection dropped with a logged reason, session resumed on the real server`, async () => {
      const unhandled = trackUnhandled();
      const fake = await startFakeServer({ garbage: c.garbage, when: c.when, upstream: { host: "127.0.0.1", port: server.clientPort } });
      const log = capturingLogger();
      const onFake = (): boolean => zk.state === "connected" && proxy.connections === 0;
      let zk: ZooKeeper;
      try {
        // No ensemble tracker: its config read would be the "first request" the fake server answers with garbage.
        zk = await ZooKeeper.connect(`${fake.connectString},${proxy.connectString}`, { sessionTimeout: 10_000, logger: log, trackEnsemble: false });
      } catch (e) {
        // afterConnect garbage can arrive in the handshake's own chunk; the first session then comes from the proxy.
        throw new Error(`connect failed: ${String(e)}\n${log.lines.join("\n")}`);
      }
      try {
        const sessionId = zk.sessionId;
        const onReal = (): boolean => zk.state === "connected" && proxy.connections === 1;
        let eph: string | null = null;
        if (onReal()) {
          eph = await zk.create(`${root}/e-${c.garbage}`, "alive", { mode: CreateMode.EPHEMERAL });
          if (fake.sent === 0) {
            proxy.cut(); // on the real server first: walk the client to the fake
            await until("the cut noticed", () => zk.state !== "connected", 10_000, 1);
          }
        }
        if (c.when === "firstRequest") {
          await until("the client on the fake server", onFake, 15_000);
          const settled = await within(settle(zk.getData("/")), 10_000);
          assert.notEqual(settled, "pending", "a request answered with garbage must not hang");
          const r = settled as Exclude<typeof settled, "pending">;
          assert.equal(r.ok, false, "a request answered with garbage must fail");
          const err = (r as { error: unknown }).error;
          assert.ok(err instanceof ZooKeeperError, String(err));
          assert.equal(err.code, c.code, err.message);
        }
        await until("garbage sent", () => fake.sent > 0, 15_000);
        await until("back on the real server", onReal, 15_000);
        const line = log.lines.find((l) => l.includes(`127.0.0.1:${fake.port}`) && c.reason.test(l));
        assert.ok(line, `no logged reason matching ${c.reason} for the fake server; log:\n${log.lines.join("\n")}`);
        assert.equal(zk.sessionId, sessionId, "the session survives");
        if (eph) assert.equal(new TextDecoder().decode((await zk.getData(eph)).data!), "alive");
        assert.ok((await zk.exists(root)) !== null);
        assert.deepEqual(unhandled.reasons, []);
      } finally {
        await zk.close();
        await fake.close();
        unhandled.stop();
      }
    }, 60_000);
  }
});

describe("a server whose ConnectResponse is malformed", () => {
  it("each attempt ends at once with the reason (no handshake left waiting), and connect() names it", async () => {
    const unhandled = trackUnhandled();
    const fake = await startFakeServer({ garbage: "short-frame", when: "handshake" });
    const log = capturingLogger();
    try {
      const settled = await settle(ZooKeeper.connect(fake.connectString, { sessionTimeout: 10_000, connectTimeout: 3000, logger: log }));
      assert.equal(settled.ok, false);
      const err = (settled as { error: unknown }).error;
      assert.ok(err instanceof ZooKeeperError, String(err));
      assert.equal(err.code, ErrorCode.CONNECTIONLOSS);
      assert.match(err.message, /no session established within 3000 ms; last error: .*malformed frame from 127\.0\.0\.1:\d+: .*short input/);
      assert.ok(fake.accepted >= 2, `the attempt after a malformed ConnectResponse was never made (${fake.accepted} connection)`);
      assert.deepEqual(unhandled.reasons, []);
    } finally {
      await fake.close();
      unhandled.stop();
    }
  }, 30_000);
});
