// Host names resolved again on every connection attempt (issue 42 item 3, kazoo #794), through the injected
// ConnectOptions.resolver, against a real server: "zk.test" first names 127.0.0.2 (a TCP forwarder to the
// server there, standing for its old machine), then the server "moves" (the old address refuses) and the name
// now gives 127.0.0.1, where the server listens itself: the client follows, keeping its session. A name that no
// longer resolves is skipped for the next host; only when no host resolves does connect() fail, saying so.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ErrorCode, ZooKeeper, ZooKeeperError, type Logger, type SrvTarget } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { until, untilState } from "../support/wait.ts";

/** A resolver from a table the test changes, counting the calls per name. */
function tableResolver(table: Map<string, string[]>): { resolver: (host: string) => Promise<string[]>; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const resolver = async (host: string): Promise<string[]> => {
    calls.set(host, (calls.get(host) ?? 0) + 1);
    const addresses = table.get(host);
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses;
  };
  return { resolver, calls };
}

function recorder(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (m: string): void => void lines.push(m);
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

describe("host names resolved on every attempt (ConnectOptions.resolver, real server)", () => {
  let server: ZkServer;
  let old: FaultProxy; // 127.0.0.2:port -> the server: its old address
  let oldConnections = 0;
  const clients: ZooKeeper[] = [];

  beforeAll(async () => {
    // The server listens on 127.0.0.1 only, so 127.0.0.2 with the same port is free for the old address.
    server = await startStandalone({ config: { clientPortAddress: "127.0.0.1" } });
    old = await startFaultProxy("127.0.0.1", server.clientPort, { listenHost: "127.0.0.2", port: server.clientPort, onConnection: () => oldConnections++ });
  }, 120_000);

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    await old?.close();
    await server?.close();
  }, 60_000);

  it("a server whose name moved to another address is found there; the session is kept", async () => {
    const port = server.clientPort;
    const table = new Map([["zk.test", ["127.0.0.2"]]]);
    const { resolver, calls } = tableResolver(table);
    const zk = await ZooKeeper.connect(`zk.test:${port}`, { resolver, sessionTimeout: 30_000 });
    clients.push(zk);
    assert.equal(zk.remoteAddress, `127.0.0.2:${port}`);
    assert.equal(oldConnections, 1);
    const id = zk.sessionId;
    const t0 = performance.now();
    const at = (): string => `${Math.round(performance.now() - t0)} ms`;
    const timeline: string[] = [];
    table.set("zk.test", ["127.0.0.1"]);
    old.refuse(true); // the old machine is gone
    old.cut();
    timeline.push(`${at()} zk.test now 127.0.0.1; 127.0.0.2 refuses, its link cut`);
    await untilState(zk, "disconnected");
    await untilState(zk, "connected");
    timeline.push(`${at()} reconnected to ${zk.remoteAddress}`);
    console.log(`moved-name timeline:\n  ${timeline.join("\n  ")}`);
    assert.equal(zk.remoteAddress, `127.0.0.1:${port}`);
    assert.equal(zk.sessionId, id);
    assert.equal(oldConnections, 1, "no dial went to the old address after the move");
    assert.ok(calls.get("zk.test")! >= 2, "resolved again for the reconnect");
    await zk.sync("/");
    old.refuse(false);
  }, 60_000);

  it("a name that no longer resolves is skipped for the next host, not fatal", async () => {
    const port = server.clientPort;
    // gone.test first names an address where nothing listens, so the session is made on zk.test.
    const table = new Map([["zk.test", ["127.0.0.2"]], ["gone.test", ["127.0.0.3"]]]);
    const { resolver, calls } = tableResolver(table);
    const { logger, lines } = recorder();
    const zk = await ZooKeeper.connect(`gone.test:${port},zk.test:${port}`, { resolver, logger, sessionTimeout: 30_000 });
    clients.push(zk);
    assert.equal(zk.remoteAddress, `127.0.0.2:${port}`);
    const id = zk.sessionId;
    table.delete("gone.test"); // gone.test stops resolving
    table.set("zk.test", ["127.0.0.1"]);
    const before = calls.get("gone.test") ?? 0;
    const t0 = performance.now();
    old.cut();
    await untilState(zk, "disconnected");
    // Round robin: from zk.test the next host is gone.test, which is skipped, then zk.test again.
    await until("gone.test was tried and zk.test reached", () => (calls.get("gone.test") ?? 0) > before && zk.state === "connected" && zk.remoteAddress === `127.0.0.1:${port}`, 20_000);
    const skipped = lines.find((l) => l.includes("gone.test did not resolve"));
    console.log(`skipped-name timeline:\n  ${Math.round(performance.now() - t0)} ms reconnected to ${zk.remoteAddress}; skipped: ${skipped?.replace(/^.*failed: /, "")}`);
    assert.ok(skipped !== undefined, lines.join("\n"));
    assert.equal(zk.sessionId, id);
  }, 60_000);

  it("when no host resolves, connect() fails with CONNECTIONLOSS saying so", async () => {
    const { resolver } = tableResolver(new Map());
    const port = server.clientPort;
    const err = await ZooKeeper.connect(`gone.test:${port},also-gone.test:${port}`, { resolver, connectTimeout: 1500 })
      .then(async (zk) => (await zk.close(), null), (e: unknown) => e);
    assert.ok(err instanceof ZooKeeperError && err.code === ErrorCode.CONNECTIONLOSS, String(err));
    assert.match(err.message, /ENOTFOUND on every host/);
    const bad = await ZooKeeper.connect(`zk.test:${port}`, { resolver: "dns" as never }).then(() => null, (e: unknown) => e);
    assert.ok(bad instanceof ZooKeeperError && bad.code === ErrorCode.BADARGUMENTS, String(bad));
  }, 30_000);

  it("dns-srv://NAME/chroot: the SRV records' servers, followed when the record changes; the chroot kept", async () => {
    const port = server.clientPort;
    // The SRV record first names old.zk.test (127.0.0.2, the forwarder), then new.zk.test (127.0.0.1).
    const { resolver } = tableResolver(new Map([["old.zk.test", ["127.0.0.2"]], ["new.zk.test", ["127.0.0.1"]]]));
    let target = "old.zk.test";
    let lookups = 0;
    const srvResolver = async (name: string): Promise<SrvTarget[]> => {
      assert.equal(name, "_zookeeper._tcp.zk.test");
      lookups++;
      return [{ name: target, port }];
    };
    const root = `/dns-srv-${Date.now()}`;
    const plain = await ZooKeeper.connect(server.connectString);
    clients.push(plain);
    await plain.create(root, "");
    const zk = await ZooKeeper.connect(`dns-srv://_zookeeper._tcp.zk.test${root}`, { srvResolver, resolver, srvRefreshMs: 200, sessionTimeout: 30_000 });
    clients.push(zk);
    assert.equal(zk.remoteAddress, `127.0.0.2:${port}`);
    await zk.create("/child", "via srv");
    assert.equal(new TextDecoder().decode((await plain.getData(`${root}/child`)).data!), "via srv");
    const id = zk.sessionId;
    const t0 = performance.now();
    target = "new.zk.test";
    const seen = lookups;
    await until("the client follows the SRV record", () => zk.state === "connected" && zk.remoteAddress === `127.0.0.1:${port}`, 20_000);
    console.log(`dns-srv timeline:\n  0 ms SRV record now names new.zk.test\n  ${Math.round(performance.now() - t0)} ms reconnected to ${zk.remoteAddress} (${lookups - seen} lookups since)`);
    assert.equal(zk.sessionId, id);
    assert.equal(new TextDecoder().decode((await zk.getData("/child")).data!), "via srv", "the chroot is kept");
  }, 60_000);
});
