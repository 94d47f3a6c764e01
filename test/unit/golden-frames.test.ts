// Golden frames recorded between the real Java client and a real ZooKeeper 3.8.0 server: every request
// decodes and re-encodes byte for byte; every reply decodes completely, to values the scenario implies;
// the recorded byte streams frame identically when split at every byte boundary.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import {
  type ACL,
  type ConnectRequest,
  type ConnectResponse,
  type Create2Response,
  type CreateRequest,
  type CreateTTLRequest,
  type GetACLResponse,
  type GetChildren2Response,
  type GetDataResponse,
  type MultiRequest,
  type MultiResponse,
  type ReplyHeader,
  type RequestHeader,
  type SetWatches2,
  type Stat,
  type WatcherEvent,
  EventType,
  FrameDecoder,
  JuteReader,
  JuteWriter,
  OpCode,
  Ops,
  PING_FRAME,
  encodeFrame,
  encodeRequest,
  eventTypeName,
  isValidPath,
  opSpec,
  readConnectRequest,
  readConnectResponse,
  readReplyHeader,
  readRequestHeader,
  readWatcherEvent,
  writeConnectRequest,
  writeConnectResponse,
  writeReplyHeader,
  writeWatcherEvent,
} from "../../src/protocol/index.ts";
import { type GoldenFrame, bytesOf, connections, isHandshake, loadGolden, pairReplies, streamOf, toHex } from "../support/golden.ts";

const golden = loadGolden();
const frames = golden.frames;
const replies = pairReplies(frames);
const tick = Number(golden.recordedWith.serverConfig.find((l) => l.startsWith("tickTime="))?.split("=")[1] ?? 2000);
const requestedTimeout = golden.recordedWith.sessionTimeoutRequestedMs;
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | null): string | null => (b === null ? null : new TextDecoder().decode(b));
const OPEN_ACL: ACL[] = [{ perms: 31, id: { scheme: "world", id: "anyone" } }];

/** Opcodes and event types whose frames were decoded and checked, for the coverage test at the end. */
const testedRequests = new Set<number>();
const testedReplies = new Set<number>();
const testedEvents = new Set<number>();

/** Error codes the scenarios provoke on purpose. */
const EXPECTED_ERR: Record<string, number> = {
  "exists-miss-watch": -101,
  "error-nowatcher": -121,
  "error-nonode": -101,
  "error-nodeexists": -110,
  "error-badversion": -103,
  "error-notempty": -111,
  "error-nochildrenforephemerals": -108,
  "error-noauth": -102,
};

interface DecodedRequest {
  header: RequestHeader;
  body: unknown;
}

function payloadReader(f: GoldenFrame): JuteReader {
  const bytes = bytesOf(f);
  const declared = new DataView(bytes.buffer).getInt32(0);
  assert.equal(declared, bytes.length - 4, `frame #${f.seq}: length prefix`);
  return new JuteReader(bytes, 4);
}

function decodeRequest(f: GoldenFrame): DecodedRequest {
  const r = payloadReader(f);
  const header = readRequestHeader(r);
  const spec = opSpec(header.type);
  assert.ok(spec, `frame #${f.seq}: no op for type ${header.type}`);
  const body = spec.readRequest(r);
  assert.equal(r.remaining, 0, `frame #${f.seq}: ${r.remaining} request bytes not consumed`);
  return { header, body };
}

/** The session a connection belongs to: reconnects resume the id of an earlier ConnectResponse. */
function sessionOfConn(conn: number): bigint {
  const resp = frames.find((f) => f.conn === conn && f.dir === "s2c" && isHandshake(frames, f));
  assert.ok(resp, `conn ${conn} has no ConnectResponse`);
  return readConnectResponse(payloadReader(resp)).sessionId;
}

function checkStatShape(s: Stat, zxid: bigint, what: string): void {
  assert.ok(s.czxid > 0n && s.czxid <= s.mzxid && s.mzxid <= zxid, `${what}: zxids ${s.czxid} ${s.mzxid} ${zxid}`);
  assert.ok(s.pzxid >= s.czxid, `${what}: pzxid`);
  assert.ok(s.ctime > 1.5e12 && s.ctime <= s.mtime && s.mtime < 4e12, `${what}: times ${s.ctime} ${s.mtime}`);
  assert.ok(s.version >= 0 && s.cversion >= 0 && s.aversion >= 0 && s.numChildren >= 0 && s.dataLength >= 0, what);
}

function checkCreatedPath(req: CreateRequest, path: string): void {
  // Sequential modes (2, 3, 6) get the parent's cversion as 10 digits appended.
  if ([2, 3, 6].includes(req.flags)) assert.match(path, new RegExp(`^${req.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\d{10}$`));
  else assert.equal(path, req.path);
}

function checkCreate2(req: CreateRequest, res: Create2Response, zxid: bigint, type: number): void {
  checkCreatedPath(req, res.path);
  const s = res.stat;
  checkStatShape(s, zxid, "create2 stat");
  assert.equal(s.czxid, zxid, "a new node's czxid is the write's zxid");
  assert.equal(s.mzxid, zxid);
  assert.equal(s.ctime, s.mtime);
  assert.equal(s.version, 0);
  assert.equal(s.dataLength, req.data?.length ?? 0);
  if (type === OpCode.createContainer) assert.equal(req.flags, 4);
  if (type === OpCode.createTTL) {
    assert.ok(req.flags === 5 || req.flags === 6);
    assert.equal((req as CreateTTLRequest).ttl, 600000n);
  }
  // Clients see ephemeralOwner 0 for containers and TTL nodes: the server keeps the marker values
  // (0x8000… and 0xFF00…|ttl) internally and DataNode.copyStat reports only real session owners.
  if (req.flags === 1 || req.flags === 3) assert.notEqual(s.ephemeralOwner, 0n);
  else assert.equal(s.ephemeralOwner, 0n);
}

/** Multi results in 3.8: create-like ops come back as create (1) or create2 (15). */
function resultTypeFor(opType: number): number {
  return opType === OpCode.createContainer || opType === OpCode.createTTL ? OpCode.create2 : opType;
}

function checkMulti(f: GoldenFrame, req: MultiRequest, res: MultiResponse, zxid: bigint, read: boolean): void {
  assert.equal(res.results.length, req.ops.length, "one result per op");
  const errs = res.results.map((x) => (x.type === OpCode.error ? x.err : null));
  if (!read && errs.some((e) => e !== null)) {
    // A failed atomic multi: 0 for the ops before the failing one, its code, then -2 (as MultiResponse does).
    const bad = errs.findIndex((e) => e !== 0);
    assert.ok(errs.every((e, i) => (i < bad ? e === 0 : i === bad ? e !== null && e < 0 && e !== -2 : e === -2)), `errs ${errs.join(",")}`);
    if (f.scenario === "multi-fail") assert.deepStrictEqual(errs, [0, -103, -2]);
    return;
  }
  res.results.forEach((x, i) => {
    const op = req.ops[i]!;
    if (x.type === OpCode.error) {
      assert.ok(read, "only multiRead mixes errors with results");
      assert.ok(x.err < 0);
      return;
    }
    assert.equal(x.type, resultTypeFor(op.type), `result ${i}`);
    if (x.type === OpCode.create || x.type === OpCode.create2) checkCreatedPath(op.request as CreateRequest, x.path);
    if (x.type === OpCode.setData) assert.equal(x.stat.mzxid, zxid, "all ops of a multi share one zxid");
    if (x.type === OpCode.getChildren) assert.ok(x.children.every((c) => c.length > 0 && !c.includes("/")));
    if (x.type === OpCode.getData) assert.equal(x.stat.dataLength, x.data?.length ?? 0);
  });
  if (f.scenario === "multiRead") assert.deepStrictEqual(errs, [null, null, -101]);
}

function checkRequest(f: GoldenFrame, { header, body }: DecodedRequest): void {
  const t = header.type;
  if (t === OpCode.ping) assert.equal(header.xid, -2);
  else if (t === OpCode.auth) assert.equal(header.xid, -4);
  else assert.ok(header.xid > 0, "JC uses sequential positive xids for everything else, setWatches included");
  const path = (body as { path?: unknown } | undefined)?.path;
  if (typeof path === "string") {
    assert.ok(isValidPath(path, true), `path ${path}`);
    assert.ok(path === "/golden" || path.startsWith("/golden/"), `path ${path}`);
  }
  switch (t) {
    case OpCode.create:
    case OpCode.create2:
    case OpCode.createContainer:
    case OpCode.createTTL: {
      const c = body as CreateRequest;
      assert.ok(c.acl.length > 0);
      assert.equal(c.flags, t === OpCode.createContainer ? 4 : c.flags);
      if (t === OpCode.createTTL) assert.equal((c as CreateTTLRequest).ttl, 600000n);
      else assert.ok(c.flags >= 0 && c.flags <= 4);
      if (f.scenario === "create-null-data") assert.equal(c.data, null);
      break;
    }
    case OpCode.multi:
    case OpCode.multiRead: {
      const m = body as MultiRequest;
      assert.ok(m.ops.length > 0);
      if (t === OpCode.multiRead) assert.ok(m.ops.every((o) => (o.type === OpCode.getData || o.type === OpCode.getChildren) && !o.request.watch));
      break;
    }
    case OpCode.setWatches:
    case OpCode.setWatches2: {
      const s = body as SetWatches2;
      assert.ok(s.relativeZxid > 0n);
      const all = [...s.dataWatches, ...s.existWatches, ...s.childWatches, ...(s.persistentWatches ?? []), ...(s.persistentRecursiveWatches ?? [])];
      assert.ok(all.length > 0 && all.every((p) => p.startsWith("/golden")));
      break;
    }
    case OpCode.auth:
      assert.deepStrictEqual(body, { type: 0, scheme: "digest", auth: utf8("golden:secret") });
      break;
    case OpCode.getEphemerals: {
      const prefix = (body as { prefixPath: string }).prefixPath;
      assert.equal(prefix, f.scenario === "getEphemerals-all" ? "/" : "/golden/e");
      break;
    }
    case OpCode.ping:
      assert.equal(f.hex, toHex(PING_FRAME));
      break;
    case OpCode.whoAmI:
    case OpCode.closeSession:
      assert.equal(f.hex.length, 24, "header only");
      break;
  }
}

function checkResponse(f: GoldenFrame, req: DecodedRequest, header: ReplyHeader, res: unknown): void {
  const t = req.header.type;
  const body = req.body;
  const zxid = header.zxid;
  switch (t) {
    case OpCode.create:
      checkCreatedPath(body as CreateRequest, res as string);
      break;
    case OpCode.create2:
    case OpCode.createContainer:
    case OpCode.createTTL:
      checkCreate2(body as CreateRequest, res as Create2Response, zxid, t);
      break;
    case OpCode.exists:
      checkStatShape(res as Stat, zxid, "exists");
      break;
    case OpCode.getData: {
      const g = res as GetDataResponse;
      checkStatShape(g.stat, zxid, "getData");
      assert.equal(g.stat.dataLength, g.data?.length ?? 0);
      if (f.scenario === "getData-watch") assert.equal(text(g.data), "golden-root");
      if (f.scenario === "getData-null-data") assert.equal(g.data, null);
      break;
    }
    case OpCode.setData: {
      const s = res as Stat;
      const q = body as { data: Uint8Array | null; version: number };
      checkStatShape(s, zxid, "setData");
      assert.equal(s.mzxid, zxid, "the write's own zxid");
      assert.equal(s.dataLength, q.data?.length ?? 0);
      if (q.version >= 0) assert.equal(s.version, q.version + 1);
      break;
    }
    case OpCode.getACL: {
      const a = res as GetACLResponse;
      checkStatShape(a.stat, zxid, "getACL");
      if (f.scenario === "getACL") assert.deepStrictEqual(a.acl, OPEN_ACL);
      const digest = a.acl.find((x) => x.id.scheme === "digest");
      if (f.scenario === "getACL-masked") assert.equal(digest?.id.id, "golden:x", "unauthenticated readers see a masked digest");
      if (f.scenario === "getACL-after-auth") assert.match(digest?.id.id ?? "", /^golden:[A-Za-z0-9+/]{27}=$/);
      break;
    }
    case OpCode.setACL: {
      const s = res as Stat;
      const q = body as { version: number };
      if (q.version >= 0) assert.equal(s.aversion, q.version + 1);
      break;
    }
    case OpCode.getChildren:
      assert.ok((res as string[]).every((c) => c.length > 0 && !c.includes("/")));
      break;
    case OpCode.getChildren2: {
      const g = res as GetChildren2Response;
      assert.equal(g.stat.numChildren, g.children.length);
      assert.ok(g.children.length > 0);
      break;
    }
    case OpCode.sync:
      assert.equal(res, (body as { path: string }).path);
      break;
    case OpCode.multi:
    case OpCode.multiRead:
      assert.equal(header.err, 0, "a multi reports failures per op, never in the header");
      checkMulti(f, body as MultiRequest, res as MultiResponse, zxid, t === OpCode.multiRead);
      break;
    case OpCode.getEphemerals: {
      const prefix = (body as { prefixPath: string }).prefixPath;
      const list = res as string[];
      assert.ok(list.length > 0 && list.every((p) => p.startsWith(prefix) && isValidPath(p)), list.join(","));
      break;
    }
    case OpCode.getAllChildrenNumber:
      assert.ok((res as number) > 0);
      break;
    case OpCode.addWatch:
      assert.equal(res, 0, "addWatch replies with ErrorResponse{0}");
      break;
    case OpCode.whoAmI: {
      const ids = res as { authScheme: string; user: string }[];
      assert.ok(ids.some((c) => c.authScheme === "digest" && c.user === "golden"), JSON.stringify(ids));
      assert.ok(ids.some((c) => c.authScheme === "ip" && c.user === "127.0.0.1"), JSON.stringify(ids));
      break;
    }
    default:
      assert.equal(res, undefined, `op ${t} has no reply body`);
  }
}

/** Re-encodes a decoded reply with our writers. */
function encodeReply(header: ReplyHeader, write?: (w: JuteWriter) => void): string {
  return toHex(
    encodeFrame((w) => {
      writeReplyHeader(w, header);
      write?.(w);
    }),
  );
}

describe("golden frames: Java client 3.8.0 ↔ server 3.8.0", () => {
  it("the fixture is non-trivial", () => {
    assert.ok(frames.length > 100, `${frames.length} frames`);
    assert.ok(connections(frames).length >= 3);
  });

  for (const f of frames.filter((x) => x.dir === "c2s")) {
    it(`#${f.seq} c2s ${f.label} (${f.scenario}): decodes and re-encodes byte for byte`, () => {
      if (isHandshake(frames, f)) {
        assert.equal(f.label, "ConnectRequest");
        const r = payloadReader(f);
        const c: ConnectRequest = readConnectRequest(r);
        assert.equal(r.remaining, 0);
        assert.equal(toHex(encodeFrame((w) => writeConnectRequest(w, c))), f.hex);
        assert.equal(c.protocolVersion, 0);
        assert.equal(c.timeOut, requestedTimeout, "JC resends the requested timeout on every connect");
        assert.equal(c.passwd.length, 16);
        assert.equal(c.readOnly, false);
        const first = frames.find((g) => g.dir === "c2s" && isHandshake(frames, g) && g.conn !== f.conn && sessionOfConn(g.conn) === sessionOfConn(f.conn));
        if (c.sessionId === 0n) {
          assert.equal(c.lastZxidSeen, 0n);
          assert.deepStrictEqual(c.passwd, new Uint8Array(16));
        } else {
          // A reconnect resumes an earlier session with its password and the last zxid it saw.
          assert.ok(first && first.conn < f.conn, "resumes a session opened earlier");
          const opened = readConnectResponse(payloadReader(streamOf(frames, first.conn, "s2c")[0]!));
          assert.equal(c.sessionId, opened.sessionId);
          assert.deepStrictEqual(c.passwd, opened.passwd);
          assert.ok(c.lastZxidSeen > 0n);
        }
        return;
      }
      const d = decodeRequest(f);
      assert.equal(d.header.xid, f.xid);
      assert.equal(d.header.type, f.opcode);
      const spec = opSpec(d.header.type)!;
      // Encoding the same logical request gives identical bytes.
      assert.equal(toHex(encodeRequest(d.header.xid, d.header.type, spec.writeRequest, d.body)), f.hex);
      checkRequest(f, d);
      testedRequests.add(d.header.type);
    });
  }

  for (const { frame: f, request, kind } of replies) {
    it(`#${f.seq} s2c ${f.label} (${f.scenario}): decodes completely to the expected values`, () => {
      if (kind === "connect") {
        assert.equal(f.label, "ConnectResponse");
        const r = payloadReader(f);
        const c: ConnectResponse = readConnectResponse(r);
        assert.equal(r.remaining, 0, "a client that sent readOnly gets it back (37-byte reply)");
        assert.equal(toHex(encodeFrame((w) => writeConnectResponse(w, c))), f.hex);
        assert.equal(c.protocolVersion, 0);
        assert.ok(c.timeOut >= 2 * tick && c.timeOut <= 20 * tick, `negotiated ${c.timeOut}`);
        assert.equal(c.timeOut, Math.min(Math.max(requestedTimeout, 2 * tick), 20 * tick));
        assert.notEqual(c.sessionId, 0n);
        assert.equal(c.passwd.length, 16);
        assert.equal(c.readOnly, false);
        const req = readConnectRequest(payloadReader(streamOf(frames, f.conn, "c2s")[0]!));
        if (req.sessionId !== 0n) {
          assert.equal(c.sessionId, req.sessionId, "the session is revalidated");
          assert.deepStrictEqual(c.passwd, req.passwd);
        }
        return;
      }
      const r = payloadReader(f);
      const header = readReplyHeader(r);
      assert.equal(header.xid, f.xid);
      assert.equal(header.err, f.err);
      if (kind === "notification") {
        const e: WatcherEvent = readWatcherEvent(r);
        assert.equal(r.remaining, 0);
        assert.equal(encodeReply(header, (w) => writeWatcherEvent(w, e)), f.hex);
        assert.equal(header.err, 0);
        assert.equal(header.zxid, -1n, "3.8 servers send zxid -1 on notifications");
        assert.equal(e.state, 3, "SyncConnected");
        assert.ok(e.type >= EventType.NodeCreated && e.type <= EventType.NodeChildrenChanged, `type ${e.type}`);
        assert.ok(isValidPath(e.path) && e.path.startsWith("/golden"), e.path);
        if (f.event) assert.deepStrictEqual({ type: eventTypeName(e.type), state: e.state, path: e.path }, f.event);
        testedEvents.add(e.type);
        return;
      }
      assert.ok(request, `#${f.seq}: no request with xid ${header.xid} on conn ${f.conn}`);
      const req = decodeRequest(request);
      assert.equal(req.header.type, f.opcode);
      const spec = opSpec(req.header.type)!;
      if (kind === "ping") assert.ok(header.zxid > 0n, "a ping reply carries the server's last zxid");
      if (kind === "auth") assert.equal(header.zxid, 0n, "auth replies carry zxid 0");
      if (f.scenario in EXPECTED_ERR && header.err !== 0) assert.equal(header.err, EXPECTED_ERR[f.scenario]);
      if (header.err !== 0) {
        assert.ok(
          Object.values(EXPECTED_ERR).includes(header.err) && [OpCode.exists, OpCode.getData, OpCode.create, OpCode.setData, OpCode.delete, OpCode.removeWatches].includes(req.header.type as never),
          `unexpected err ${header.err} for op ${req.header.type}`,
        );
        assert.equal(r.remaining, 0, "a failed reply carries no body");
        assert.equal(encodeReply(header), f.hex);
      } else {
        assert.ok(!(f.scenario in EXPECTED_ERR), `${f.scenario} should have failed`);
        const res = spec.readResponse(r);
        assert.equal(r.remaining, 0, `${r.remaining} reply bytes not consumed`);
        assert.equal(encodeReply(header, (w) => spec.writeResponse(w, res)), f.hex);
        checkResponse(f, req, header, res);
      }
      testedReplies.add(req.header.type);
    });
  }

  it("every scenario that provokes an error got exactly that code", () => {
    for (const [scenario, code] of Object.entries(EXPECTED_ERR)) {
      const got = replies.filter((x) => x.frame.scenario === scenario && x.kind === "reply").map((x) => x.frame.err);
      assert.ok(got.includes(code), `${scenario}: got ${got.join(",")}`);
    }
  });

  it("xids of one session increase across reconnects; zxids never go back", () => {
    const sessions = new Map<bigint, number[]>();
    for (const c of connections(frames)) {
      const s = sessionOfConn(c);
      sessions.set(s, [...(sessions.get(s) ?? []), c]);
    }
    assert.ok([...sessions.values()].some((conns) => conns.length > 1), "the fixture has a reconnect");
    for (const conns of sessions.values()) {
      const xids = frames.filter((f) => conns.includes(f.conn) && f.dir === "c2s" && (f.xid ?? 0) > 0).map((f) => f.xid!);
      assert.ok(xids.every((x, i) => i === 0 || x > xids[i - 1]!), xids.join(","));
      const zxids = replies
        .filter((x) => conns.includes(x.frame.conn) && (x.kind === "reply" || x.kind === "ping"))
        .map((x) => readReplyHeader(payloadReader(x.frame)).zxid);
      assert.ok(zxids.every((z, i) => i === 0 || z >= zxids[i - 1]!), zxids.join(","));
    }
  });

  it("encodes hand-built logical requests to the recorded bytes", () => {
    const find = (scenario: string, label: string): GoldenFrame => {
      const f = frames.find((x) => x.scenario === scenario && x.label === label && x.dir === "c2s");
      assert.ok(f, `${scenario}/${label}`);
      return f;
    };
    const cases: Array<[GoldenFrame, Uint8Array]> = [];
    const f1 = find("create-persistent", "create");
    cases.push([f1, encodeRequest(f1.xid!, OpCode.create, Ops.create.writeRequest, { path: "/golden", data: utf8("golden-root"), acl: OPEN_ACL, flags: 0 })]);
    const f2 = find("exists-hit-watch", "exists");
    cases.push([f2, encodeRequest(f2.xid!, OpCode.exists, Ops.exists.writeRequest, { path: "/golden", watch: true })]);
    const f3 = find("getData-null-data", "getData");
    cases.push([f3, encodeRequest(f3.xid!, OpCode.getData, Ops.getData.writeRequest, { path: "/golden/nulldata", watch: false })]);
    const f4 = find("auth-digest", "auth");
    cases.push([f4, encodeRequest(-4, OpCode.auth, Ops.auth.writeRequest, { type: 0, scheme: "digest", auth: utf8("golden:secret") })]);
    const f5 = find("getEphemerals-all", "getEphemerals");
    cases.push([f5, encodeRequest(f5.xid!, OpCode.getEphemerals, Ops.getEphemerals.writeRequest, { prefixPath: "/" })]);
    const f6 = find("addWatch-persistent-recursive", "addWatch");
    cases.push([f6, encodeRequest(f6.xid!, OpCode.addWatch, Ops.addWatch.writeRequest, { path: "/golden/rw", mode: 1 })]);
    const f7 = find("whoAmI", "whoAmI");
    cases.push([f7, encodeRequest(f7.xid!, OpCode.whoAmI)]);
    const f8 = find("closeSession", "closeSession");
    cases.push([f8, encodeRequest(f8.xid!, OpCode.closeSession)]);
    const f9 = find("connect", "ConnectRequest");
    cases.push([f9, encodeFrame((w) => writeConnectRequest(w, { protocolVersion: 0, lastZxidSeen: 0n, timeOut: requestedTimeout, sessionId: 0n, passwd: new Uint8Array(16), readOnly: false }))]);
    const f10 = find("multi-fail", "multi");
    const multi = decodeRequest(f10).body as MultiRequest;
    assert.deepStrictEqual(multi.ops.map((o) => o.type), [OpCode.create, OpCode.check, OpCode.setData]);
    cases.push([f10, encodeRequest(f10.xid!, OpCode.multi, Ops.multi.writeRequest, multi)]);
    for (const [f, bytes] of cases) assert.equal(toHex(bytes), f.hex, `#${f.seq} ${f.label}`);
  });

  // One test per connection and direction; frames are compared as bytes (hex strings of every split
  // made this slow enough to matter under Bun on a loaded machine).
  for (const conn of connections(frames)) {
    for (const dir of ["c2s", "s2c"] as const) {
      const recorded = streamOf(frames, conn, dir);
      if (recorded.length === 0) continue;
      it(`conn ${conn} ${dir}: the recorded stream frames identically when split at every byte boundary`, () => {
        const want = recorded.map((f) => bytesOf(f).subarray(4));
        const stream = new Uint8Array(recorded.reduce((n, f) => n + f.hex.length / 2, 0));
        recorded.reduce((at, f) => (stream.set(bytesOf(f), at), at + f.hex.length / 2), 0);
        const check = (chunks: Uint8Array[], what: string): void => {
          const d = new FrameDecoder();
          const got: Uint8Array[] = [];
          for (const c of chunks) got.push(...d.push(c));
          assert.equal(d.buffered, 0, what);
          assert.equal(got.length, want.length, what);
          got.forEach((g, k) => {
            const w = want[k]!;
            if (g.length !== w.length || g.some((b, j) => b !== w[j])) assert.equal(toHex(g), toHex(w), `${what}: frame ${k}`);
          });
        };
        for (let i = 0; i <= stream.length; i++) check([stream.subarray(0, i), stream.subarray(i)], `split at ${i}`);
        check(Array.from(stream, (b) => Uint8Array.of(b)), "byte by byte");
      });
    }
  }

  it("covers every required opcode and all four server event types (runs last)", () => {
    const required: number[][] = [
      [1], [2], [3], [4], [5], [6], [7], [8], [9], [11], [12], [14], [15], [17, 18], [19], [21],
      [100], [101, 105], [103], [104], [106], [107], [-11],
    ];
    const recorded = new Set(frames.filter((f) => f.dir === "c2s" && f.opcode !== null).map((f) => f.opcode!));
    for (const alternatives of required) {
      const name = alternatives.join(" or ");
      assert.ok(alternatives.some((c) => recorded.has(c)), `opcode ${name} missing from the fixture`);
      assert.ok(alternatives.some((c) => testedRequests.has(c)), `opcode ${name}: no request checked`);
      assert.ok(alternatives.some((c) => testedReplies.has(c)), `opcode ${name}: no reply checked`);
    }
    for (const t of [EventType.NodeCreated, EventType.NodeDeleted, EventType.NodeDataChanged, EventType.NodeChildrenChanged]) {
      assert.ok(testedEvents.has(t), `no ${eventTypeName(t)} notification checked`);
    }
  });
});
