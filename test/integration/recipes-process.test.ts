// Participants as separate OS processes: Node, Bun and Deno participants share one election, a
// kill -9 of the leader hands over, and a Curator LeaderLatch (Java) and ours agree on one leader.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { killAllParticipants, spawnParticipant, type ParticipantProcess } from "../support/processes/participant-process.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { killAllParticipants as killAllJava, startParticipant as startJava } from "../interop/java-participant.ts";
import { itFrom } from "../support/servers/zk-line.ts";
import { onSession, removeRoot } from "../support/sessions.ts";

const root = `/t-recipes-process-${randomUUID().slice(0, 8)}`;
const SESSION_MS = 4000; // the shared server's minimum (tickTime 2000)
let connectString = "";

describe("LeaderElection participants as processes", () => {
  beforeAll(async () => {
    connectString = (await sharedServer()).connectString;
  }, 60_000);

  afterAll(async () => {
    await killAllParticipants();
    await killAllJava();
    if (connectString) await onSession(connectString, (zk) => removeRoot(zk, root)); // the run's nodes are all below root
  });

  it("Node, Bun and Deno participants elect one leader; kill -9 of the leader hands over", async () => {
    const path = `${root}/runtimes`;
    const ps: ParticipantProcess[] = [];
    for (const runtime of ["node", "bun", "deno"] as const) {
      ps.push(await spawnParticipant({ connectString, path, id: runtime, sessionTimeoutMs: SESSION_MS, runtime }));
    }
    await ps[0].waitFor("ELECTED", 5000);
    for (const p of ps) assert.equal(await p.leader(), "node");
    assert.deepEqual(await ps[2].participants(), ["node", "bun", "deno"]);
    const [has1, has2] = await Promise.all([ps[1].ask("has?", "HAS"), ps[2].ask("has?", "HAS")]);
    assert.deepEqual([has1[0], has2[0]], ["false", "false"]);
    const killedAt = process.hrtime.bigint();
    await ps[0].kill("SIGKILL");
    const elected = await ps[1].waitFor("ELECTED", SESSION_MS + 5000);
    await ps[1].syncClock(3);
    const ms = Number(ps[1].localNs(elected)! - killedAt) / 1e6;
    assert.ok(ms > 0 && ms < SESSION_MS + 3000, `failover took ${ms} ms`);
    const watched = ps[2].lines.filter((l) => l.kind === "WATCH");
    assert.deepEqual(watched, [], "deno's predecessor (bun) did not change: no wake-up");
    ps[1].send("resign");
    await ps[2].waitFor("ELECTED", 5000);
    assert.equal(await ps[1].leader(), "deno");
    await Promise.all(ps.map((p) => p.close()));
  }, 60_000);

  // Curator 5 (5.4.0 and 5.7.1 alike) does not run against ZooKeeper 3.4 servers (its Java client never
  // gets READY there), so the interop needs 3.5+ whatever our client does.
  itFrom("3.5", "a Curator LeaderLatch and our participants share one election", async () => {
    const path = `${root}/curator`;
    const java = await startJava({ connectString, electionPath: path, id: "curator", sessionTimeoutMs: SESSION_MS });
    await java.waitFor("READY", 30_000);
    await java.waitFor("ELECTED", 10_000);
    const ours = await spawnParticipant({ connectString, path, id: "ts", sessionTimeoutMs: SESSION_MS });
    assert.equal(await ours.leader(), "curator");
    assert.deepEqual(await java.participants(), ["curator", "ts"]);
    assert.deepEqual(await ours.participants(), ["curator", "ts"]);
    const javaLast = await spawnParticipant({ connectString, path, id: "ts-2", sessionTimeoutMs: SESSION_MS });
    await java.close(); // Curator deletes its znode
    await ours.waitFor("ELECTED", 5000);
    const next = await startJava({ connectString, electionPath: path, id: "curator-2", sessionTimeoutMs: SESSION_MS });
    await next.waitFor("READY", 30_000);
    assert.equal(await next.leader(), "ts");
    assert.deepEqual(await next.participants(), ["ts", "ts-2", "curator-2"]);
    await ours.kill("SIGKILL");
    await javaLast.waitFor("ELECTED", SESSION_MS + 5000);
    await javaLast.close();
    await next.waitFor("ELECTED", 5000);
    await next.close();
  }, 90_000);
});
