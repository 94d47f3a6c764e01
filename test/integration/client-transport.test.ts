// ConnectOptions.transport and .clock against a real server: a counting transport that wraps
// defaultTransport carries every connection (the first and each reconnect) and every byte, and a
// counting clock is the one the client's timers run on.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { sharedServer } from "../support/servers/zk-server.ts";
import { until } from "../support/wait.ts";
import { ZooKeeper, defaultTransport, systemClock, type Clock, type Link, type Transport } from "../../src/index.ts";
import { onSession, removeRoot, uniqueRoot } from "../support/sessions.ts";

/** defaultTransport with counts, and a way to cut the current link. */
function countingTransport(): Transport & { connects: number; written: number; read: number; links: Link[] } {
  const t = {
    connects: 0,
    written: 0,
    read: 0,
    links: [] as Link[],
    async connect(...[target, handlers, options]: Parameters<Transport["connect"]>): Promise<Link> {
      t.connects++;
      const link = await defaultTransport.connect(target, { ...handlers, onData: (chunk) => ((t.read += chunk.length), handlers.onData(chunk)) }, options);
      const counted: Link = { remote: link.remote, close: () => link.close(), write: (bytes) => ((t.written += bytes.length), link.write(bytes)) };
      t.links.push(counted);
      return counted;
    },
  };
  return t;
}

describe("custom transport and clock (real server)", () => {
  let connect: string;
  const clients: ZooKeeper[] = [];
  const root = uniqueRoot("transport");

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => {});
    if (connect) await onSession(connect, (zk) => removeRoot(zk, root)); // the first test deletes it, unless it failed midway
  });

  it("every connection and byte goes through ConnectOptions.transport, reconnects included", async () => {
    const transport = countingTransport();
    const zk = await ZooKeeper.connect(connect, { transport, sessionTimeout: 6000 });
    clients.push(zk);
    assert.equal(transport.connects, 1);
    await zk.create(root, "via the transport");
    assert.equal(new TextDecoder().decode((await zk.getData(root)).data!), "via the transport");
    assert.ok(transport.written > 0 && transport.read > 0, `${transport.written} bytes out, ${transport.read} in`);
    const session = zk.sessionId;
    transport.links.at(-1)!.close(); // cut the link: the client must come back through the transport
    await until("reconnected", () => transport.connects >= 2 && zk.state === "connected");
    assert.equal(zk.sessionId, session, "same session");
    assert.notEqual(await zk.exists(root), null);
    await zk.delete(root);
  });

  it("the client's timers and lastHeardAt run on ConnectOptions.clock", async () => {
    let timers = 0;
    let reads = 0;
    const clock: Clock = {
      now: () => (reads++, systemClock.now()),
      setTimeout: (fn, ms) => (timers++, systemClock.setTimeout(fn, ms)),
      clearTimeout: (h) => systemClock.clearTimeout(h),
    };
    const zk = await ZooKeeper.connect(connect, { clock, sessionTimeout: 6000 });
    clients.push(zk);
    assert.equal(zk.clock, clock);
    await until("the ping tick armed on the clock", () => timers >= 3);
    assert.ok(reads > 0);
    assert.equal(zk.heardWithin(zk.readTimeout), true);
    await zk.exists("/");
    assert.ok(zk.leaseRemaining() > 0 && zk.leaseRemaining() <= zk.readTimeout);
  });
});
