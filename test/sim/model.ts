// An in-memory ZooKeeper server for the deterministic simulation. It speaks the real wire protocol
// through the project's own codec (frame decoder, records, op table) and behaves like a standalone
// server of the line it plays ("3.8" or "3.9": the answers to the client's feature probes, zxids in
// notifications, watch removal types) where the client can tell: session create/revalidate/expire
// with tickTime buckets, the data tree (model-tree.ts), one-shot and persistent(-recursive) watches
// per connection with SetWatches catch-up (model-watches.ts), atomic multi, multiRead, ACLs,
// getEphemerals, getAllChildrenNumber, whoAmI, xid-ordered replies. An opcode it does not know is
// answered UNIMPLEMENTED and the link dropped, as real servers do. No timers of its own: the driver
// calls tick() on the simulated clock. Checked against a real server by model-vs-server.test.ts.
import {
  AddWatchMode,
  ErrorCode,
  FrameDecoder,
  JuteReader,
  JuteWriter,
  KeeperState,
  OpCode,
  Ops,
  Xid,
  encodeFrame,
  readConnectRequest,
  readRequestHeader,
  writeConnectResponse,
  writeReplyHeader,
  writeWatcherEvent,
  type MultiResult,
} from "../../src/protocol/index.ts";
import { Fail, Tree, type Fire, type Znode } from "./model-tree.ts";
import { Watches } from "./model-watches.ts";

export interface ServerLink {
  send(frame: Uint8Array): void;
  close(): void;
}

/** The server line the model plays where the client can tell. */
export type ServerLine = "3.8" | "3.9";

export interface ModelOptions {
  tickTime?: number;
  serverId?: bigint;
  line?: ServerLine;
}

interface SessionRec {
  id: bigint;
  passwd: Uint8Array;
  timeout: number;
  expiresAt: number;
  conn: Conn | null;
  ephemerals: Set<string>;
}

class Conn {
  readonly decoder = new FrameDecoder();
  readonly link: ServerLink;
  session: SessionRec | null = null;
  closed = false;
  constructor(link: ServerLink) {
    this.link = link;
  }
}

type Body = ((w: JuteWriter) => void) | undefined;

export class ZkModel {
  private readonly tree: Tree;
  private readonly watches: Watches<Conn>;
  private readonly sessions = new Map<bigint, SessionRec>();
  private readonly conns = new Set<Conn>();
  private nextSession = 1n;
  private readonly w = new JuteWriter(1024);
  up = true;
  private readonly now: () => number;
  private readonly random: () => number;
  readonly tickTime: number;
  readonly serverId: bigint;
  readonly line: ServerLine;

  constructor(now: () => number, random: () => number, o: ModelOptions = {}) {
    this.now = now;
    this.random = random;
    this.tickTime = o.tickTime ?? 500;
    this.serverId = o.serverId ?? 1n;
    this.line = o.line ?? "3.9";
    this.watches = new Watches<Conn>(this.line);
    const notify = (c: Conn, type: number, path: string, zxid: bigint): void => this.notify(c, type, path, zxid);
    this.tree = new Tree(now, (path, type, zxid) => this.watches.trigger(path, type, zxid, notify), true);
  }

  get zxid(): bigint {
    return this.tree.zxid;
  }
  get sessionCount(): number {
    return this.sessions.size;
  }
  hasSession(id: bigint): boolean {
    return this.sessions.has(id);
  }
  /** Data of a node, for the driver's checks (not a client path). */
  peek(path: string): Znode | undefined {
    return this.tree.nodes.get(path);
  }

  // --- connections ---

  accept(link: ServerLink): { onData(chunk: Uint8Array): void; onClose(): void } {
    if (!this.up) throw new Error("server down");
    const c = new Conn(link);
    this.conns.add(c);
    return {
      onData: (chunk) => {
        if (c.closed) return;
        for (const f of c.decoder.push(chunk)) {
          if (c.closed) return;
          this.frame(c, f);
        }
      },
      onClose: () => this.drop(c),
    };
  }

  private drop(c: Conn): void {
    if (c.closed) return;
    c.closed = true;
    this.conns.delete(c);
    this.watches.drop(c);
    if (c.session && c.session.conn === c) c.session.conn = null;
  }

  private closeConn(c: Conn): void {
    this.drop(c);
    c.link.close();
  }

  /** Server restart: every connection drops, sessions survive and get a fresh timeout when it is back. */
  stop(): void {
    this.up = false;
    for (const c of [...this.conns]) this.closeConn(c);
  }
  start(): void {
    this.up = true;
    for (const s of this.sessions.values()) s.expiresAt = this.expiry(s.timeout);
  }

  private expiry(timeout: number): number {
    const t = this.tickTime;
    return (Math.floor((this.now() + timeout) / t) + 1) * t;
  }

  /** The session tracker: called every tickTime on the simulated clock. */
  tick(): void {
    if (!this.up) return;
    for (const s of [...this.sessions.values()]) if (s.expiresAt <= this.now()) this.endSession(s);
  }

  /** Forced expiry (as if the server had not heard from the session for its timeout). */
  expire(id: bigint): boolean {
    const s = this.sessions.get(id);
    if (!s) return false;
    this.endSession(s);
    return true;
  }

  private owners = (id: bigint): Set<string> | undefined => this.sessions.get(id)?.ephemerals;

  /** closeSession or expiry: one transaction deletes the session's ephemerals, deepest first. */
  private endSession(s: SessionRec, closing?: Conn): void {
    this.sessions.delete(s.id);
    if (closing) s.conn = null;
    this.tree.zxid++;
    const fire: Fire = [];
    for (const p of [...s.ephemerals].sort().reverse()) if (this.tree.nodes.has(p)) this.tree.del(p, -1, this.owners, fire);
    for (const f of fire) f();
    if (s.conn) this.closeConn(s.conn);
  }

  // --- frames ---

  private frame(c: Conn, f: Uint8Array): void {
    const r = new JuteReader(f);
    if (!c.session) return this.handshake(c, r);
    const s = c.session;
    s.expiresAt = this.expiry(s.timeout);
    const h = readRequestHeader(r);
    if (h.type === OpCode.ping) return this.reply(c, Xid.PING, 0);
    if (h.type === OpCode.auth) return this.reply(c, h.xid, ErrorCode.AUTHFAILED, undefined, true);
    if (h.type === OpCode.closeSession) {
      this.endSession(s, c);
      this.reply(c, h.xid, 0);
      this.closeConn(c);
      return;
    }
    try {
      const body = this.op(c, h.type, r);
      this.reply(c, h.xid, 0, body);
    } catch (e) {
      if (!(e instanceof Fail)) throw e;
      this.reply(c, h.xid, e.code);
      if (e.code === ErrorCode.UNIMPLEMENTED) this.closeConn(c);
    }
  }

  private handshake(c: Conn, r: JuteReader): void {
    const req = readConnectRequest(r);
    const timeout = Math.min(Math.max(req.timeOut, 2 * this.tickTime), 20 * this.tickTime);
    let s: SessionRec | undefined;
    if (req.sessionId === 0n) {
      const passwd = new Uint8Array(16).map(() => Math.floor(this.random() * 256));
      s = { id: (this.serverId << 56n) | this.nextSession++, passwd, timeout, expiresAt: 0, conn: null, ephemerals: new Set() };
      this.sessions.set(s.id, s);
    } else {
      s = this.sessions.get(req.sessionId);
      if (s && !s.passwd.every((b, i) => b === req.passwd[i])) s = undefined;
      if (!s) {
        this.send(c, (w) => writeConnectResponse(w, { protocolVersion: 0, timeOut: 0, sessionId: 0n, passwd: new Uint8Array(16), readOnly: false }));
        this.closeConn(c);
        return;
      }
      s.timeout = timeout;
      if (s.conn && s.conn !== c) this.closeConn(s.conn);
    }
    s.expiresAt = this.expiry(timeout);
    s.conn = c;
    c.session = s;
    this.send(c, (w) => writeConnectResponse(w, { protocolVersion: 0, timeOut: timeout, sessionId: s.id, passwd: s.passwd, readOnly: false }));
  }

  private send(c: Conn, write: (w: JuteWriter) => void): void {
    if (!c.closed) c.link.send(encodeFrame(write, undefined, this.w).slice());
  }

  private reply(c: Conn, xid: number, err: number, body?: (w: JuteWriter) => void, noZxid = false): void {
    this.send(c, (w) => {
      writeReplyHeader(w, { xid, zxid: noZxid ? 0n : this.tree.zxid, err });
      if (err === 0 && body) body(w);
    });
    if (err === ErrorCode.AUTHFAILED) this.closeConn(c);
  }

  private notify(c: Conn, type: number, path: string, zxid: bigint): void {
    this.send(c, (w) => {
      writeReplyHeader(w, { xid: Xid.NOTIFICATION, zxid, err: 0 });
      writeWatcherEvent(w, { type, state: KeeperState.SyncConnected, path });
    });
  }

  // --- operations ---

  /** A write: one zxid, also when it fails (the server logs an error txn); the watch triggers run once it is applied. */
  private txn<T>(fn: (fire: Fire) => T): T {
    const fire: Fire = [];
    this.tree.zxid++;
    const v = fn(fire);
    for (const f of fire) f();
    return v;
  }

  private op(c: Conn, type: number, r: JuteReader): Body {
    const t = this.tree;
    const s = c.session!;
    switch (type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
      case OpCode.createTTL: {
        const req = type === OpCode.createTTL ? Ops.createTTL.readRequest(r) : { ...Ops.create.readRequest(r), ttl: 0n };
        const path = this.txn((fire) => t.create(type, req.path, req.data, req.acl, req.flags, req.ttl, s, fire));
        const stat = { ...t.nodes.get(path)!.stat };
        return type === OpCode.create ? (w) => Ops.create.writeResponse(w, path) : (w) => Ops.create2.writeResponse(w, { path, stat });
      }
      case OpCode.delete: {
        const req = Ops.delete.readRequest(r);
        this.txn((fire) => t.del(req.path, req.version, this.owners, fire));
        return undefined;
      }
      case OpCode.setData: {
        const req = Ops.setData.readRequest(r);
        const stat = this.txn((fire) => (t.checkSet(req.path, req.version), t.set(req.path, req.data, fire)));
        return (w) => Ops.setData.writeResponse(w, stat);
      }
      case OpCode.setACL: {
        const req = Ops.setACL.readRequest(r);
        const stat = this.txn(() => t.setAcl(req.path, req.acl, req.version));
        return (w) => Ops.setACL.writeResponse(w, stat);
      }
      case OpCode.exists: {
        const req = Ops.exists.readRequest(r);
        const n = t.nodes.get(req.path);
        if (req.watch) this.watches.add("data", req.path, c);
        if (!n) throw new Fail(ErrorCode.NONODE);
        const stat = { ...n.stat };
        return (w) => Ops.exists.writeResponse(w, stat);
      }
      case OpCode.getData: {
        const req = Ops.getData.readRequest(r);
        const n = t.node(req.path);
        if (req.watch) this.watches.add("data", req.path, c);
        const v = { data: n.data, stat: { ...n.stat } };
        return (w) => Ops.getData.writeResponse(w, v);
      }
      case OpCode.getACL: {
        const req = Ops.getACL.readRequest(r);
        const n = t.node(req.path);
        const v = { acl: n.acl, stat: { ...n.stat } };
        return (w) => Ops.getACL.writeResponse(w, v);
      }
      case OpCode.getChildren:
      case OpCode.getChildren2: {
        const req = Ops.getChildren.readRequest(r);
        const n = t.node(req.path);
        if (req.watch) this.watches.add("child", req.path, c);
        const children = [...n.children];
        const stat = { ...n.stat };
        return type === OpCode.getChildren ? (w) => Ops.getChildren.writeResponse(w, children) : (w) => Ops.getChildren2.writeResponse(w, { children, stat });
      }
      case OpCode.sync: {
        const req = Ops.sync.readRequest(r);
        return (w) => Ops.sync.writeResponse(w, req.path);
      }
      case OpCode.addWatch: {
        const req = Ops.addWatch.readRequest(r);
        if (req.mode === AddWatchMode.PERSISTENT) this.watches.add("persistent", req.path, c);
        else if (req.mode === AddWatchMode.PERSISTENT_RECURSIVE) this.watches.add("recursive", req.path, c);
        else throw new Fail(ErrorCode.MARSHALLINGERROR);
        return (w) => Ops.addWatch.writeResponse(w, 0);
      }
      case OpCode.removeWatches:
      case OpCode.checkWatches: {
        const req = Ops.removeWatches.readRequest(r);
        const found = this.watches.remove(c, req.path, req.type, type === OpCode.removeWatches);
        if (found === null) throw new Fail(ErrorCode.MARSHALLINGERROR);
        if (!found) throw new Fail(ErrorCode.NOWATCHER);
        return undefined;
      }
      case OpCode.setWatches:
      case OpCode.setWatches2: {
        const sw = type === OpCode.setWatches2 ? Ops.setWatches2.readRequest(r) : { ...Ops.setWatches.readRequest(r), persistentWatches: [], persistentRecursiveWatches: [] };
        this.watches.setWatches(c, sw, (p) => t.nodes.get(p)?.stat, (cc, ty, p, z) => this.notify(cc, ty, p, z));
        return undefined;
      }
      case OpCode.multi: {
        const req = Ops.multi.readRequest(r);
        const fire: Fire = [];
        const results = t.multi(req.ops, s, this.sessions.values(), this.owners, fire);
        for (const f of fire) f();
        return (w) => Ops.multi.writeResponse(w, { results });
      }
      case OpCode.multiRead: {
        const req = Ops.multiRead.readRequest(r);
        const results: MultiResult[] = req.ops.map((op) => {
          const n = t.nodes.get(op.request.path);
          if (!n) return { type: OpCode.error, err: ErrorCode.NONODE };
          if (op.type === OpCode.getData) return { type: OpCode.getData, data: n.data, stat: { ...n.stat } };
          if (op.type === OpCode.getChildren) return { type: OpCode.getChildren, children: [...n.children] };
          return { type: OpCode.error, err: ErrorCode.BADARGUMENTS };
        });
        return (w) => Ops.multiRead.writeResponse(w, { results });
      }
      case OpCode.getEphemerals: {
        const req = Ops.getEphemerals.readRequest(r);
        const list = [...s.ephemerals].filter((p) => p.startsWith(req.prefixPath)).sort();
        return (w) => Ops.getEphemerals.writeResponse(w, list);
      }
      case OpCode.getAllChildrenNumber: {
        const req = Ops.getAllChildrenNumber.readRequest(r);
        const n = t.descendants(req.path);
        return (w) => Ops.getAllChildrenNumber.writeResponse(w, n);
      }
      case OpCode.whoAmI:
        return (w) => Ops.whoAmI.writeResponse(w, [{ authScheme: "ip", user: "127.0.0.1" }]);
      default:
        // reconfig, sasl, createSession and unknown opcodes: the server answers UNIMPLEMENTED and drops the link.
        throw new Fail(ErrorCode.UNIMPLEMENTED);
    }
  }
}
