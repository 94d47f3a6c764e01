// Network faults between the client and a real server, injected by the fault proxy. For each fault
// the test states what must happen: requests on the wire reject CONNECTIONLOSS (never hang), the
// session survives a fault that ends within its timeout (same id, ephemeral still there, a watch set
// before the fault fires for a change made during it), no unhandled rejection, and a child process
// that suffers the fault and closes its client exits by itself (no leaked timer or socket).
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { CreateMode, ErrorCode, EventType, ZooKeeper, ZooKeeperError, type SessionState, type WatchedEvent } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { capturingLogger, childCommand, hold, settle, trackUnhandled, until, within } from "../stress/helpers.ts";

// tickTime 500 allows short sessions: 6 s session, 4 s read timeout, pings every 2 s.
const SESSION_MS = 6000;
const READ_TIMEOUT_MS = (SESSION_MS * 2) / 3;
const CHILD = fileURLToPath(new URL("../stress/leak-child.ts", (import.meta as { url: string }).url));

interface Rig {
  zk: ZooKeeper;
  states: SessionState[];
  sessionId: bigint;
  eph: string;
  watched: string;
  events: WatchedEvent[];
  log: string[];
}

describe("network faults between client and server (fault proxy)", () => {
  let server: ZkServer;
  let proxy: FaultProxy;
  let direct: ZooKeeper; // a second client straight to the server, to change things during a fault
  const root = `/hostile-faults-${randomUUID()}`;

  beforeAll(async () => {
    server = await startStandalone({ tickTime: 500 });
    proxy = await startFaultProxy("127.0.0.1", server.clientPort);
    direct = await ZooKeeper.connect(server.connectString);
    await direct.create(root);
    await direct.create(`${root}/big`, new Uint8Array(64 * 1024).fill(7));
  });

  afterAll(async () => {
    await direct?.close();
    await proxy?.close();
    await server?.close();
  });

  /** A client through the proxy with an ephemeral node and a data watch on a node of its own. */
  async function rig(name: string, sessionMs = SESSION_MS): Promise<Rig> {
    proxy.blackhole(false);
    proxy.delay(0);
    proxy.drip(false);
    const log = capturingLogger();
    const zk = await ZooKeeper.connect(proxy.connectString, { sessionTimeout: sessionMs, logger: log });
    const states: SessionState[] = [];
    zk.on("state", (s) => states.push(s));
    const eph = await zk.create(`${root}/eph-${name}`, name, { mode: CreateMode.EPHEMERAL });
    const watched = await zk.create(`${root}/w-${name}`, "before");
    const events: WatchedEvent[] = [];
    await zk.getData(watched, (e) => events.push(e));
    return { zk, states, sessionId: zk.sessionId, eph, watched, events, log: log.lines };
  }

  /** One fault case: a fresh rig, the body, no unhandled rejection; `undo` lifts the fault even on failure. */
  async function faultCase(name: string, body: (r: Rig) => Promise<void>, undo: () => void = () => {}, sessionMs = SESSION_MS): Promise<void> {
    const unhandled = trackUnhandled();
    const r = await rig(name, sessionMs);
    try {
      await body(r);
      assert.deepEqual(unhandled.reasons, []);
    } finally {
      undo();
      await r.zk.close();
      unhandled.stop();
    }
  }

  /** After the fault: same session, ephemeral still owned by it, the watch fired for the change made during the fault. */
  async function assertSurvived(r: Rig): Promise<void> {
    await until("reconnected", () => r.zk.state === "connected", SESSION_MS * 2).catch((e: Error) => {
      throw new Error(`${e.message}; states ${r.states.join(",")}; client log:\n${r.log.join("\n")}`);
    });
    assert.equal(r.zk.sessionId, r.sessionId, "same session id");
    const stat = await r.zk.exists(r.eph);
    assert.ok(stat, "the ephemeral node is still there");
    assert.equal(stat.ephemeralOwner, r.sessionId);
    await until("the watch fired", () => r.events.length > 0, 10_000);
    assert.deepEqual(r.events.map((e) => [e.type, e.path]), [[EventType.NodeDataChanged, r.watched]]);
    assert.ok(!r.states.includes("expired"), `states: ${r.states.join(",")}`);
  }

  /** Requests that must all reject CONNECTIONLOSS within `ms`. */
  async function assertLost(calls: Promise<unknown>[], ms: number): Promise<number[]> {
    const t0 = performance.now();
    const outcomes = await within(Promise.all(calls.map((c) => settle(c))), ms);
    assert.notEqual(outcomes, "pending", `requests still pending after ${ms} ms`);
    const done = outcomes as Awaited<ReturnType<typeof settle>>[];
    for (const o of done) {
      assert.equal(o.ok, false, "a request on a dead link resolved");
      const e = (o as { error: unknown }).error;
      assert.ok(e instanceof ZooKeeperError && e.code === ErrorCode.CONNECTIONLOSS, `rejected with ${String(e)}`);
    }
    return [performance.now() - t0, ...done.map((o) => o.ms)];
  }

  it("cut both ways: in-flight requests reject CONNECTIONLOSS at once, the session survives", () =>
    faultCase("cut", async (r) => {
      const calls = Array.from({ length: 20 }, () => r.zk.getData(`${root}/big`));
      proxy.cut();
      const [ms] = await assertLost(calls, 2000);
      process.stdout.write(`cut: 20 requests rejected CONNECTIONLOSS in ${ms!.toFixed(0)} ms\n`);
      await direct.setData(r.watched, "during");
      await assertSurvived(r);
    }));

  it("reset in the middle of a reply frame: CONNECTIONLOSS, the session survives", () =>
    faultCase("reset", async (r) => {
      proxy.drip(true);
      const before = proxy.bytes().down;
      const call = r.zk.getData(`${root}/big`);
      await until("part of the 64 KB reply delivered", () => proxy.bytes().down - before > 200, 10_000, 1);
      proxy.reset();
      proxy.drip(false);
      const delivered = proxy.bytes().down - before;
      assert.ok(delivered < 64 * 1024, `the reply got through whole (${delivered} bytes)`);
      await assertLost([call], 2000);
      await direct.setData(r.watched, "during");
      await assertSurvived(r);
    }, () => proxy.drip(false)));

  it("blackhole (accepts, never answers): the read timeout rejects requests, the session survives when it lifts", () =>
    faultCase("blackhole", async (r) => {
      proxy.blackhole(true);
      const t0 = performance.now();
      const calls = Array.from({ length: 5 }, () => r.zk.getData(r.eph));
      // Detected by the read timeout (2/3 of the session); the limit leaves a scheduler tick of slack.
      await assertLost(calls, READ_TIMEOUT_MS + 2000);
      const ms = performance.now() - t0;
      assert.ok(ms >= READ_TIMEOUT_MS - 2500, `rejected after ${ms.toFixed(0)} ms, before the link could be judged dead`);
      process.stdout.write(`blackhole: requests rejected after ${ms.toFixed(0)} ms (read timeout ${READ_TIMEOUT_MS} ms)\n`);
      assert.equal(r.zk.state, "disconnected");
      await direct.setData(r.watched, "during");
      proxy.blackhole(false);
      await assertSurvived(r);
    }, () => proxy.blackhole(false)));

  it("200 ms delay on every chunk: calls succeed, slower, and the link never drops", () =>
    faultCase("delay", async (r) => {
      proxy.delay(200);
      const t0 = performance.now();
      const got = await r.zk.getData(`${root}/big`);
      const ms = performance.now() - t0;
      assert.equal(got.data?.length, 64 * 1024);
      assert.ok(ms >= 380, `a round trip through 2 × 200 ms took only ${ms.toFixed(0)} ms`);
      const many = await Promise.all(Array.from({ length: 50 }, (_, i) => r.zk.exists(`${root}/nope-${i}`)));
      assert.ok(many.every((s) => s === null));
      await direct.setData(r.watched, "during");
      await until("the watch fired through the delay", () => r.events.length > 0, 5000);
      // Longer than a ping interval, so pings and replies cross the delayed link too.
      await hold(READ_TIMEOUT_MS / 2 + 500);
      proxy.delay(0);
      assert.deepEqual(r.states, [], "no state change while merely slow");
      await assertSurvived(r);
    }, () => proxy.delay(0)));

  it("one byte at a time: frames reassemble exactly, nothing drops", () =>
    faultCase("drip", async (r) => {
      // Every byte travels alone, and the client hears nothing (not even a ping reply) until a whole frame
      // is in: a getData request up and its reply down (~200 bytes here) must drip through within the read
      // timeout. Under Deno a drip step is a write callback plus a >= 1 ms timer, and on a machine at load
      // 30-40 it reached ~16 ms a byte: a 1,000-byte payload, then a 100-byte one with a 6 s session (4 s
      // read timeout), timed out. So the server's longest session (10 s at tickTime 500: 6.7 s read
      // timeout) and 32 bytes, which still make a reply frame reassembled from ~120 one-byte reads.
      const payload = Uint8Array.from({ length: 32 }, (_, i) => (i * 13) & 0xff);
      proxy.drip(true);
      const path = await r.zk.create(`${root}/dripped`, payload);
      const got = await r.zk.getData(path);
      assert.deepEqual(got.data, payload);
      const children = await r.zk.getChildren(root);
      assert.ok(children.includes("dripped"));
      await direct.setData(r.watched, "during");
      await until("the watch fired through the drip", () => r.events.length > 0, 10_000);
      proxy.drip(false);
      assert.deepEqual(r.states, [], "no state change while dripping");
      await assertSurvived(r);
    }, () => proxy.drip(false), 10_000));

  it("half-close (the server side sends FIN): CONNECTIONLOSS, the session survives", () =>
    faultCase("half", async (r) => {
      const calls = Array.from({ length: 10 }, () => r.zk.getData(`${root}/big`));
      proxy.halfClose();
      await assertLost(calls, 2000);
      await direct.setData(r.watched, "during");
      await assertSurvived(r);
    }));

  it("server unreachable (refused) for a while: requests queued meanwhile run after the reconnect", () =>
    faultCase("refuse", async (r) => {
      proxy.refuse(true);
      proxy.cut();
      await until("disconnected", () => r.zk.state === "disconnected", 5000);
      const queued = r.zk.getData(r.eph);
      await direct.setData(r.watched, "during");
      await hold(1500);
      proxy.refuse(false);
      const got = await queued;
      assert.equal(new TextDecoder().decode(got.data!), "refuse");
      await assertSurvived(r);
    }, () => proxy.refuse(false)));

  // --- leaks: a child process must exit by itself promptly after close() ---

  // How long after close() a child may take to exit. The control's leaked timer runs 10 s; a clean child
  // exited within 2 s when the machine was quiet, but 2,013 ms and more at load 30-40 (Node and Deno).
  const EXIT_MS = 5000;

  type Fault = "cut" | "reset" | "blackhole" | "delay" | "drip" | "halfClose";
  const faults: Fault[] = ["cut", "reset", "blackhole", "delay", "drip", "halfClose"];

  function apply(f: Fault, on: boolean): void {
    if (f === "cut" && on) proxy.cut();
    if (f === "reset" && on) proxy.reset();
    if (f === "blackhole") proxy.blackhole(on);
    if (f === "delay") proxy.delay(on ? 200 : 0);
    if (f === "drip") proxy.drip(on);
    if (f === "halfClose" && on) proxy.halfClose();
  }

  it("control: a child that leaks a timer is caught still running 5 s after close()", async () => {
    const child = spawn(...childCommand(CHILD, [proxy.connectString, "200", "control"]), { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await until("the child closed its client", () => out.includes('"closed"'), 60_000); // start-up under load
      assert.equal(await within(exited, EXIT_MS), "pending", "the leaked timer should keep the child alive");
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
  }, 120_000);

  for (const f of faults) {
    it(`no leaked timer or socket after ${f}: the child exits within 5 s of close()`, async () => {
      const child = spawn(...childCommand(CHILD, [proxy.connectString, "1500"]), { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (b: Buffer) => (out += b.toString()));
      child.stderr.on("data", (b: Buffer) => (err += b.toString()));
      const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on("exit", (code) => resolve({ code, at: Date.now() })));
      try {
        // A tsx child on a loaded machine was seen to need more than 20 s to start and connect.
        await until("the child connected", () => out.includes('"ready"'), 60_000);
        await hold(200);
        apply(f, true);
        // Faults that do not end the link stay on through close(); they lift in finally.
        await until("the child closed its client", () => out.includes('"closed"'), 60_000); // start-up under load
        const closedLine = out.split("\n").find((l) => l.includes('"closed"'))!;
        const closed = JSON.parse(closedLine) as { at: number; unhandled: number; outcomes: Record<string, number>; state: string };
        const exit = await within(exited, EXIT_MS + Math.max(0, closed.at - Date.now()));
        assert.notEqual(exit, "pending", `child still running ${EXIT_MS} ms after close(); stderr:\n${err}`);
        const { code, at } = exit as { code: number | null; at: number };
        process.stdout.write(`leak ${f}: exit ${at - closed.at} ms after close, outcomes ${JSON.stringify(closed.outcomes)}\n`);
        assert.equal(code, 0, `child exit code ${code}; stderr:\n${err}`);
        assert.ok(at - closed.at < EXIT_MS, `exited ${at - closed.at} ms after close`);
        assert.equal(closed.unhandled, 0, "unhandled rejections in the child");
        assert.equal(closed.state, "closed");
        const keys = Object.keys(closed.outcomes);
        assert.ok(keys.every((k) => k === "ok" || k === "CONNECTIONLOSS"), `outcomes ${JSON.stringify(closed.outcomes)}`);
      } finally {
        apply(f, false);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    }, 120_000);
  }
});
