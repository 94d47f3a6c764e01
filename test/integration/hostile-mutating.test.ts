// Client-level fuzzing: a relay corrupts a share of the real server's frames (bit flips, hostile
// ints, truncations, lying length prefixes, trailing junk) while the client runs a mixed workload
// with watches. Every call must settle with a value or a ZooKeeperError (never hang, never another
// error type), nothing may escape as an unhandled rejection, dropped links must be logged, and
// once the corruption stops the client must work on the same session.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import process from "node:process";
import { CreateMode, Op, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { startMutatingRelay, type MutatingRelay } from "../support/fakes/fake-server.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { capturingLogger, trackUnhandled, until, within } from "../stress/helpers.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";

const OPS = Number(process.env.MUTATING_OPS ?? 2000);
const RATE = 0.03;

describe("a relay that corrupts server frames", () => {
  let relay: MutatingRelay;
  let direct: ZooKeeper;
  const root = uniqueRoot("hostile-mutating");

  beforeAll(async () => {
    const { connectString } = await sharedServer();
    const [host, port] = connectString.split(",")[0]!.split("/")[0]!.split(":");
    relay = await startMutatingRelay({ host: host!, port: Number(port) }, 0);
    direct = await ZooKeeper.connect(connectString);
    await direct.create(root);
    for (let i = 0; i < 20; i++) await direct.create(`${root}/n${i}`, `data-${i}`);
  });

  afterAll(async () => {
    if (direct) await removeRoot(direct, root); // the run's nodes are all below root
    await direct?.close();
    await relay?.close();
  });

  it(`${OPS} mixed calls with ${RATE * 100}% of frames corrupted: every call settles with a value or a ZooKeeperError; the session survives`, async () => {
    const unhandled = trackUnhandled();
    const log = capturingLogger();
    const zk = await ZooKeeper.connect(relay.connectString, { sessionTimeout: 10_000, logger: log });
    const outcomes: Record<string, number> = {};
    const count = (k: string): void => {
      outcomes[k] = (outcomes[k] ?? 0) + 1;
    };
    try {
      const sessionId = zk.sessionId;
      const eph = await zk.create(`${root}/eph`, "e", { mode: CreateMode.EPHEMERAL });
      relay.setRate(RATE);
      const n = (i: number): string => `${root}/n${i % 20}`;
      const calls: ((i: number) => Promise<unknown>)[] = [
        (i) => zk.getData(n(i), () => {}),
        (i) => zk.exists(n(i), () => {}),
        () => zk.getChildren(root, () => {}),
        () => zk.getChildrenWithStat(root),
        (i) => zk.setData(n(i), `v${i}`),
        (i) => zk.create(`${root}/s-`, `c${i}`, { mode: CreateMode.PERSISTENT_SEQUENTIAL }),
        (i) => zk.multi([Op.check(n(i), -1), Op.setData(n(i + 1), "m")]),
        (i) => zk.getACL(n(i)),
        () => zk.whoAmI(),
        () => zk.sync(root),
      ];
      const started = performance.now();
      for (let from = 0; from < OPS; from += 25) {
        const batch = Array.from({ length: 25 }, (_, k) => {
          const i = from + k;
          return calls[i % calls.length]!(i).then(
            () => count("ok"),
            (e: unknown) => count(e instanceof ZooKeeperError ? e.codeName : `NOT A ZooKeeperError: ${String(e)}`),
          );
        });
        // A call may wait out a disconnect (session timeout) but never longer.
        const r = await within(Promise.all(batch), 25_000);
        assert.notEqual(r, "pending", `calls hung; state ${zk.state}; outcomes so far ${JSON.stringify(outcomes)}; last corruptions ${JSON.stringify(relay.stats.recent)}; log:\n${log.lines.slice(-15).join("\n")}`);
        if (from % 500 === 0) await direct.setData(n(from), `poke-${from}`); // notifications to corrupt too
      }
      const ms = performance.now() - started;
      relay.setRate(0);
      const drops = log.lines.filter((l) => /(bad|malformed) frame/.test(l));
      process.stdout.write(
        `mutating: ${OPS} calls in ${(ms / 1000).toFixed(1)} s; relay corrupted ${relay.stats.mutated} of ${relay.stats.frames} frames ${JSON.stringify(relay.stats.byKind)}; ` +
          `${drops.length} links dropped with a logged reason; outcomes ${JSON.stringify(outcomes)}\n`,
      );
      const foreign = Object.keys(outcomes).filter((k) => k.startsWith("NOT A"));
      assert.deepEqual(foreign, [], "only ZooKeeperError may reject");
      assert.ok(relay.stats.mutated > 20, "the relay must actually corrupt frames");
      assert.ok(drops.length > 0, "corrupted framing must drop links with a logged reason");
      assert.ok((outcomes.ok ?? 0) > OPS / 2, `most calls should still succeed: ${JSON.stringify(outcomes)}`);

      // Clean again: the same session serves, the ephemeral node is still its own.
      await until("connected", () => zk.state === "connected", 30_000);
      assert.equal(zk.sessionId, sessionId);
      const stat = await zk.exists(eph);
      assert.equal(stat?.ephemeralOwner, sessionId);
      assert.equal((await zk.getChildren(root)).filter((c) => /^n\d+$/.test(c)).length, 20);
      assert.deepEqual(unhandled.reasons, []);
    } finally {
      relay.setRate(0);
      await zk.close();
      unhandled.stop();
    }
  }, 300_000);
});
