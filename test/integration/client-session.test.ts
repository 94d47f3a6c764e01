// Session behaviour against a real server, with a fault proxy between client and server: resume by
// id and password, server-declared expiry, a real expiry after a frozen link, the read timeout, pings,
// in-flight and queued requests around a drop, close() semantics, and a prompt process exit.
import { describe, it, beforeAll } from "../support/bdd.ts";
import { itFrom } from "../support/servers/zk-line.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { SharedSessions, type SessionOptions, recorder, rejectsWith, uniqueRoot } from "../support/sessions.ts";
import { hold, until } from "../support/wait.ts";
import type { FaultProxy } from "../support/fakes/fault-proxy.ts";
import { CreateMode, EventType, KeeperState, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import type { WatchedEvent } from "../../src/index.ts";

describe("client sessions (real server)", () => {
  const sessions = new SharedSessions();
  let other: ZooKeeper;
  const root = uniqueRoot("sess");
  sessions.hooks(() => other?.deleteRecursive(root)); // the run's nodes are all below root

  const viaProxy = async (opts: SessionOptions = {}): Promise<{ zk: ZooKeeper; proxy: FaultProxy; states: string[] }> => {
    const proxy = await sessions.proxy();
    const zk = await sessions.client({ connectString: proxy.connectString, sessionTimeout: 4000, trackEnsemble: false, ...opts }); // bytes are counted (pings): no tracker read
    const states: string[] = [];
    zk.on("state", (s) => states.push(s));
    return { zk, proxy, states };
  };

  beforeAll(async () => {
    other = await sessions.client();
    await other.create(root);
  });

  itFrom("3.6", "resumes a session by id and password from a second instance; the first then learns 'expired'", async () => {
    const { zk: a, proxy, states } = await viaProxy({ sessionTimeout: 10_000 });
    const eph = await a.create(`${root}/resume`, "a", { mode: CreateMode.EPHEMERAL });
    const w = recorder();
    await a.exists(`${root}/never`, w.watcher);
    proxy.refuse(true);
    proxy.cut();
    await until("a disconnected", () => a.state === "disconnected");
    const pending = a.getData(eph).then(() => "resolved", (e: ZooKeeperError) => e.message); // queued while disconnected
    const b = await ZooKeeper.connect(sessions.connectString, { sessionId: a.sessionId, sessionPassword: a.sessionPassword, sessionTimeout: 10_000 });
    try {
      assert.equal(b.sessionId, a.sessionId);
      assert.deepEqual(await b.getEphemerals(root), [eph], "the resumed session owns the ephemeral node");
      assert.equal((await other.exists(eph))!.ephemeralOwner, a.sessionId);
    } finally {
      await b.close();
    }
    await until("the ephemeral node to go with the closed session", async () => (await other.exists(eph)) === null, 5000);
    proxy.refuse(false);
    await until("a to learn that its session is gone", () => a.state === "expired", 15_000);
    assert.deepEqual(states, ["disconnected", "expired"]);
    assert.match(await pending, new RegExp(`^SESSIONEXPIRED \\(getData ${eph}\\): session 0x[0-9a-f]+ has expired; connect a new client$`));
    const after = await rejectsWith(a.exists("/"), "SESSIONEXPIRED");
    assert.equal(after.message, "SESSIONEXPIRED (exists /): the session has expired; connect a new client");
    await until("the Expired event", () => w.events.length > 0);
    assert.deepEqual(w.events, [{ type: EventType.None, state: KeeperState.Expired, path: null }]);
  }, 60_000);

  it("rejects SESSIONEXPIRED when resuming with a wrong password", async () => {
    const a = await sessions.client();
    const states: string[] = [];
    a.on("state", (s) => states.push(s));
    const t0 = Date.now();
    await rejectsWith(ZooKeeper.connect(sessions.connectString, { sessionId: a.sessionId, sessionPassword: new Uint8Array(16), connectTimeout: 5000 }), "SESSIONEXPIRED");
    assert.ok(Date.now() - t0 < 2000);
    // Measured on 3.8.0: the server closes the session's current connection (CLIENT_RECONNECT) before it
    // checks the password, so the real owner is disconnected too; it reconnects within its session.
    await until("the owner to be back", () => states.includes("disconnected") && a.state === "connected", 10_000);
    assert.deepEqual(states, ["disconnected", "connected"]);
    assert.ok(await a.exists("/"));
  }, 60_000);

  it("a silent link means 'disconnected' after the read timeout; in-flight calls reject CONNECTIONLOSS; then it resumes", async () => {
    const { zk, proxy, states } = await viaProxy();
    assert.equal(zk.negotiatedTimeout, 4000);
    assert.equal(Math.round(zk.readTimeout), 2667);
    const id = zk.sessionId;
    proxy.blackhole(true);
    const t0 = performance.now();
    const inFlight = zk.getData("/").then(
      () => "resolved",
      (e: ZooKeeperError) => e.codeName,
    );
    await until("disconnected", () => zk.state === "disconnected", 6000);
    const took = performance.now() - t0;
    assert.ok(took >= 2400 && took < 4000, `disconnected after ${Math.round(took)} ms; read timeout is 2667 ms`);
    assert.equal(await inFlight, "CONNECTIONLOSS");
    // A redial through the blackhole is under way now and has heard nothing. The whole silence stays
    // well under the 4 s session timeout, so the server cannot have expired the session meanwhile.
    await hold(300); // more silence: a redial that hears nothing must not refresh lastHeardAt
    assert.ok(performance.now() - zk.lastHeardAt >= took + 250, `lastHeardAt is ${Math.round(performance.now() - zk.lastHeardAt)} ms old`);
    proxy.blackhole(false);
    await until("reconnected", () => zk.state === "connected", 6000);
    assert.equal(zk.sessionId, id);
    assert.deepEqual(states, ["disconnected", "connected"]);
  }, 60_000);

  it("pings keep an idle session alive well past its timeout", async () => {
    const { zk, proxy, states } = await viaProxy();
    const eph = await zk.create(`${root}/idle`, null, { mode: CreateMode.EPHEMERAL });
    const up0 = proxy.bytes().up;
    await hold(9000); // idle for more than twice the session timeout
    const pings = (proxy.bytes().up - up0) / 12;
    // ping interval = readTimeout / 2 = 1333 ms: about 6 in 9 s
    assert.ok(pings >= 5 && pings <= 8 && Number.isInteger(pings), `saw ${pings} pings' worth of bytes`);
    assert.deepEqual(states, []);
    assert.equal((await other.exists(eph))!.ephemeralOwner, zk.sessionId);
  }, 60_000);

  it("a link frozen past the session timeout expires the session: state 'expired', ephemerals gone", async () => {
    const { zk, proxy, states } = await viaProxy();
    const eph = await zk.create(`${root}/doomed`, null, { mode: CreateMode.EPHEMERAL });
    const w = recorder();
    await zk.getData(eph, w.watcher);
    proxy.blackhole(true);
    await until("the server to expire the session", async () => (await other.exists(eph)) === null, 15_000);
    await until("expired", () => zk.state === "expired", 10_000);
    assert.deepEqual(states, ["disconnected", "expired"]);
    await rejectsWith(zk.getData(eph), "SESSIONEXPIRED");
    await until("the Expired event", () => w.events.length > 0);
    assert.deepEqual(w.events, [{ type: EventType.None, state: KeeperState.Expired, path: null }]);
  }, 60_000);

  it("without client-side expiry, the server's answer on reconnect declares the expiry", async () => {
    const { zk, proxy, states } = await viaProxy({ clientSideExpiry: false });
    const eph = await zk.create(`${root}/doomed2`, null, { mode: CreateMode.EPHEMERAL });
    proxy.refuse(true);
    proxy.cut();
    await until("the server to expire the session", async () => (await other.exists(eph)) === null, 15_000);
    assert.equal(zk.state, "disconnected");
    proxy.refuse(false);
    await until("expired", () => zk.state === "expired", 10_000);
    assert.deepEqual(states, ["disconnected", "expired"]);
  }, 60_000);

  it("every pipelined request in flight rejects CONNECTIONLOSS when the link drops, none hangs", async () => {
    const { zk, proxy } = await viaProxy({ sessionTimeout: 10_000 });
    proxy.blackhole(true);
    const calls = Array.from({ length: 200 }, (_, i) => zk.exists(`/n${i}`).then(() => "ok", (e: ZooKeeperError) => e.codeName));
    await hold(100); // the requests leave the client (into the blackhole) before the cut
    proxy.cut();
    const results = await Promise.all(calls);
    assert.deepEqual(new Set(results), new Set(["CONNECTIONLOSS"]));
    proxy.blackhole(false);
    await until("reconnected", () => zk.state === "connected", 10_000);
    assert.ok(await zk.exists("/"));
  }, 60_000);

  it("a request cut on the wire rejects CONNECTIONLOSS; requests made while disconnected wait for the reconnect", async () => {
    const { zk, proxy, states } = await viaProxy({ sessionTimeout: 10_000 });
    const cut = proxy.cutAfterRequest(1 /* create */, { forward: false });
    await rejectsWith(zk.create(`${root}/cut`), "CONNECTIONLOSS");
    assert.equal((await cut).fired, true);
    assert.equal(await other.exists(`${root}/cut`), null, "the cut request never reached the server");
    proxy.refuse(true);
    await until("disconnected", () => zk.state === "disconnected");
    const later = zk.create(`${root}/later`, "q");
    await hold(300); // the request waits while the server is unreachable
    proxy.refuse(false);
    assert.equal(await later, `${root}/later`);
    assert.deepEqual(states.slice(-2), ["disconnected", "connected"]);
  }, 60_000);

  it("a lost link: the session reads disconnected, its state event out, before any call rejects CONNECTIONLOSS", async () => {
    const { zk, proxy, states } = await viaProxy({ sessionTimeout: 10_000 });
    proxy.refuse(true); // stay down while the rejections are looked at
    const cut = proxy.cutAfterRequest(4 /* getData */, { forward: false });
    const seen: string[] = [];
    const calls = [zk.getData("/"), zk.exists("/"), zk.getChildren("/")].map((p) =>
      p.then(
        () => "resolved",
        (e: { codeName?: string }) => {
          seen.push(`${e.codeName} with state ${zk.state}, events [${states.join(",")}]`);
          return e.codeName;
        },
      ),
    );
    assert.deepEqual(await Promise.all(calls), ["CONNECTIONLOSS", "CONNECTIONLOSS", "CONNECTIONLOSS"]);
    assert.equal((await cut).fired, true);
    assert.deepEqual(seen, Array(3).fill("CONNECTIONLOSS with state disconnected, events [disconnected]"));
    proxy.refuse(false);
    await until("reconnected", () => zk.state === "connected", 15_000);
  }, 60_000);

  it("close() ends the session at once; later calls reject SESSIONEXPIRED saying the client is closed", async () => {
    const zk = await ZooKeeper.connect(sessions.connectString, { sessionTimeout: 10_000 });
    const eph = await zk.create(`${root}/closing`, null, { mode: CreateMode.EPHEMERAL });
    const states: string[] = [];
    zk.on("state", (s) => states.push(s));
    const events: WatchedEvent[] = [];
    await zk.exists(`${root}/x`, (e) => events.push(e));
    await zk[Symbol.asyncDispose]();
    assert.equal(zk.state, "closed");
    assert.deepEqual(states, ["closed"]);
    assert.equal(await other.exists(eph), null, "closeSession removed the ephemeral node");
    const e = await rejectsWith(zk.getData("/"), "SESSIONEXPIRED");
    assert.equal(e.message, "SESSIONEXPIRED (getData /): the client is closed (close() was called); connect a new client");
    const a = await rejectsWith(zk.addAuthInfo("digest", "a:b"), "SESSIONEXPIRED");
    assert.equal(a.message, "SESSIONEXPIRED (addAuthInfo): the client is closed (close() was called); connect a new client");
    await zk.close(); // idempotent
    assert.deepEqual(states, ["closed"]);
  }, 60_000);

  it("connect() rejects CONNECTIONLOSS after connectTimeout when no server answers", async () => {
    const proxy = await sessions.proxy();
    proxy.refuse(true);
    const t0 = Date.now();
    const e = await rejectsWith(ZooKeeper.connect(proxy.connectString, { connectTimeout: 1500 }), "CONNECTIONLOSS");
    const took = Date.now() - t0;
    assert.ok(took >= 1400 && took < 3000, `took ${took} ms`);
    assert.match(e.message, /no session established within 1500 ms/);
  }, 60_000);

  itFrom("3.6", "a process that closes its client exits by itself within 2 s", async () => {
    const script = fileURLToPath(new URL("./client-exit-child.ts", (import.meta as { url: string }).url));
    const g = globalThis as { Bun?: unknown; Deno?: unknown };
    const args = g.Deno ? ["run", "-A", script] : g.Bun ? [script] : ["--import", "tsx", script];
    const child = spawn(process.execPath, [...args, sessions.connectString, `${root}/child`], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let closedAt = 0;
    child.stdout!.on("data", (d: Uint8Array) => {
      out += new TextDecoder().decode(d);
      if (!closedAt && out.includes("closed")) closedAt = Date.now();
    });
    child.stderr!.on("data", (d: Uint8Array) => (err += new TextDecoder().decode(d)));
    const code = await new Promise<number | null>((resolve) => {
      const killer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("exit", (c) => {
        clearTimeout(killer);
        resolve(c);
      });
    });
    const exitedAt = Date.now();
    assert.equal(code, 0, `child failed: ${err}`);
    assert.ok(closedAt > 0, `child never closed: ${out} ${err}`);
    assert.ok(exitedAt - closedAt < 2000, `exit took ${exitedAt - closedAt} ms after close()`);
  }, 60_000);
});
