// A LeaderElection failover as OpenTelemetry shows it (issue 32): two participants on two clients, the bridge
// (zookeeper-ts/otel) on the real SDK with an in-memory exporter, the leader's client closed; the exported
// spans rendered as a tree (test/support/span-tree.ts) and its shape asserted.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import * as dc from "node:diagnostics_channel";
import { SpanKind } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { otelSdk } from "../support/otel-sdk.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { parentId, renderSpanTree } from "../support/span-tree.ts";
import { nextEvent } from "../support/wait.ts";
import { LeaderElection, ZooKeeper } from "../../src/index.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";

describe("observability: a LeaderElection failover as a trace (real server, OpenTelemetry SDK)", () => {
  let connect: string;
  let admin: ZooKeeper;
  const root = uniqueRoot("otel-failover");

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    admin = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await admin.create(root, "r");
  });

  afterAll(async () => {
    if (admin) await removeRoot(admin, root);
    await admin?.close();
  });

  it("the leader's client closes: the election's calls under the test's span, elected and revoked as span events, the new leader elected", async () => {
    const { exporter, tracerProvider, dispose } = otelSdk();
    const path = `${root}/election`;
    let za: ZooKeeper | undefined;
    let zb: ZooKeeper | undefined;
    let aNode = "";
    let bNode = "";
    // The order the election's events happened in, as the recipes publish them (the bridge hears the same channel).
    const happened: string[] = [];
    const heard = (m: unknown): void => void happened.push(`${(m as { event: string }).event} ${(m as { id: string }).id}`);
    dc.subscribe("zookeeper-ts:election", heard);
    try {
      await tracerProvider.getTracer("test").startActiveSpan("leader election failover", async (span) => {
        try {
          za = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
          zb = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
          const a = new LeaderElection(za, path, { id: "a" });
          const b = new LeaderElection(zb, path, { id: "b" });
          await a.start();
          await a.waitForLeadership();
          aNode = a.candidatePath!;
          await b.start();
          bNode = b.candidatePath!;
          assert.equal(b.isLeader, false);
          const elected = nextEvent(b, "elected", 20_000, "b elected");
          await za.close(); // the leader's client goes, and its ephemeral candidate znode with it
          await elected;
          await b.close();
        } finally {
          span.end();
        }
      });
    } finally {
      dc.unsubscribe("zookeeper-ts:election", heard);
      dispose();
      await za?.close();
      await zb?.close();
    }
    const spans = exporter.getFinishedSpans();
    const tree = renderSpanTree(spans, { rewrite: shorten(root) });
    process.stdout.write(`${tree}\n`);
    const why = `\n${tree}`;
    const top = spans.find((s) => s.name === "leader election failover");
    assert.ok(top && parentId(top) === undefined, `the test's span is a root${why}`);
    const under = (s: ReadableSpan): boolean => parentId(s) === top.spanContext().spanId;

    // Every call is a CLIENT span "{operation} {path}"; the fallback spans of recipe events are INTERNAL "election {path}".
    for (const s of spans) {
      if (s === top) continue;
      if (s.kind === SpanKind.INTERNAL) {
        assert.equal(s.name, `election ${path}`, why);
        continue;
      }
      assert.equal(s.kind, SpanKind.CLIENT, `${s.name}${why}`);
      const op = String(s.attributes["db.operation.name"]);
      assert.ok(s.name.startsWith(`${op} /`), `${s.name} is "{operation} {path}"${why}`);
      assert.equal(s.attributes["db.system.name"], "zookeeper");
    }
    // The leader-to-be's calls, in the test's async context on every runtime: under the test's span.
    const named = (name: string): ReadableSpan[] => spans.filter((s) => s.name === name);
    const candidateCreates = spans.filter((s) => s.name.startsWith(`create ${path}/`) && s.name.endsWith("-latch-"));
    assert.equal(candidateCreates.length, 2, `one protected create per participant${why}`);
    assert.ok(candidateCreates.every(under), why);
    assert.ok(named(`getChildren ${path}`).filter(under).length >= 2, `each participant lists the candidates${why}`);
    assert.equal(named(`exists ${aNode}`).filter(under).length, 1, `a checks its own znode once, and leads${why}`);
    assert.equal(named(`getData ${aNode}`).filter(under).length, 1, `b watches its predecessor, a's znode${why}`);
    assert.ok(named(`delete ${bNode}`).some(under), `b's close deletes its candidate${why}`);

    // The election's events in the order they happened, then where the bridge put each one. Not ordered by their
    // times: a span's event times are on that span's own clock (the SDK anchors each span to Date.now() at its
    // start, a whole ms), so events on two spans can read up to a millisecond out of order (seen on Deno).
    assert.deepEqual(happened, ["elected a", "revoked a", "elected b", "revoked b"], why);
    const events = spans.flatMap((s) => s.events.filter((e) => e.name.startsWith("zookeeper.election.")).map((e) => ({ span: s, e })));
    const told = events.map(({ e }) => `${e.name.slice("zookeeper.election.".length)} ${e.attributes?.["zookeeper.election.id"]}`);
    assert.deepEqual([...told].sort(), [...happened].sort(), `each event once on a span${why}`);
    const [aElected, aRevoked, bElected, bRevoked] = happened.map((h) => events[told.indexOf(h)]);
    for (const x of [aElected!, aRevoked!, bRevoked!]) assert.equal(x.span, top, `${x.e.name} (emitted in the test's context) is on the test's span${why}`);
    assert.equal(aRevoked!.e.attributes?.["zookeeper.election.reason"], "closed", `a steps down as close() begins${why}`);
    assert.equal(bRevoked!.e.attributes?.["zookeeper.election.reason"], "closed");
    assert.ok(BigInt(String(bElected!.e.attributes?.["zookeeper.election.token"])) > BigInt(String(aElected!.e.attributes?.["zookeeper.election.token"])), `the fencing token grows${why}`);
    // b learns from its watch: the test's span where sockets carry the caller's async context (Node, Bun), a
    // span "election {path}" of its own where they do not (Deno).
    assert.ok(bElected!.span === top || bElected!.span.name === `election ${path}`, `b's elected is recorded${why}`);
  }, 60_000);

  it("an election event with no open span where it is emitted goes on an INTERNAL span of its own, never dropped", async () => {
    const { exporter, tracerProvider, dispose } = otelSdk();
    const path = `${root}/alone`;
    const z = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    try {
      const e = new LeaderElection(z, path, { id: "solo" });
      await e.start(); // outside any span
      await e.waitForLeadership();
      await e.close();
    } finally {
      dispose();
      await z.close();
    }
    const spans = exporter.getFinishedSpans();
    const own = spans.filter((s) => s.name === `election ${path}`);
    const why = `\n${renderSpanTree(spans, { rewrite: shorten(root) })}`;
    assert.deepEqual(own.map((s) => s.events.map((e) => `${e.name} ${e.attributes?.["zookeeper.election.id"]}`)), [["zookeeper.election.elected solo"], ["zookeeper.election.revoked solo"]], why);
    for (const s of own) {
      assert.equal(s.kind, SpanKind.INTERNAL);
      assert.equal(s.attributes["db.system.name"], "zookeeper");
      assert.equal(parentId(s), undefined, `no span was active: a root${why}`);
    }
  }, 60_000);
});

/** Readable names: the test's root as /app, a protected candidate's UUID as an ellipsis. */
function shorten(root: string): (s: string) => string {
  return (s) => s.replaceAll(root, "/app").replace(/_c_[0-9a-f-]{36}-/g, "_c_…-");
}
