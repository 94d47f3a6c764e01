// The one op path (src/client/caller.ts) and the listener-error policy (src/client/listeners.ts), without a
// server: a stub send makes each request's Pending as the session's send does (the frame is encoded by
// it) and answers it through that Pending, so bytes, chroot mapping, watch registration at reply time,
// result mapping and errors are the client's own.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import * as dc from "node:diagnostics_channel";
import { EventEmitter } from "node:events";
import { ErrorCode, OpCode } from "../../src/protocol/constants.ts";
import { encodeRequest } from "../../src/protocol/frame.ts";
import { JuteReader, JuteWriter } from "../../src/protocol/jute.ts";
import { Ops } from "../../src/protocol/ops.ts";
import { Caller, createdName } from "../../src/client/caller.ts";
import type { RequestContext } from "../../src/client/diagnostics.ts";
import { LostWrites } from "../../src/client/outcome.ts";
import { type ListenerError, deliverIsolated, emitIsolated, reportListenerError } from "../../src/client/listeners.ts";
import { type Call, type CallSpec, Pending, type Send, encodeCall } from "../../src/client/wire/call-record.ts";
import { WatchRegistry } from "../../src/client/watches/watches.ts";
import { ZooKeeperError, isZooKeeperError } from "../../src/index.ts";
import type { Logger } from "../../src/client/types.ts";
import { until } from "../support/wait.ts";

interface Sent {
  /** The request's opcode, its op table codec and its descriptor. */
  req: { opcode: number; write: unknown; needs: Call<unknown, unknown>["needs"]; op: string };
  frame: Uint8Array;
  /** Answers with `err` and, when OK, a reply body written by `write`. */
  reply(err: number, write?: (w: JuteWriter) => void): void;
}

/** A Caller over a stub session that records each request and lets the test answer it. */
function stub(chroot: string): { c: Caller; sent: Sent[]; watches: WatchRegistry } {
  const sent: Sent[] = [];
  const watches = new WatchRegistry();
  const send: Send = <Req, Res, Out = Res>(spec: CallSpec<Req, Res>, body: Req, call: Call<Res, Out>): Promise<Out> =>
    new Promise<Out>((resolve, reject) => {
      const context = { chroot, maxBufferSize: 1 << 20, watches };
      const p = new Pending(spec, encodeCall(spec, body, call, context), call, context, resolve, reject);
      sent.push({
        req: { opcode: p.opcode, write: spec.writeRequest, needs: call.needs, op: call.op },
        frame: p.frame,
        reply(err, write) {
          let body: JuteReader | null = null;
          if (err === 0 && write) {
            const w = new JuteWriter();
            write(w);
            body = new JuteReader(w.toBytes());
          }
          p.onReply(err, body);
        },
      });
    });
  return { c: new Caller(chroot, watches, send, new LostWrites({ lastZxid: 0n, sessionId: 0n }), { sessionId: 0n, remoteAddress: null }), sent, watches };
}

const stat = { czxid: 1n, mzxid: 2n, ctime: 3, mtime: 4, version: 5, cversion: 6, aversion: 7, ephemeralOwner: 0n, dataLength: 0, numChildren: 0, pzxid: 8n };

describe("call(): one path for every op", () => {
  it("encodes with the op table's codec and the body, byte for byte as a hand-written request", async () => {
    const { c, sent } = stub("");
    const p = c.call(Ops.setData, { path: "/a", data: new Uint8Array([1, 2]), version: 3 }, { op: "setData", path: "/a" });
    const manual = encodeRequest(0, OpCode.setData, (w) => Ops.setData.writeRequest(w, { path: "/a", data: new Uint8Array([1, 2]), version: 3 }));
    assert.deepEqual(sent[0].frame, manual);
    assert.equal(sent[0].req.opcode, OpCode.setData);
    assert.equal(sent[0].req.write, Ops.setData.writeRequest, "the table's codec itself, no closure per request");
    sent[0].reply(0, (w) => Ops.setData.writeResponse(w, stat));
    assert.deepEqual(await p, stat);
  });

  it("maps the body's path into the chroot, but not an absolute one", async () => {
    const { c, sent } = stub("/app");
    void c.call(Ops.getData, { path: "/x", watch: false }, { op: "getData", path: "/x" }).catch(() => {});
    void c.call(Ops.getData, { path: "/zookeeper/config", watch: false }, { op: "getConfig", path: "/zookeeper/config", absolute: true }).catch(() => {});
    void c.call(Ops.sync, { path: "/" }, { op: "sync", path: "/" }).catch(() => {});
    const paths = sent.map((s) => new JuteReader(s.frame, 12).string());
    assert.deepEqual(paths, ["/app/x", "/zookeeper/config", "/app"]);
    for (const s of sent) s.reply(ErrorCode.CONNECTIONLOSS);
  });

  it("does not touch the caller's body object", () => {
    const { c } = stub("/app");
    const body = { path: "/x" };
    void c.call(Ops.getACL, body, { op: "getACL", path: "/x" }).catch(() => {});
    assert.deepEqual(body, { path: "/x" });
  });

  it("maps the result out of the chroot", async () => {
    const { c, sent } = stub("/app");
    const p = c.call(Ops.create, { path: "/n-", data: null, acl: [], flags: 2 }, { op: "create", path: "/n-", result: createdName });
    sent[0].reply(0, (w) => Ops.create.writeResponse(w, "/app/n-0000000001"));
    assert.equal(await p, "/n-0000000001");
  });

  it("a result mapping that throws rejects the call (the link is not at fault)", async () => {
    const { c, sent } = stub("");
    const p = c.call(Ops.getAllChildrenNumber, { path: "/x" }, {
      op: "getAllChildrenNumber",
      path: "/x",
      result: () => {
        throw new ZooKeeperError(ErrorCode.BADVERSION, "mapped");
      },
    });
    sent[0].reply(0, (w) => Ops.getAllChildrenNumber.writeResponse(w, 7));
    await assert.rejects(p, (e) => isZooKeeperError(e, ErrorCode.BADVERSION));
  });

  it("registers the watcher at reply time under the server path: OK, NONODE, and an error", async () => {
    const { c, sent, watches } = stub("/app");
    const w = (): void => {};
    const a = c.call(Ops.exists, { path: "/here", watch: true }, { op: "exists", path: "/here", watcher: w, watchAs: "data", watchAsIfNoNode: "exist" });
    const b = c.call(Ops.exists, { path: "/gone", watch: true }, { op: "exists", path: "/gone", watcher: w, watchAs: "data", watchAsIfNoNode: "exist" });
    const d = c.call(Ops.getChildren, { path: "/denied", watch: true }, { op: "getChildren", path: "/denied", watcher: w, watchAs: "child" });
    assert.equal(watches.has("data", "/app/here"), false, "nothing before the reply");
    sent[0].reply(0, (x) => Ops.exists.writeResponse(x, stat));
    sent[1].reply(ErrorCode.NONODE);
    sent[2].reply(ErrorCode.NOAUTH);
    await a;
    await assert.rejects(b, (e) => isZooKeeperError(e, ErrorCode.NONODE) && (e as ZooKeeperError).op === "exists" && (e as ZooKeeperError).path === "/gone");
    await assert.rejects(d, (e) => isZooKeeperError(e, ErrorCode.NOAUTH));
    assert.equal(watches.has("data", "/app/here", w), true);
    assert.equal(watches.has("exist", "/app/gone", w), true);
    assert.equal(watches.has("child", "/app/denied"), false);
  });

  it("under a chroot, a NONODE before any success asks once whether the chroot exists; a success ends the asking", async () => {
    const { c, sent } = stub("/app");
    const first = c.call(Ops.getData, { path: "/x", watch: false }, { op: "getData", path: "/x" });
    sent[0].reply(ErrorCode.NONODE);
    await until("the exists of the chroot", () => sent.length === 2);
    assert.equal(new JuteReader(sent[1].frame, 12).string(), "/app");
    assert.equal(sent[1].req.opcode, OpCode.exists);
    sent[1].reply(ErrorCode.NONODE);
    await assert.rejects(first, (e: unknown) => isZooKeeperError(e, ErrorCode.NONODE) && e.path === "/x" && e.message === "NONODE (getData /x): the chroot /app of the connect string does not exist: create it (from a client without the chroot), or fix the connect string");
    const second = c.call(Ops.getData, { path: "/y", watch: false }, { op: "getData", path: "/y" });
    sent[2].reply(ErrorCode.NONODE);
    await until("the exists of the chroot, again", () => sent.length === 4);
    sent[3].reply(0, (w) => Ops.exists.writeResponse(w, stat));
    await assert.rejects(second, (e: unknown) => isZooKeeperError(e, ErrorCode.NONODE) && e.message === "NONODE (getData /y)");
    const third = c.call(Ops.getData, { path: "/z", watch: false }, { op: "getData", path: "/z" });
    sent[4].reply(ErrorCode.NONODE);
    await assert.rejects(third, (e: unknown) => isZooKeeperError(e, ErrorCode.NONODE) && e.message === "NONODE (getData /z)");
    assert.equal(sent.length, 5, "the chroot was seen: no more exists");

    const fresh = stub("/app");
    const ok = fresh.c.call(Ops.exists, { path: "/a", watch: false }, { op: "exists", path: "/a" });
    fresh.sent[0].reply(0, (w) => Ops.exists.writeResponse(w, stat));
    await ok;
    const missing = fresh.c.call(Ops.getData, { path: "/b", watch: false }, { op: "getData", path: "/b" });
    fresh.sent[1].reply(ErrorCode.NONODE);
    await assert.rejects(missing, (e: unknown) => isZooKeeperError(e, ErrorCode.NONODE) && e.message === "NONODE (getData /b)");
    assert.equal(fresh.sent.length, 2, "a success under the chroot: no exists");
  });

  it("an aborted call rejects at once with the reason; its late reply registers no watcher", async () => {
    const { c, sent, watches } = stub("");
    const ac = new AbortController();
    let abandoned: number | null = null;
    const p = c.call(Ops.getData, { path: "/x", watch: true }, { op: "getData", path: "/x", watcher: () => {}, watchAs: "data", signal: ac.signal, abandoned: (err) => (abandoned = err) });
    ac.abort(new Error("stop"));
    await assert.rejects(p, /stop/);
    sent[0].reply(0, (w) => Ops.getData.writeResponse(w, { data: null, stat }));
    assert.equal(watches.has("data", "/x"), false);
    assert.equal(abandoned, 0);
  });

  it("carries needs and op/path to the session, and a body-less op sends only the header", () => {
    const { c, sent } = stub("");
    void c.call(Ops.whoAmI, undefined, { op: "whoAmI", needs: { features: ["whoAmI"], what: "whoAmI" } }).catch(() => {});
    assert.deepEqual(sent[0].req.needs, { features: ["whoAmI"], what: "whoAmI" });
    assert.deepEqual(sent[0].frame, encodeRequest(0, OpCode.whoAmI));
    assert.equal(sent[0].req.op, "whoAmI");
  });

  it("is the trace point: one zookeeper-ts:request trace per call or request, none for an untraced one or the client's own", async () => {
    const { c, sent } = stub("");
    const seen: string[] = [];
    const onStart = (m: unknown): void => void seen.push(`${(m as RequestContext).operation} ${(m as RequestContext).path ?? ""}`);
    const onError = (m: unknown): void => void seen.push(`error ${(m as RequestContext).error?.message}`);
    const onEnd = (m: unknown): void => void seen.push(`asyncEnd ${(m as RequestContext).operation}`);
    dc.subscribe("tracing:zookeeper-ts:request:start", onStart);
    dc.subscribe("tracing:zookeeper-ts:request:error", onError);
    dc.subscribe("tracing:zookeeper-ts:request:asyncEnd", onEnd);
    try {
      const got = c.call(Ops.getACL, { path: "/a" }, { op: "getACL", path: "/a" });
      const quiet = c.call(Ops.sync, { path: "/a" }, { op: "sync", path: "/a", untraced: true });
      const missing = c.request(Ops.exists, { op: "exists", path: "/m", watch: false, noNodeIsNull: true });
      const refused = c.refused("getData", "bad", new Error("bad arguments"));
      c.dropUnwatched("/w"); // the client's own: no trace
      assert.deepEqual(seen, ["getACL /a", "exists /m", "getData bad"], "start, synchronously, in the caller's turn");
      sent[0]!.reply(0, (w) => Ops.getACL.writeResponse(w, { acl: [], stat }));
      sent[1]!.reply(0, (w) => Ops.sync.writeResponse(w, "/a"));
      sent[2]!.reply(ErrorCode.NONODE);
      sent[3]!.reply(0);
      await got;
      await quiet;
      assert.equal(await missing, null, "exists of a missing node resolves null");
      await assert.rejects(refused, /bad arguments/);
    } finally {
      dc.unsubscribe("tracing:zookeeper-ts:request:start", onStart);
      dc.unsubscribe("tracing:zookeeper-ts:request:error", onError);
      dc.unsubscribe("tracing:zookeeper-ts:request:asyncEnd", onEnd);
    }
    assert.deepEqual(seen.slice(3).sort(), ["asyncEnd exists", "asyncEnd getACL", "asyncEnd getData", "error bad arguments"], "each settles once; exists of a missing node without an error");
  });

  it("dropUnwatched removes an abandoned persistent watch unless another local watcher needs the table", () => {
    const { c, sent, watches } = stub("/app");
    c.dropUnwatched("/p");
    assert.equal(sent.length, 1);
    assert.equal(sent[0].req.opcode, OpCode.removeWatches);
    assert.equal(Ops.removeWatches.readRequest(new JuteReader(sent[0].frame, 12)).path, "/app/p");
    watches.add("data", "/app/q", () => {});
    c.dropUnwatched("/q");
    assert.equal(sent.length, 1);
  });
});

describe("the listener-error policy", () => {
  const sink = (): { errors: ListenerError[]; reportListenerError(i: ListenerError): void } => {
    const errors: ListenerError[] = [];
    return { errors, reportListenerError: (i) => void errors.push(i) };
  };

  it("emitIsolated runs every listener, once-listeners once, and reports each throw", () => {
    const s = sink();
    const e = new EventEmitter();
    const seen: string[] = [];
    e.on("x", (v: string) => seen.push(`a${v}`));
    e.on("x", () => {
      throw new Error("b");
    });
    e.once("x", (v: string) => seen.push(`c${v}`));
    assert.equal(emitIsolated(s, e, "Thing", "x", "1"), true);
    emitIsolated(s, e, "Thing", "x", "2");
    assert.deepEqual(seen, ["a1", "c1", "a2"]);
    assert.deepEqual(s.errors.map((i) => [i.source, i.event, (i.error as Error).message]), [["Thing", "x", "b"], ["Thing", "x", "b"]]);
    assert.equal(emitIsolated(s, e, "Thing", "none"), false);
  });

  it("deliverIsolated runs each watcher after the current callbacks, isolated", async () => {
    const s = sink();
    const seen: number[] = [];
    const boom = (): void => {
      throw new Error("w");
    };
    deliverIsolated(s, [boom, (n: number) => seen.push(n)], 7);
    assert.deepEqual(seen, []);
    await Promise.resolve();
    assert.deepEqual(seen, [7]);
    assert.deepEqual(s.errors.map((i) => [i.source, i.event]), [["ZooKeeper", "watcher"]]);
  });

  it("the client's side: logged, then listenerError; a throwing listenerError listener is only logged", () => {
    const logged: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (m: string) => void logged.push(m) };
    const client = new EventEmitter();
    const got: ListenerError[] = [];
    client.on("listenerError", (i: ListenerError) => got.push(i));
    client.on("listenerError", () => {
      throw new Error("again");
    });
    reportListenerError(client, logger, { source: "LeaderElection", event: "elected", error: new Error("boom") });
    reportListenerError(client, logger, { source: "ZooKeeper", event: "state", error: "text" });
    assert.deepEqual(logged, [
      'zookeeper: a "elected" listener of LeaderElection threw: boom',
      'zookeeper: a "listenerError" listener threw: again',
      'zookeeper: a "state" listener threw: text',
      'zookeeper: a "listenerError" listener threw: again',
    ]);
    assert.deepEqual(got.map((i) => i.event), ["elected", "state"]);
  });

  it("with neither a logger nor a listenerError listener it goes to console.error, never nowhere", () => {
    const printed: unknown[][] = [];
    // listeners.ts prints to the runtime's console as it is when it prints (vitest replaces the global one)
    const console = (globalThis as unknown as { console: { error(...a: unknown[]): void } }).console;
    const original = console.error;
    console.error = (...a: unknown[]) => void printed.push(a);
    try {
      reportListenerError(new EventEmitter(), null, { source: "ZooKeeper", event: "watcher", error: new Error("w") });
      const client = new EventEmitter();
      client.on("listenerError", () => {});
      reportListenerError(client, null, { source: "ZooKeeper", event: "watcher", error: new Error("handled") });
    } finally {
      console.error = original;
    }
    assert.equal(printed.length, 1);
    assert.equal(printed[0][0], "zookeeper: a watcher threw: w");
  });
});
