// updateServerList() while a reconnect is under way, on an injected clock and transport: a dial to a
// host that left the list must not become the session's server (seen under load in the reconfig test:
// the client stayed on the removed server 1 because its dial had begun before the list changed).
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ErrorCode, ZooKeeper, ZooKeeperError, type Link, type LinkHandlers, type SessionState, type SrvTarget, type Transport } from "../../src/index.ts";
import { parseDnsSrv } from "../../src/protocol/connect-string.ts";
import { ManualClock, settle } from "../support/fakes/fake-clock.ts";
import { FakeZk } from "../support/fakes/fake-zk.ts";

/** One fake server per host name; a host's dials can be held at a gate; the test can drop the live link. */
class Hosts implements Transport {
  readonly servers = new Map<string, FakeZk>();
  readonly dials: string[] = [];
  private gates = new Map<string, Promise<void>>();
  private live: LinkHandlers | null = null;

  hold(host: string): () => void {
    let open!: () => void;
    this.gates.set(host, new Promise<void>((r) => (open = r)));
    return () => {
      this.gates.delete(host);
      open();
    };
  }

  drop(): void {
    this.live?.onClose(new Error("dropped by the test"));
  }

  async connect(target: { host: string; port: number }, handlers: LinkHandlers): Promise<Link> {
    this.dials.push(target.host);
    await this.gates.get(target.host);
    let server = this.servers.get(target.host);
    if (!server) this.servers.set(target.host, (server = new FakeZk()));
    const link = await server.connect(target, handlers);
    this.live = handlers;
    return { write: (b) => link.write(b), close: () => link.close(), remote: `${target.host}:${target.port}` };
  }
}

describe("updateServerList during a reconnect", () => {
  it("a dial begun to a host that then left the list is dropped; the client settles on a listed host", async () => {
    const clock = new ManualClock();
    const hosts = new Hosts();
    const pending = ZooKeeper.connect("a:2181", { transport: hosts, clock, sessionTimeout: 3000, connectTimeout: 10_000 });
    await settle();
    const zk = await pending;
    assert.equal(zk.remoteAddress, "a:2181");
    const states: Array<[SessionState, string | null]> = [];
    zk.on("state", (s) => states.push([s, zk.remoteAddress]));

    const open = hosts.hold("a"); // the reconnect's dial to a hangs until the list has changed
    hosts.drop();
    await settle();
    assert.equal(zk.state, "disconnected");
    await clock.advance(1100); // the Java client's random 0-1 s before a redial
    assert.deepEqual(hosts.dials, ["a", "a"]);
    zk.updateServerList("b:2181");
    open(); // a answers now, after it left the list
    await settle();
    await clock.advance(2100); // the next attempt, to b
    await settle();

    assert.equal(zk.state, "connected");
    assert.equal(zk.remoteAddress, "b:2181");
    assert.deepEqual(hosts.dials, ["a", "a", "b"]);
    assert.deepEqual(states.filter(([s]) => s === "connected"), [["connected", "b:2181"]], "never connected to a after it left the list");
    hosts.servers.get("b")!.refuse = true;
    await zk.close();
  });
});

describe("ConnectOptions.resolver on every attempt", () => {
  it("names are resolved again for each dial; a name that no longer resolves is skipped without the random pause", async () => {
    const clock = new ManualClock();
    const hosts = new Hosts();
    const table = new Map([["a", ["10.0.0.1"]], ["b", ["10.0.0.2"]]]);
    const asked: string[] = [];
    const resolver = async (name: string): Promise<string[]> => {
      asked.push(name);
      const addresses = table.get(name);
      if (addresses === undefined) throw new Error(`getaddrinfo ENOTFOUND ${name}`);
      return addresses;
    };
    const pending = ZooKeeper.connect("a:2181,b:2181", { transport: hosts, clock, resolver, sessionTimeout: 3000, connectTimeout: 10_000 });
    await settle();
    const zk = await pending;
    assert.equal(hosts.dials.length, 1);
    const here = hosts.dials[0]!; // the address dialled, not the name
    const mine = here === "10.0.0.1" ? "a" : "b";
    const other = mine === "a" ? "b" : "a";
    assert.equal(zk.remoteAddress, `${here}:2181`);
    table.delete(other);
    hosts.drop();
    await settle();
    assert.equal(zk.state, "disconnected");
    // The random 0-1 s before the first redial, which goes to the other host: 1 ms at a time until it is asked.
    const before = asked.length;
    for (let ms = 0; ms <= 1000 && !asked.slice(before).includes(other); ms++) await clock.advance(1);
    // The other name failed to resolve (no dial) and the next host was dialled in the same ms: no second random pause.
    assert.equal(zk.state, "connected");
    assert.deepEqual(hosts.dials, [here, here]);
    assert.deepEqual(asked.slice(-2), [other, mine]);
    await zk.close();
  });
});

describe("dns-srv:// connect strings (ZooKeeper 3.10's form)", () => {
  it("parses NAME[/chroot]; anything else is BADARGUMENTS", async () => {
    assert.deepEqual(parseDnsSrv("dns-srv://_zookeeper._tcp.example.com"), { name: "_zookeeper._tcp.example.com", chroot: "" });
    assert.deepEqual(parseDnsSrv("dns-srv://_zookeeper._tcp.example.com/app/x"), { name: "_zookeeper._tcp.example.com", chroot: "/app/x" });
    assert.equal(parseDnsSrv("zk1:2181,zk2:2181"), null);
    for (const bad of ["dns-srv://", "dns-srv://a.com:2181", "dns-srv://a.com,b.com", "dns-srv://a..com", "dns-srv://a.com/bad/"]) {
      const err = await ZooKeeper.connect(bad, { srvResolver: async () => [] }).then(() => null, (e: unknown) => e);
      assert.ok(err instanceof ZooKeeperError && err.code === ErrorCode.BADARGUMENTS, `${bad}: ${String(err)}`);
    }
  });

  it("no SRV record, or a failed lookup, at connect(): CONNECTIONLOSS saying so", async () => {
    const none = await ZooKeeper.connect("dns-srv://_zookeeper._tcp.none.test", { srvResolver: async () => [] }).then(() => null, (e: unknown) => e);
    assert.ok(none instanceof ZooKeeperError && none.code === ErrorCode.CONNECTIONLOSS, String(none));
    assert.match(none.message, /no SRV records found for _zookeeper\._tcp\.none\.test/);
    const failed = await ZooKeeper.connect("dns-srv://_zookeeper._tcp.none.test", { srvResolver: () => Promise.reject(new Error("querySrv ESERVFAIL")) }).then(() => null, (e: unknown) => e);
    assert.ok(failed instanceof ZooKeeperError && failed.code === ErrorCode.CONNECTIONLOSS, String(failed));
    assert.match(failed.message, /SRV lookup of _zookeeper\._tcp\.none\.test failed: querySrv ESERVFAIL/);
  });

  it("looked up again every 60 s on the client's clock; a changed set is rebalanced onto; a failed lookup keeps the list", async () => {
    const clock = new ManualClock();
    const hosts = new Hosts();
    let records: SrvTarget[] | Error = [{ name: "a.", port: 2181 }];
    let lookups = 0;
    const srvResolver = async (name: string): Promise<SrvTarget[]> => {
      assert.equal(name, "_zookeeper._tcp.zk.test");
      lookups++;
      if (records instanceof Error) throw records;
      return records;
    };
    const pending = ZooKeeper.connect("dns-srv://_zookeeper._tcp.zk.test", { transport: hosts, clock, srvResolver, sessionTimeout: 30_000, connectTimeout: 10_000 });
    await settle();
    const zk = await pending;
    assert.equal(zk.remoteAddress, "a:2181");
    const id = zk.sessionId;
    records = [{ name: "b", port: 2181 }];
    await clock.advance(59_999);
    assert.equal(lookups, 1, "no lookup before the period");
    await clock.advance(1);
    assert.equal(lookups, 2);
    await clock.advance(1100); // a left the list: the client moves (after the Java client's random 0-1 s)
    assert.equal(zk.state, "connected");
    assert.equal(zk.remoteAddress, "b:2181");
    assert.equal(zk.sessionId, id);
    records = new Error("querySrv ETIMEOUT");
    await clock.advance(60_000);
    assert.equal(lookups, 3);
    assert.equal(zk.remoteAddress, "b:2181", "a failed lookup changes nothing");
    await zk.close();
    await clock.advance(300_000);
    assert.equal(lookups, 3, "no lookup after close()");
  });
});
