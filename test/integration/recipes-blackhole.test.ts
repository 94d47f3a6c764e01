// A leader process whose link is blackholed (a fault proxy between it and the server passes nothing
// either way, FIN included) steps down with reason 'disconnected' before the server expires its
// session, so before the successor (another process, connected directly) is elected. The
// single-process variant is in recipes-election-faults.test.ts; this one runs participants as OS
// processes and also checks their WORK lines.
import console from "node:console";
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { startStandalone, type ZkServer } from "../support/servers/zk-server.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { killAllParticipants } from "../support/processes/participant-process.ts";
import { localNs, spawnChaos, type ChaosParticipant } from "../support/chaos/chaos-launcher.ts";

const SESSION_MS = 2000;
const ROUNDS = 3;

const stampOf = (c: ChaosParticipant, kind: string): bigint[] =>
  c.p.lines.filter((l) => l.kind === kind).map((l) => localNs(c.p, l)!);

describe("a blackholed leader process", () => {
  let server: ZkServer | undefined;
  const proxies: FaultProxy[] = [];

  afterAll(async () => {
    await killAllParticipants();
    await Promise.all(proxies.map((p) => p.close()));
    await server?.close();
  }, 60_000);

  it(`revokes with 'disconnected' before its session expires and before the successor leads (${ROUNDS} rounds)`, async () => {
    server = await startStandalone({ tickTime: 500 });
    const rows: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const proxy = await startFaultProxy("127.0.0.1", server.clientPort);
      proxies.push(proxy);
      const path = `/blackhole-${process.pid}-${round}`;
      const leader = await spawnChaos({ connectString: proxy.connectString, path, id: `behind-proxy-${round}`, sessionTimeoutMs: SESSION_MS, runtime: "node" });
      await leader.p.waitFor("ELECTED", 5000);
      const follower = await spawnChaos({ connectString: server.connectString, path, id: `direct-${round}`, sessionTimeoutMs: SESSION_MS, runtime: "node" });
      assert.equal(leader.negotiatedMs, SESSION_MS);
      await leader.p.waitFor("WORK", 2000);

      proxy.blackhole(true);
      const cut = process.hrtime.bigint();
      const revoked = await leader.p.waitFor("REVOKED", SESSION_MS + 2000);
      const elected = await follower.p.waitFor("ELECTED", SESSION_MS + 3000);
      assert.equal(revoked.args[2], "disconnected");
      const revokedAt = localNs(leader.p, revoked)!;
      const electedAt = localNs(follower.p, elected)!;
      const ms = (ns: bigint) => Number(ns - cut) / 1e6;
      assert.ok(ms(revokedAt) < SESSION_MS, `revoked ${ms(revokedAt)} ms after the cut, the session timeout is ${SESSION_MS} ms`);
      assert.ok(revokedAt < electedAt, "the old leader stepped down before the successor was elected");
      const lastWork = stampOf(leader, "WORK").filter((w) => w > cut).at(-1) ?? cut;
      assert.ok(lastWork < revokedAt && lastWork < electedAt, "no leader work after stepping down");
      assert.deepEqual(stampOf(follower, "WORK").filter((w) => w < electedAt), [], "the successor worked only once elected");
      rows.push(`round ${round}: revoked ${ms(revokedAt).toFixed(0)} ms after the cut (read timeout ${Math.round((SESSION_MS * 2) / 3)} ms), successor elected at ${ms(electedAt).toFixed(0)} ms; margin ${((Number(electedAt - revokedAt)) / 1e6).toFixed(0)} ms`);

      proxy.blackhole(false); // the old session is gone: the leader process learns it expired and exits
      // Learnt from the server on reconnect, or from the client-side expiry (4/3 of the session timeout
      // after it last heard the server) while still cut off: the latter may come before or after the
      // successor's election (two processes' timings), but never before the leader stepped down.
      const expired = await leader.p.waitFor("EXPIRED", 10_000);
      assert.ok(localNs(leader.p, expired)! > revokedAt, "the leader stepped down before it learnt that its session expired");
      await leader.p.exited;
      await follower.p.close();
    }
    console.log(`blackholed leader, negotiated session ${SESSION_MS} ms:\n  ${rows.join("\n  ")}`);
  }, 120_000);
});
