// The default resolvers against a real DNS server (Debian's dnsmasq, test/support/servers/dns-server.ts): a client
// process whose /etc/resolv.conf names it (a mount namespace) connects with `dns-srv://_zookeeper._tcp.zk.test`
// through node:dns resolveSrv and getaddrinfo, no resolver injected. The records change under it: the A record
// of its server's name moves (127.0.0.2, a forwarder standing for the old machine, to 127.0.0.1) and it follows at
// its next connection; then the SRV record names another host and it follows at the next refresh.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { DnsServer, dnsProblem } from "../support/servers/dns-server.ts";
import { LineProcess, REPO_DIR, runtimeCommand } from "../support/processes/line-process.ts";

const problem = dnsProblem();

describe("system resolver against a real DNS server (dnsmasq)", () => {
  let server: ZkServer;
  let old: FaultProxy;
  let dnsd: DnsServer;
  let oldConnections = 0; // links through 127.0.0.2, the old address

  if (problem !== null) {
    it("needs root, unshare and dnsmasq", () => {
      if (process.env.CI === "true") assert.fail(`cannot run a DNS server here: ${problem}`);
      process.stderr.write(`[client-dns-system] skipped: ${problem}\n`);
    });
    return;
  }

  beforeAll(async () => {
    server = await startStandalone({ config: { clientPortAddress: "127.0.0.1" } });
    old = await startFaultProxy("127.0.0.1", server.clientPort, { listenHost: "127.0.0.2", port: server.clientPort, onConnection: () => oldConnections++ });
    dnsd = new DnsServer();
  }, 120_000);

  afterAll(async () => {
    await dnsd?.close();
    await old?.close();
    await server?.close();
  }, 60_000);

  it("dns-srv:// and host names through node:dns and getaddrinfo: the client follows A and SRV changes", async () => {
    const port = server.clientPort;
    const srv = "_zookeeper._tcp.zk.test";
    await dnsd.serve({ srv: { [srv]: [{ target: "zk1.zk.test", port }] }, a: { "zk1.zk.test": "127.0.0.2", "zk2.zk.test": "127.0.0.1" } });
    const [cmd, args] = runtimeCommand("node", `${REPO_DIR}test/support/processes/dns-client.ts`);
    const [wcmd, wargs] = dnsd.wrap(cmd, [...args, `dns-srv://${srv}`, "500"]);
    const client = new LineProcess("dns-client", spawn(wcmd, wargs, { cwd: REPO_DIR, stdio: ["pipe", "pipe", "pipe"] }));
    try {
      const first = await client.waitFor("UP", 30_000);
      // The default transport names the host as the connect string does; the forwarder counts who came by 127.0.0.2.
      assert.equal(first.args[1], `zk1.zk.test:${port}`, first.line);
      assert.equal(oldConnections, 1, "zk1.zk.test resolved to 127.0.0.2");
      const id = first.args[0];
      const t0 = performance.now();
      const at = (): string => `${Math.round(performance.now() - t0)} ms`;
      const timeline: string[] = [];

      // The A record moves; the old address goes away.
      await dnsd.serve({ srv: { [srv]: [{ target: "zk1.zk.test", port }] }, a: { "zk1.zk.test": "127.0.0.1", "zk2.zk.test": "127.0.0.1" } });
      old.refuse(true);
      old.cut();
      timeline.push(`${at()} zk1.zk.test A 127.0.0.2 -> 127.0.0.1 (dnsmasq restarted), old address refusing`);
      const moved = await client.waitFor("UP", 20_000);
      timeline.push(`${at()} reconnected to ${moved.args[1]} (127.0.0.1: the forwarder refuses)`);
      assert.equal(moved.args[0], id, "same session");
      assert.equal(moved.args[1], `zk1.zk.test:${port}`);

      // The SRV record names another host; the client's server leaves the list: it moves at the next refresh.
      await dnsd.serve({ srv: { [srv]: [{ target: "zk2.zk.test", port }] }, a: { "zk2.zk.test": "127.0.0.1" } });
      timeline.push(`${at()} SRV now names zk2.zk.test`);
      const down = client.lines.length;
      const srvMoved = await client.waitFor("UP", 20_000);
      assert.equal(srvMoved.args[1], `zk2.zk.test:${port}`);
      timeline.push(`${at()} moved to zk2.zk.test (${client.lines.slice(down).map((l) => l.line).join("; ")})`);
      console.log(`real DNS timeline:\n  ${timeline.join("\n  ")}`);
      assert.ok(client.lines.slice(down).every((l) => l.kind !== "UP" || l.args[0] === id), "same session");
    } finally {
      await client.close();
    }
  }, 90_000);
});
