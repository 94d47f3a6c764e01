// An in-memory ZooKeeper server for the deterministic simulation. It speaks the real wire protocol
// through the project's own codec (frame decoder, records, op table) and behaves like a 3.9
// standalone server where the client can tell: session create/revalidate/expire with tickTime
// buckets, ephemeral and sequential nodes, Stat fields, one-shot and persistent(-recursive) watches
// per connection, atomic multi, SetWatches catch-up, xid-ordered replies. Anything it does not
// implement answers UNIMPLEMENTED (never a silent success). No timers of its own: the driver calls
// tick() on the simulated clock.
import {
  AddWatchMode,
  ErrorCode,
  EventType,
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
  type Stat,
} from "../../src/protocol/index.ts";

export interface ServerLink {
  send(frame: Uint8Array): void;
  close(): void;
}

interface Znode {
  data: Uint8Array | null;
  stat: Stat;
  children: Set<string>;
}

interface SessionRec {
  id: bigint;
  passwd: Uint8Array;
  timeout: number;
  expiresAt: number;
  conn: Conn | null;
  ephemerals: Set<string>;
}

type Table = Map<string, Set<Conn>>;

class Conn {
  readonly decoder = new FrameDecoder();
  readonly link: ServerLink;
  session: SessionRec | null = null;
  closed = false;
  constructor(link: ServerLink) {
    this.link = link;
  }
}

class Fail extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`zk error ${code}`);
    this.code = code;
  }
}

const parentOf = (p: string): string => (p.lastIndexOf("/") === 0 ? "/" : p.slice(0, p.lastIndexOf("/")));
const nameOf = (p: string): string => p.slice(p.lastIndexOf("/") + 1);
const validPath = (p: string): boolean => p === "/" || (p.startsWith("/") && !p.endsWith("/") && !p.includes("//"));

export class ZkModel {
  zxid = 0n;
  private readonly nodes = new Map<string, Znode>();
  private readonly sessions = new Map<bigint, SessionRec>();
  private readonly conns = new Set<Conn>();
  private readonly dataW: Table = new Map();
  private readonly childW: Table = new Map();
  private readonly persW: Table = new Map();
  private readonly recW: Table = new Map();
  private nextSession = 1n;
  private readonly w = new JuteWriter(1024);
  up = true;
  private readonly now: () => number;
  private readonly random: () => number;
  readonly tickTime: number;
  readonly serverId: bigint;

  constructor(now: () => number, random: () => number, tickTime = 500, serverId = 1n) {
    this.now = now;
    this.random = random;
    this.tickTime = tickTime;
    this.serverId = serverId;
    this.nodes.set("/", { data: null, stat: this.newStat(0n, 0n), children: new Set() });
    this.nodes.set("/zookeeper", { data: null, stat: this.newStat(0n, 0n), children: new Set() });
    this.nodes.get("/")!.children.add("zookeeper");
    this.nodes.get("/")!.stat.numChildren = 1;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }
  hasSession(id: bigint): boolean {
    return this.sessions.has(id);
  }
  /** Data of a node, for the driver's checks (not a client path). */
  peek(path: string): Znode | undefined {
    return this.nodes.get(path);
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
    for (const t of [this.dataW, this.childW, this.persW, this.recW]) for (const s of t.values()) s.delete(c);
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

  private endSession(s: SessionRec): void {
    this.sessions.delete(s.id);
    for (const p of [...s.ephemerals].sort().reverse()) {
      if (this.nodes.has(p)) {
        const fire: Array<() => void> = [];
        this.zxid++;
        this.del(p, -1, fire);
        for (const f of fire) f();
      }
    }
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
      this.sessions.delete(s.id);
      s.conn = null;
      this.zxid++;
      const fire: Array<() => void> = [];
      for (const p of [...s.ephemerals].sort().reverse()) if (this.nodes.has(p)) this.del(p, -1, fire);
      for (const f of fire) f();
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
    if (!c.closed) c.link.send(encodeFrame(write, this.w).slice());
  }

  private reply(c: Conn, xid: number, err: number, body?: (w: JuteWriter) => void, noZxid = false): void {
    this.send(c, (w) => {
      writeReplyHeader(w, { xid, zxid: noZxid ? 0n : this.zxid, err });
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

  private node(path: string): Znode {
    const n = this.nodes.get(path);
    if (!n) throw new Fail(ErrorCode.NONODE);
    return n;
  }

  private watch(t: Table, path: string, c: Conn): void {
    let s = t.get(path);
    if (!s) t.set(path, (s = new Set()));
    s.add(c);
  }

  private op(c: Conn, type: number, r: JuteReader): ((w: JuteWriter) => void) | undefined {
    switch (type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer: {
        const req = Ops.create.readRequest(r);
        const fire: Array<() => void> = [];
        this.zxid++;
        const path = this.create(c, type, req.path, req.data, req.flags, fire);
        for (const f of fire) f();
        const stat = { ...this.nodes.get(path)!.stat };
        return type === OpCode.create ? (w) => Ops.create.writeResponse(w, path) : (w) => Ops.create2.writeResponse(w, { path, stat });
      }
      case OpCode.delete: {
        const req = Ops.delete.readRequest(r);
        const fire: Array<() => void> = [];
        this.checkDelete(req.path, req.version);
        this.zxid++;
        this.del(req.path, req.version, fire);
        for (const f of fire) f();
        return undefined;
      }
      case OpCode.setData: {
        const req = Ops.setData.readRequest(r);
        const fire: Array<() => void> = [];
        this.checkSet(req.path, req.version);
        this.zxid++;
        const stat = this.set(req.path, req.data, fire);
        for (const f of fire) f();
        return (w) => Ops.setData.writeResponse(w, stat);
      }
      case OpCode.exists: {
        const req = Ops.exists.readRequest(r);
        const n = this.nodes.get(req.path);
        if (req.watch) this.watch(this.dataW, req.path, c);
        if (!n) throw new Fail(ErrorCode.NONODE);
        const stat = { ...n.stat };
        return (w) => Ops.exists.writeResponse(w, stat);
      }
      case OpCode.getData: {
        const req = Ops.getData.readRequest(r);
        const n = this.node(req.path);
        if (req.watch) this.watch(this.dataW, req.path, c);
        const v = { data: n.data, stat: { ...n.stat } };
        return (w) => Ops.getData.writeResponse(w, v);
      }
      case OpCode.getChildren:
      case OpCode.getChildren2: {
        const req = Ops.getChildren.readRequest(r);
        const n = this.node(req.path);
        if (req.watch) this.watch(this.childW, req.path, c);
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
        if (req.mode === AddWatchMode.PERSISTENT) this.watch(this.persW, req.path, c);
        else if (req.mode === AddWatchMode.PERSISTENT_RECURSIVE) this.watch(this.recW, req.path, c);
        else throw new Fail(ErrorCode.MARSHALLINGERROR);
        return (w) => Ops.addWatch.writeResponse(w, 0);
      }
      case OpCode.setWatches:
      case OpCode.setWatches2:
        this.setWatches(c, type, r);
        return undefined;
      case OpCode.multi:
        return this.multi(c, r);
      default:
        // getACL/setACL, multiRead, check/removeWatches, TTL, reconfig, sasl, getEphemerals, whoAmI...
        throw new Fail(ErrorCode.UNIMPLEMENTED);
    }
  }

  private create(c: Conn, type: number, path0: string, data: Uint8Array | null, flags: number, fire: Array<() => void>): string {
    if (flags < 0 || flags > 4 || (type === OpCode.createContainer) !== (flags === 4)) throw new Fail(ErrorCode.UNIMPLEMENTED);
    if (!validPath(path0) || path0 === "/") throw new Fail(ErrorCode.BADARGUMENTS);
    const parentPath = parentOf(path0);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw new Fail(ErrorCode.NONODE);
    if (parent.stat.ephemeralOwner !== 0n) throw new Fail(ErrorCode.NOCHILDRENFOREPHEMERALS);
    const sequential = (flags & 2) !== 0;
    const path = sequential ? path0 + String(parent.stat.cversion).padStart(10, "0") : path0;
    if (this.nodes.has(path)) throw new Fail(ErrorCode.NODEEXISTS);
    const ephemeral = (flags & 1) !== 0;
    const owner = ephemeral ? c.session!.id : 0n;
    const zxid = this.zxid;
    const stat = this.newStat(zxid, owner);
    stat.dataLength = data?.length ?? 0;
    this.nodes.set(path, { data, stat, children: new Set() });
    if (ephemeral) c.session!.ephemerals.add(path);
    parent.children.add(nameOf(path));
    parent.stat.cversion++;
    parent.stat.numChildren = parent.children.size;
    parent.stat.pzxid = zxid;
    fire.push(() => {
      this.trigger(path, EventType.NodeCreated, zxid);
      this.trigger(parentPath, EventType.NodeChildrenChanged, zxid);
    });
    return path;
  }

  private checkDelete(path: string, version: number): void {
    const n = this.node(path);
    if (version !== -1 && n.stat.version !== version) throw new Fail(ErrorCode.BADVERSION);
    if (n.children.size > 0) throw new Fail(ErrorCode.NOTEMPTY);
  }

  private del(path: string, version: number, fire: Array<() => void>): void {
    if (path === "/" || path === "/zookeeper") throw new Fail(ErrorCode.BADARGUMENTS);
    this.checkDelete(path, version);
    const n = this.nodes.get(path)!;
    const zxid = this.zxid;
    this.nodes.delete(path);
    if (n.stat.ephemeralOwner !== 0n) this.sessions.get(n.stat.ephemeralOwner)?.ephemerals.delete(path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath)!;
    parent.children.delete(nameOf(path));
    parent.stat.cversion++;
    parent.stat.numChildren = parent.children.size;
    parent.stat.pzxid = zxid;
    fire.push(() => {
      this.trigger(path, EventType.NodeDeleted, zxid);
      this.trigger(parentPath, EventType.NodeChildrenChanged, zxid);
    });
  }

  private checkSet(path: string, version: number): void {
    const n = this.node(path);
    if (version !== -1 && n.stat.version !== version) throw new Fail(ErrorCode.BADVERSION);
  }

  private set(path: string, data: Uint8Array | null, fire: Array<() => void>): Stat {
    this.checkSet(path, -1);
    const n = this.nodes.get(path)!;
    const zxid = this.zxid;
    n.data = data;
    n.stat.version++;
    n.stat.mzxid = zxid;
    n.stat.mtime = Math.floor(this.now());
    n.stat.dataLength = data?.length ?? 0;
    fire.push(() => this.trigger(path, EventType.NodeDataChanged, zxid));
    return { ...n.stat };
  }

  private newStat(zxid: bigint, owner: bigint): Stat {
    const t = Math.floor(this.now());
    return { czxid: zxid, mzxid: zxid, ctime: t, mtime: t, version: 0, cversion: 0, aversion: 0, ephemeralOwner: owner, dataLength: 0, numChildren: 0, pzxid: zxid };
  }

  /** WatchManager.triggerWatch: data table (with persistent and recursive), then child table, one event per connection. */
  private trigger(path: string, type: number, zxid: bigint): void {
    const hit = new Set<Conn>();
    const take = (t: Table, p: string, oneShot: boolean): void => {
      const s = t.get(p);
      if (!s) return;
      for (const c of s) hit.add(c);
      if (oneShot) t.delete(p);
    };
    if (type === EventType.NodeChildrenChanged) {
      take(this.childW, path, true);
      take(this.persW, path, false);
    } else {
      take(this.dataW, path, true);
      take(this.persW, path, false);
      for (let p = path; ; p = parentOf(p)) {
        take(this.recW, p, false);
        if (p === "/") break;
      }
      if (type === EventType.NodeDeleted) take(this.childW, path, true);
    }
    for (const c of hit) this.notify(c, type, path, zxid);
  }

  private setWatches(c: Conn, type: number, r: JuteReader): void {
    const sw = type === OpCode.setWatches2 ? Ops.setWatches2.readRequest(r) : { ...Ops.setWatches.readRequest(r), persistentWatches: [], persistentRecursiveWatches: [] };
    const rel = sw.relativeZxid;
    for (const p of sw.dataWatches) {
      const n = this.nodes.get(p);
      if (!n) this.notify(c, EventType.NodeDeleted, p, -1n);
      else if (n.stat.mzxid > rel) this.notify(c, EventType.NodeDataChanged, p, -1n);
      else this.watch(this.dataW, p, c);
    }
    for (const p of sw.existWatches) {
      if (this.nodes.has(p)) this.notify(c, EventType.NodeCreated, p, -1n);
      else this.watch(this.dataW, p, c);
    }
    for (const p of sw.childWatches) {
      const n = this.nodes.get(p);
      if (!n) this.notify(c, EventType.NodeDeleted, p, -1n);
      else if (n.stat.pzxid > rel) this.notify(c, EventType.NodeChildrenChanged, p, -1n);
      else this.watch(this.childW, p, c);
    }
    for (const p of sw.persistentWatches) this.watch(this.persW, p, c);
    for (const p of sw.persistentRecursiveWatches) this.watch(this.recW, p, c);
  }

  private multi(c: Conn, r: JuteReader): (w: JuteWriter) => void {
    const req = Ops.multi.readRequest(r);
    const snapshot = new Map([...this.nodes].map(([p, n]) => [p, { data: n.data, stat: { ...n.stat }, children: new Set(n.children) }]));
    const ephem = new Map([...this.sessions.values()].map((s) => [s, new Set(s.ephemerals)]));
    const zxid0 = this.zxid;
    this.zxid++;
    const fire: Array<() => void> = [];
    const results: MultiResult[] = [];
    let failed = -1;
    let code = 0;
    for (const [i, op] of req.ops.entries()) {
      try {
        switch (op.type) {
          case OpCode.create:
          case OpCode.create2:
          case OpCode.createContainer: {
            const path = this.create(c, op.type, op.request.path, op.request.data, op.request.flags, fire);
            results.push(op.type === OpCode.create ? { type: OpCode.create, path } : { type: OpCode.create2, path, stat: { ...this.nodes.get(path)!.stat } });
            break;
          }
          case OpCode.delete:
            this.del(op.request.path, op.request.version, fire);
            results.push({ type: OpCode.delete });
            break;
          case OpCode.check:
            this.checkSet(op.request.path, op.request.version);
            results.push({ type: OpCode.check });
            break;
          case OpCode.setData:
            this.checkSet(op.request.path, op.request.version);
            results.push({ type: OpCode.setData, stat: this.set(op.request.path, op.request.data, fire) });
            break;
          default:
            throw new Fail(ErrorCode.UNIMPLEMENTED);
        }
      } catch (e) {
        if (!(e instanceof Fail)) throw e;
        failed = i;
        code = e.code;
        break;
      }
    }
    if (failed >= 0) {
      this.nodes.clear();
      for (const [p, n] of snapshot) this.nodes.set(p, n);
      for (const [s, e] of ephem) s.ephemerals = e;
      this.zxid = zxid0;
      const errs: MultiResult[] = req.ops.map((_, i) => ({ type: OpCode.error, err: i < failed ? 0 : i === failed ? code : ErrorCode.RUNTIMEINCONSISTENCY }));
      return (w) => Ops.multi.writeResponse(w, { results: errs });
    }
    for (const f of fire) f();
    return (w) => Ops.multi.writeResponse(w, { results });
  }
}
