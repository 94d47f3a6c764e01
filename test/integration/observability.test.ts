// Traces and metrics (docs/observability.md): the client's diagnostics channels against a real server, and the
// OpenTelemetry bridge (zookeeper-ts/otel) with the real OpenTelemetry SDK (in-memory span exporter, a metric
// reader, the AsyncLocalStorage context manager).
import { describe, it, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import * as dc from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import { AggregationTemporality, MeterProvider, MetricReader, type HistogramMetricData } from "@opentelemetry/sdk-metrics";
import { otelSdk } from "../support/otel-sdk.ts";
import { renderSpanTree } from "../support/span-tree.ts";
import { SharedSessions, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { AddWatchMode, LeaderElection, Lock, Op, ReadOp, WatcherType, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { built, type ConnectContext, type RequestContext, type SessionMessage, type WatchMessage } from "../../src/client/diagnostics.ts";

const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };


/** Records every event of a TracingChannel; `off()` unsubscribes. */
function recordTrace<T extends object>(name: string): { events: [string, T][]; off(): void } {
  const events: [string, T][] = [];
  const handlers = {
    start: (c: unknown) => events.push(["start", c as T]),
    end: (c: unknown) => events.push(["end", c as T]),
    asyncStart: (c: unknown) => events.push(["asyncStart", c as T]),
    asyncEnd: (c: unknown) => events.push(["asyncEnd", c as T]),
    error: (c: unknown) => events.push(["error", c as T]),
  };
  const ch = dc.tracingChannel(name) as unknown as { subscribe(h: typeof handlers): void; unsubscribe(h: typeof handlers): void };
  ch.subscribe(handlers);
  return { events, off: () => ch.unsubscribe(handlers) };
}

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

describe("observability: diagnostics channels and the OpenTelemetry bridge (real server)", () => {
  const sessions = new SharedSessions();
  let zk: ZooKeeper;
  const root = uniqueRoot("otel");
  sessions.hooks(async () => removeRoot(await sessions.client(), root)); // the run's nodes are all below root

  beforeAll(async () => {
    zk = await sessions.client();
    await zk.create(root, "r");
  });

  it("nothing is built or published per call while nobody subscribes", async () => {
    const before = built.requests;
    for (let i = 0; i < 20; i++) await zk.exists(root);
    assert.equal(built.requests, before, "request contexts built without a subscriber");
    const t = recordTrace<RequestContext>("zookeeper-ts:request");
    try {
      for (let i = 0; i < 20; i++) await zk.exists(root);
    } finally {
      t.off();
    }
    assert.equal(built.requests, before + 20);
    assert.equal(t.events.filter(([k]) => k === "start").length, 20);
  }, 60_000);

  it("zookeeper-ts:request: one trace per public call, its fields, errors, and the caller's context in start", async () => {
    const t = recordTrace<RequestContext>("zookeeper-ts:request");
    const als = new AsyncLocalStorage<string>();
    const seenInStart: (string | undefined)[] = [];
    const onStart = (): void => void seenInStart.push(als.getStore());
    dc.subscribe("tracing:zookeeper-ts:request:start", onStart);
    try {
      await als.run("caller-1", () => zk.getData(root));
      await assert.rejects(zk.getData(`${root}/missing`), (e: unknown) => e instanceof ZooKeeperError && e.codeName === "NONODE");
      assert.equal(await zk.exists(`${root}/missing`), null);
      await zk.multi([]);
      await zk.transaction().check(root, 0).commit();
    } finally {
      t.off();
      dc.unsubscribe("tracing:zookeeper-ts:request:start", onStart);
    }
    assert.equal(seenInStart[0], "caller-1", "the start subscriber runs in the caller's async context");
    const byCall = new Map<RequestContext, string[]>();
    for (const [kind, c] of t.events) byCall.set(c, [...(byCall.get(c) ?? []), kind]);
    const calls = [...byCall.entries()];
    assert.deepEqual(calls.map(([c]) => c.operation), ["getData", "getData", "exists", "multi", "multi"]);
    const [host, port] = zk.remoteAddress!.split(":");
    const sessionId = zk.sessionId.toString(16).padStart(16, "0");
    for (const [c] of calls) {
      assert.equal(c.serverAddress, host);
      assert.equal(c.serverPort, Number(port));
      assert.equal(c.sessionId, sessionId);
    }
    assert.deepEqual(calls[0]![1], ["start", "end", "asyncStart", "asyncEnd"]);
    assert.equal(calls[0]![0].path, root);
    assert.deepEqual(calls[1]![1], ["start", "end", "error", "asyncStart", "asyncEnd"]);
    assert.equal((calls[1]![0].error as ZooKeeperError).codeName, "NONODE");
    assert.deepEqual(calls[2]![1], ["start", "end", "asyncStart", "asyncEnd"], "exists of a missing node resolves null: no error");
    assert.equal(calls[3]![0].path, undefined, "multi has no path");
  }, 60_000);

  it("every public operation is one trace (bad arguments too); a composite's own public calls are its children", async () => {
    const c = await sessions.client({ trackEnsemble: false });
    const base = `${root}/every`;
    const { exporter, tracerProvider, dispose } = otelSdk();
    const t = recordTrace<RequestContext>("zookeeper-ts:request");
    try {
      await tracerProvider.getTracer("app").startActiveSpan("every operation", async (span) => {
        const w = (): void => {};
        await c.create(`${base}/a/b`, "x", { createParents: true });
        await c.createWithStat(`${base}/c`);
        await c.setData(`${base}/c`, "y");
        await c.getData(`${base}/c`);
        await c.getData(`${base}/c`, undefined, { linearizable: true });
        assert.equal(await c.exists(`${base}/none`), null);
        await c.exists(`${base}/c`, undefined, { linearizable: true });
        await c.getChildren(base);
        await c.getChildrenWithStat(base);
        const { acl } = await c.getACL(`${base}/c`);
        await c.setACL(`${base}/c`, acl);
        await c.sync(base);
        await c.multi([Op.check(`${base}/c`, 1)]);
        await c.multi([]);
        await c.addWatch(`${base}/c`, AddWatchMode.PERSISTENT, w);
        await c.removeWatches(`${base}/c`, w, WatcherType.Any);
        await c.getData(`${base}/c`, w);
        await c.removeAllWatches(`${base}/c`, WatcherType.Data);
        await c.getEphemerals();
        await c.getAllChildrenNumber(base);
        await c.whoAmI();
        await c.multiRead([ReadOp.getData(`${base}/c`), ReadOp.getChildren(`${base}/none`)]);
        await c.getConfig().catch(() => {});
        await c.addAuthInfo("digest", "u:p");
        await c.delete(`${base}/c`, 5).catch(() => {});
        await c.delete(`${base}/c`);
        await c.getData("no-slash").catch(() => {});
        await c.getChildren(base, "not a function" as never).catch(() => {});
        await c.create(`${base}/d`, "x", { createParents: true, mode: 99 as never }).catch(() => {});
        await c.deleteRecursive(base);
        span.end();
      });
    } finally {
      t.off();
      dispose();
    }
    const spans = exporter.getFinishedSpans();
    const tree = renderSpanTree(spans, { rewrite: (s) => s.split(base).join("/b").split(root).join("/r") });
    assert.equal(
      tree,
      `every operation
  create /b/a/b  [CLIENT]
    create /r  [CLIENT]  ERROR  type=NODEEXISTS
    create /b  [CLIENT]
    create /b/a  [CLIENT]
  createWithStat /b/c  [CLIENT]
  setData /b/c  [CLIENT]
  getData /b/c  [CLIENT]
  getData /b/c  [CLIENT]
    multi  [CLIENT]
  exists /b/none  [CLIENT]
  exists /b/c  [CLIENT]
    multi  [CLIENT]
  getChildren /b  [CLIENT]
  getChildrenWithStat /b  [CLIENT]
  getACL /b/c  [CLIENT]
  setACL /b/c  [CLIENT]
  sync /b  [CLIENT]
  multi  [CLIENT]
  multi  [CLIENT]
  addWatch /b/c  [CLIENT]
  removeWatches /b/c  [CLIENT]
  getData /b/c  [CLIENT]
  removeAllWatches /b/c  [CLIENT]
  getEphemerals /  [CLIENT]
  getAllChildrenNumber /b  [CLIENT]
  whoAmI  [CLIENT]
  multiRead  [CLIENT]
  getConfig  [CLIENT]
  addAuthInfo  [CLIENT]
  delete /b/c  [CLIENT]  ERROR  type=BADVERSION
  delete /b/c  [CLIENT]
  getData no-slash  [CLIENT]  ERROR  type=BADARGUMENTS
  getChildren /b  [CLIENT]  ERROR  type=BADARGUMENTS
  create /b/d  [CLIENT]  ERROR  type=BADARGUMENTS
  deleteRecursive /b  [CLIENT]
    getChildren /b  [CLIENT]
    getChildren /b/a  [CLIENT]
    getChildren /b/a/b  [CLIENT]
    multi  [CLIENT]`,
    );
    // On the channel: one start and one asyncEnd per call, each a span.
    const count = (kind: string): number => t.events.filter(([k]) => k === kind).length;
    assert.equal(count("start"), spans.length - 1);
    assert.equal(count("asyncEnd"), spans.length - 1);
  }, 60_000);

  it("zookeeper-ts:connect, :session and :watch", async () => {
    const conn = recordTrace<ConnectContext>("zookeeper-ts:connect");
    const states: SessionMessage[] = [];
    const watches: WatchMessage[] = [];
    const onState = (m: unknown): void => void states.push(m as SessionMessage);
    const onWatch = (m: unknown): void => void watches.push(m as WatchMessage);
    dc.subscribe("zookeeper-ts:session", onState);
    dc.subscribe("zookeeper-ts:watch", onWatch);
    let c: ZooKeeper | undefined;
    try {
      c = await ZooKeeper.connect(sessions.connectString, { sessionTimeout: 10_000 });
      const sessionId = c.sessionId.toString(16).padStart(16, "0");
      await c.getData(root, () => {});
      await zk.setData(root, "changed");
      await until("the watch message", () => watches.some((w) => w.sessionId === sessionId));
      await c.close();
      const mine = states.filter((s) => s.sessionId === sessionId);
      assert.deepEqual(mine.map((s) => `${s.from}>${s.to}`), ["connecting>connected", "connected>closed"]);
      assert.deepEqual(watches.filter((w) => w.sessionId === sessionId), [{ sessionId, type: "NodeDataChanged", path: root }]);
      const attempt = conn.events.filter(([, x]) => x.sessionId === sessionId);
      assert.deepEqual(attempt.map(([k]) => k), ["start", "end", "asyncStart", "asyncEnd"]);
      const [host, port] = sessions.connectString.split(",")[0]!.split(":");
      assert.equal(attempt[0]![1].serverPort, Number(port));
      assert.equal(attempt[0]![1].serverAddress, host);
    } finally {
      conn.off();
      dc.unsubscribe("zookeeper-ts:session", onState);
      dc.unsubscribe("zookeeper-ts:watch", onWatch);
      await c?.close();
    }
    // A refused attempt: an error in its trace.
    const refused = recordTrace<ConnectContext>("zookeeper-ts:connect");
    try {
      await assert.rejects(ZooKeeper.connect("127.0.0.1:1", { connectTimeout: 1500 }));
    } finally {
      refused.off();
    }
    const failed = refused.events.filter(([k]) => k === "error");
    assert.ok(failed.length >= 1 && failed.every(([, x]) => x.serverPort === 1 && x.error instanceof Error), "each refused attempt has its error");
  }, 60_000);

  it("zookeeper-ts:election and zookeeper-ts:lock: elected, revoked, acquired, released, lost", async () => {
    const seen: string[] = [];
    const onElection = (m: unknown): void => void seen.push(`election ${JSON.stringify(m)}`);
    const onLock = (m: unknown): void => void seen.push(`lock ${JSON.stringify(m)}`);
    dc.subscribe("zookeeper-ts:election", onElection);
    dc.subscribe("zookeeper-ts:lock", onLock);
    try {
      const el = new LeaderElection(zk, `${root}/election`, { id: "e1" });
      await el.start();
      await el.waitForLeadership();
      const token = el.token!.toString();
      await el.close();
      const lock = new Lock(zk, `${root}/lock`, { id: "l1" });
      await lock.acquire();
      const t1 = lock.token!.toString();
      await lock.release();
      await lock.acquire();
      const t2 = lock.token!.toString();
      await zk.delete(lock.nodePath!); // someone deleted our znode: lost
      await until("the lock lost", () => !lock.isHeld);
      assert.deepEqual(seen, [
        `election ${JSON.stringify({ path: `${root}/election`, id: "e1", event: "elected", token })}`,
        `election ${JSON.stringify({ path: `${root}/election`, id: "e1", event: "revoked", reason: "closed" })}`,
        `lock ${JSON.stringify({ path: `${root}/lock`, id: "l1", event: "acquired", token: t1 })}`,
        `lock ${JSON.stringify({ path: `${root}/lock`, id: "l1", event: "released" })}`,
        `lock ${JSON.stringify({ path: `${root}/lock`, id: "l1", event: "acquired", token: t2 })}`,
        `lock ${JSON.stringify({ path: `${root}/lock`, id: "l1", event: "lost", reason: "deleted" })}`,
      ]);
      await lock.release();
    } finally {
      dc.unsubscribe("zookeeper-ts:election", onElection);
      dc.unsubscribe("zookeeper-ts:lock", onLock);
    }
  }, 60_000);

  it("the OpenTelemetry bridge: CLIENT spans under the caller's span, attributes, status, the histogram, off()", async () => {
    const reader = new TestReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const { exporter, tracerProvider, off, dispose } = otelSdk({ meterProvider });
    try {
      const app = tracerProvider.getTracer("app");
      await app.startActiveSpan("handle request", async (parent) => {
        await zk.getData(root);
        await zk.getData(`${root}/missing`).catch(() => {});
        await zk.multi([]);
        parent.end();
      });
      off();
      await zk.getData(root); // after off(): no span
      const spans = exporter.getFinishedSpans();
      const parent = spans.find((s) => s.name === "handle request")!;
      const ours = spans.filter((s) => s !== parent);
      assert.deepEqual(ours.map((s) => s.name), [`getData ${root}`, `getData ${root}/missing`, "multi"]);
      const [host, port] = zk.remoteAddress!.split(":");
      for (const s of ours) {
        assert.equal(s.kind, 2 /* SpanKind.CLIENT */);
        assert.equal(s.parentSpanContext?.spanId, parent.spanContext().spanId, `${s.name}: the caller's span is the parent`);
        assert.equal(s.attributes["db.system.name"], "zookeeper");
        assert.equal(s.attributes["server.address"], host);
        assert.equal(s.attributes["server.port"], Number(port));
        assert.deepEqual([s.instrumentationScope.name, s.instrumentationScope.version], ["zookeeper-ts", packageJson.version], `${s.name}: the scope carries the package's version`);
      }
      assert.equal(ours[0]!.attributes["db.operation.name"], "getData");
      assert.equal(ours[0]!.status.code, 0 /* UNSET */);
      assert.equal(ours[1]!.attributes["db.response.status_code"], "NONODE");
      assert.equal(ours[1]!.attributes["error.type"], "NONODE");
      assert.equal(ours[1]!.status.code, 2 /* ERROR */);
      const { resourceMetrics } = await reader.collect();
      const scope = resourceMetrics.scopeMetrics.find((s) => s.metrics.some((m) => m.descriptor.name === "db.client.operation.duration"))!;
      assert.deepEqual([scope.scope.name, scope.scope.version], ["zookeeper-ts", packageJson.version]);
      const metric = scope.metrics.find((m) => m.descriptor.name === "db.client.operation.duration") as HistogramMetricData;
      assert.equal(metric.descriptor.unit, "s");
      const points = metric.dataPoints.map((p) => ({ op: p.attributes["db.operation.name"], error: p.attributes["error.type"], count: p.value.count }));
      assert.deepEqual(points.sort((a, b) => `${a.op}${a.error}`.localeCompare(`${b.op}${b.error}`)), [
        { op: "getData", error: "NONODE", count: 1 },
        { op: "getData", error: undefined, count: 1 },
        { op: "multi", error: undefined, count: 1 },
      ]);
      assert.ok(metric.dataPoints.every((p) => p.attributes["db.system.name"] === "zookeeper" && (p.value.sum ?? 0) >= 0));
    } finally {
      dispose();
      await meterProvider.shutdown();
    }
  }, 60_000);

  it("the OpenTelemetry bridge: a call's own calls are its children (deleteRecursive), and a context the application opens inside a call wins", async () => {
    const { exporter, tracerProvider, dispose } = otelSdk();
    const tree = `${root}/nested`;
    try {
      await zk.create(tree);
      await zk.create(`${tree}/a`);
      await zk.create(`${tree}/a/deep`);
      await zk.create(`${tree}/b`);
      exporter.reset();
      const app = tracerProvider.getTracer("app");
      await app.startActiveSpan("cleanup", async (span) => {
        await zk.deleteRecursive(tree);
        await zk.exists(tree); // after it: the caller's span again
        span.end();
      });
      const spans = exporter.getFinishedSpans();
      const byId = new Map(spans.map((s) => [s.spanContext().spanId, s.name]));
      const parentOf = (name: string): (string | undefined)[] => spans.filter((s) => s.name === name).map((s) => byId.get(s.parentSpanContext?.spanId ?? ""));
      assert.deepEqual(parentOf(`deleteRecursive ${tree}`), ["cleanup"]);
      assert.deepEqual(parentOf(`exists ${tree}`), ["cleanup"]);
      const inner = spans.filter((s) => !["cleanup", `deleteRecursive ${tree}`, `exists ${tree}`].includes(s.name));
      assert.ok(inner.some((s) => s.name === `getChildren ${tree}`), spans.map((s) => s.name).join(", "));
      for (const s of inner) assert.equal(byId.get(s.parentSpanContext?.spanId ?? ""), `deleteRecursive ${tree}`, `${s.name}: under the call that made it`);

      // The rule, driven on the channel itself (a call's code never runs application code on this client): inside a
      // call, a call made in the same application context nests under it; one made in a context opened since does not.
      exporter.reset();
      const channel = dc.tracingChannel("zookeeper-ts:request") as unknown as { tracePromise<T>(fn: () => Promise<T>, ctx: object): Promise<T> };
      const ctx = (operation: string, path: string): RequestContext => ({ operation, path, sessionId: "0".repeat(16) });
      await app.startActiveSpan("app", async (span) => {
        await channel.tracePromise(async () => {
          await channel.tracePromise(async () => {}, ctx("getData", "/same-context"));
          await app.startActiveSpan("opened inside", async (mine) => {
            await channel.tracePromise(async () => {}, ctx("getData", "/new-context"));
            mine.end();
          });
        }, ctx("deleteRecursive", "/outer"));
        span.end();
      });
      const driven = exporter.getFinishedSpans();
      const names = new Map(driven.map((s) => [s.spanContext().spanId, s.name]));
      const parents = Object.fromEntries(driven.map((s) => [s.name, names.get(s.parentSpanContext?.spanId ?? "") ?? null]));
      assert.deepEqual(parents, {
        app: null,
        "deleteRecursive /outer": "app",
        "getData /same-context": "deleteRecursive /outer",
        "opened inside": "app", // OpenTelemetry's own context does not know the bridge's span
        "getData /new-context": "opened inside",
      });
    } finally {
      dispose();
    }
  }, 60_000);
});
