// Read-only mode on a real 3.8.0 ensemble: with 2 of 3 servers down, a `readOnly: true` client gets
// a 'connectedReadOnly' session from the survivor (which needs readonlymode.enabled=true plus
// localSessionsEnabled and localSessionsUpgradingEnabled, see startEnsemble({ readOnly: true })),
// reads work, writes reject NOTREADONLY; once the quorum is back, the isro probe moves it to a
// read-write server, dialling through the session's Transport (host names only it resolves).
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { startEnsemble, type ZkEnsemble } from "../support/servers/zk-server.ts";
import { CreateMode, ZooKeeper, defaultTransport, type Transport } from "../../src/index.ts";
import { rejectsWith } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

describe("client read-only mode (real ensemble)", () => {
  let ensemble: ZkEnsemble | undefined;

  afterAll(async () => {
    await ensemble?.close();
  }, 60_000);

  it("serves reads, rejects writes NOTREADONLY, then moves to a read-write server", async () => {
    // Started here, not in beforeAll: Bun's node:test ignores hook timeouts (5 s cap).
    ensemble = await startEnsemble({ readOnly: true });
    const setup = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout: 10_000 });
    await setup.create("/ro", "before");
    await setup.close();

    const [survivor, ...down] = ensemble.servers;
    for (const s of down) await s.kill("SIGKILL");
    await until("the survivor to turn read-only", async () => (await survivor!.fourLetter("isro").catch(() => "")) === "ro", 30_000);

    // a client that does not accept read-only servers gets no session
    await rejectsWith(ZooKeeper.connect(survivor!.connectString, { connectTimeout: 2000 }), "CONNECTIONLOSS");

    // Host names only this Transport can resolve: the session, and the isro probe that finds the read-write
    // server, must both dial through it (a direct socket would fail to resolve "zk-1.invalid").
    const real = ensemble.connectString.split(",");
    const named = real.map((_, i) => `zk-${i}.invalid:2181`).join(",");
    const words: string[] = [];
    // Dials made while the session is read-only: only the probe dials then (the session's own link is up).
    let probeDials = 0;
    let zkState = (): string => "connecting";
    const transport: Transport = {
      connect: async (target, handlers, options) => {
        if (zkState() === "connectedReadOnly") probeDials++;
        const [host, port] = real[Number(/^zk-(\d+)\.invalid$/.exec(target.host)?.[1] ?? -1)]?.split(":") ?? [];
        if (!host) throw new Error(`no such host ${target.host}`);
        const link = await defaultTransport.connect({ host, port: Number(port) }, handlers, options);
        let first = true;
        return {
          remote: link.remote,
          close: () => link.close(),
          write: (bytes) => {
            if (first && bytes.length === 4) words.push(new TextDecoder().decode(bytes)); // a four-letter word
            first = false;
            return link.write(bytes);
          },
        };
      },
    };
    const zk = await ZooKeeper.connect(named, { readOnly: true, sessionTimeout: 10_000, connectTimeout: 30_000, transport });
    try {
      const states: string[] = [];
      zk.on("state", (s) => states.push(s));
      zkState = () => zk.state;
      assert.equal(zk.state, "connectedReadOnly");
      assert.equal(zk.remoteAddress, survivor!.connectString);
      assert.equal(new TextDecoder().decode((await zk.getData("/ro")).data!), "before");
      assert.deepEqual(await zk.getChildren("/ro"), []);
      assert.ok(await zk.exists("/ro"));
      await rejectsWith(zk.create("/ro/x"), "NOTREADONLY");
      await rejectsWith(zk.setData("/ro", "y"), "NOTREADONLY");
      await rejectsWith(zk.delete("/ro"), "NOTREADONLY");
      await rejectsWith(zk.create("/ro-eph", null, { mode: CreateMode.EPHEMERAL }), "NOTREADONLY");

      // The probe dials the other hosts by the names only the transport resolves, while they are still down.
      await until("the read-only probe to dial through the transport", () => probeDials >= 2, 30_000);
      for (const s of down) await s.start();
      await ensemble.waitForQuorum();
      // the probe (isro, backoff doubling from 100 ms) finds a read-write server and moves there
      await until("a read-write session", () => zk.state === "connected", 60_000);
      assert.deepEqual(states.slice(-2), ["disconnected", "connected"]);
      // Whether the probe or the server's own leaving read-only mode moved the session first is a race; what
      // the probe sent through the transport is only ever isro.
      assert.ok(words.every((w) => w === "isro"), `the probe's words went through the transport: ${JSON.stringify(words)}`);
      await zk.setData("/ro", "after");
      assert.equal(new TextDecoder().decode((await zk.getData("/ro")).data!), "after");
    } finally {
      await zk.close();
    }
  }, 180_000);
});
