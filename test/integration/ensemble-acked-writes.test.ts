// Acknowledged writes are never lost (5 real servers in network namespaces, test/support/servers/zk-partition.ts).
// A writer sets data on 8 keys and creates nodes without pause while a schedule partitions and kills
// servers: 2 | 3 splits with the leader on either side, the leader isolated, kill -9 of a follower and
// of the leader (each restarted). It records every acknowledged setData/create with its zxid. Two
// readers read meanwhile. After healing, every server (each read alone, after sync) must show every
// acknowledged create and, for every key, the last acknowledged value or a later write of the writer
// (one whose reply was lost: it may commit, ZooKeeper never promised otherwise); and no session may
// see a zxid go backwards (the client's lastZxid, and each key's mzxid as a reader sees it).
import { describe, it, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ZooKeeper, isZooKeeperError } from "../../src/index.ts";
import { startPartitionedEnsemble, type PartitionedEnsemble } from "../support/servers/zk-partition.ts";
import { uniqueRoot } from "../support/sessions.ts";
import { hold } from "../support/wait.ts";

const KEYS = 8;
const text = (d: Uint8Array | null) => new TextDecoder().decode(d ?? new Uint8Array());
const lossy = (e: unknown) => isZooKeeperError(e) && ["CONNECTIONLOSS", "SESSIONMOVED", "OPERATIONTIMEOUT"].includes(e.codeName);

describe("acknowledged writes survive partitions and kills (5 servers)", () => {
  let ens: PartitionedEnsemble | undefined;
  afterAll(async () => {
    await ens?.close();
  }, 60_000);

  it("every acknowledged write is visible after healing; no zxid goes backwards in a session", async () => {
    ens = await startPartitionedEnsemble({ size: 5 });
    const root = uniqueRoot("acked");
    const opts = { sessionTimeout: 30_000, connectTimeout: 30_000 };
    const writer = await ZooKeeper.connect(ens.connectString, opts);
    const readers = [await ZooKeeper.connect(ens.connectString, opts), await ZooKeeper.connect(ens.connectString, opts)];
    await writer.create(root);
    await writer.create(`${root}/c`);
    for (let k = 0; k < KEYS; k++) await writer.create(`${root}/k${k}`, "init");

    const lastAck = new Map<string, { value: string; zxid: bigint }>();
    const attempted = new Map<string, Set<string>>(); // every value the writer sent per key
    const creates: string[] = [];
    const counts = { ackSet: 0, ackCreate: 0, lossSet: 0, lossCreate: 0, reads: 0, readErrors: 0, backwards: 0 };
    const backwards: string[] = [];
    let lastWriterZxid = -1n;
    let running = true;

    const writing = (async () => {
      for (let i = 0; running; i++) {
        const key = `${root}/k${i % KEYS}`;
        const value = `w${i}`;
        if (!attempted.has(key)) attempted.set(key, new Set());
        attempted.get(key)!.add(value);
        try {
          const stat = await writer.setData(key, value);
          counts.ackSet++;
          if (stat.mzxid <= lastWriterZxid) backwards.push(`writer ack zxid ${stat.mzxid} after ${lastWriterZxid}`);
          lastWriterZxid = stat.mzxid;
          lastAck.set(key, { value, zxid: stat.mzxid });
        } catch (e) {
          if (!lossy(e)) throw e;
          counts.lossSet++;
        }
        if (i % 4 === 0) {
          try {
            const { path, stat } = await writer.createWithStat(`${root}/c/n${i}`, value);
            counts.ackCreate++;
            if (stat.czxid <= lastWriterZxid) backwards.push(`writer create zxid ${stat.czxid} after ${lastWriterZxid}`);
            lastWriterZxid = stat.czxid;
            creates.push(path);
          } catch (e) {
            if (!lossy(e) && !(isZooKeeperError(e) && e.codeName === "NODEEXISTS")) throw e;
            counts.lossCreate++;
          }
        }
        if (writer.state !== "connected") await hold(50);
      }
    })();

    const reading = readers.map((zk, r) => (async () => {
      const seen = new Map<string, bigint>();
      let lastZxid = zk.lastZxid;
      for (let i = 0; running; i++) {
        const key = `${root}/k${(i * 3 + r) % KEYS}`;
        try {
          const { stat } = await zk.getData(key);
          counts.reads++;
          if (stat.mzxid < (seen.get(key) ?? -1n)) backwards.push(`reader ${r} saw ${key} at mzxid ${stat.mzxid} after ${seen.get(key)}`);
          seen.set(key, stat.mzxid);
        } catch (e) {
          if (!lossy(e)) throw e;
          counts.readErrors++;
          await hold(50);
        }
        if (zk.lastZxid < lastZxid) backwards.push(`reader ${r} lastZxid ${zk.lastZxid} after ${lastZxid}`);
        lastZxid = zk.lastZxid;
      }
    })());

    const phases: string[] = [];
    const phase = async (what: string, ms: number) => {
      phases.push(what);
      await hold(ms);
    };
    const others = (ids: number[]) => ens!.servers.map((s) => s.id).filter((id) => !ids.includes(id));
    await phase("steady", 2000);
    let leader = (await ens.leader()).id;
    let friend = others([leader])[0]!;
    ens.partition([[leader, friend], others([leader, friend])]);
    await phase("split 2|3, leader on the minority", 6000);
    ens.heal();
    await ens.waitForQuorum();
    leader = (await ens.leader()).id;
    const pair = others([leader]).slice(0, 2);
    ens.partition([pair, others(pair)]);
    await phase("split 2|3, leader on the majority", 5000);
    ens.heal();
    await ens.waitForQuorum();
    leader = (await ens.leader()).id;
    ens.isolate(leader);
    await phase("leader isolated", 6000);
    ens.heal();
    await ens.waitForQuorum();
    leader = (await ens.leader()).id;
    const follower = ens.server(others([leader])[0]!);
    await follower.kill("SIGKILL");
    await phase("kill -9 a follower", 2000);
    await follower.start();
    await ens.waitForQuorum();
    const oldLeader = await ens.leader();
    await oldLeader.kill("SIGKILL");
    await phase("kill -9 the leader", 3000);
    await oldLeader.start();
    await ens.waitForQuorum();
    await phase("healed", 2000);
    running = false;
    await writing;
    await Promise.all(reading);

    // Every server, read alone after sync, holds every acknowledged write.
    let checkedKeys = 0;
    let superseded = 0;
    for (const s of ens.servers) {
      const zk = await ZooKeeper.connect(s.connectString, opts);
      try {
        await zk.sync(root);
        for (const [key, ack] of lastAck) {
          const { data, stat } = await zk.getData(key);
          const value = text(data);
          assert.ok(stat.mzxid >= ack.zxid, `${s.connectString} ${key}: mzxid ${stat.mzxid} < acknowledged ${ack.zxid}`);
          if (stat.mzxid === ack.zxid) assert.equal(value, ack.value, `${key} at the acknowledged zxid`);
          else {
            assert.ok(attempted.get(key)!.has(value), `${key} = "${value}": not a write of ours`);
            superseded++;
          }
          checkedKeys++;
        }
        const children = new Set(await zk.getChildren(`${root}/c`));
        const missing = creates.filter((p) => !children.has(p.slice(`${root}/c/`.length)));
        assert.deepEqual(missing, [], `${s.connectString} lost acknowledged creates`);
      } finally {
        await zk.close();
      }
    }
    assert.deepEqual(backwards, [], "no zxid went backwards within a session");
    console.log(`[acked-writes] phases: ${phases.join(" → ")}`);
    console.log(`[acked-writes] acknowledged setData ${counts.ackSet}, creates ${counts.ackCreate}; lost replies (unacknowledged) setData ${counts.lossSet}, create ${counts.lossCreate}; ` +
      `reads ${counts.reads} (${counts.readErrors} connection losses); checked ${checkedKeys} key×server (${superseded} superseded by a later unacknowledged write) and ${creates.length}×${ens.servers.length} creates: 0 lost; zxid regressions 0`);
    assert.ok(counts.ackSet > 50 && counts.ackCreate > 10, "the writer made progress");
    await writer.close();
    for (const r of readers) await r.close();
  }, 300_000);
});
