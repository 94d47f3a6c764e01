// updateServerList() while a reconnect is under way, on an injected clock and transport: a dial to a
// host that left the list must not become the session's server (seen under load in the reconfig test:
// the client stayed on the removed server 1 because its dial had begun before the list changed).
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ZooKeeper, type Link, type LinkHandlers, type SessionState, type Transport } from "../../src/index.ts";
import { ManualClock, settle } from "../support/fake-clock.ts";
import { FakeZk } from "../support/fake-zk.ts";

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
