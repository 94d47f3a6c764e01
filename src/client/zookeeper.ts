// The public client (API.md "Connecting" and "Operations"): validates arguments, maps client paths
// to server paths, builds requests for the session and registers watches when replies arrive.
import { EventEmitter } from "node:events";
import { AddWatchMode, CreateMode, ErrorCode, EventType, OpCode, WatcherType } from "../protocol/constants.ts";
import { parseConnectString } from "../protocol/connect-string.ts";
import { ProtocolError } from "../protocol/errors.ts";
import { DEFAULT_MAX_BUFFER } from "../protocol/jute.ts";
import { Ops } from "../protocol/ops.ts";
import { addChroot, stripChroot } from "../protocol/path.ts";
import type { ACL, Stat } from "../protocol/records.ts";
import { Ids } from "./acl.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import { fourLetterWord } from "./four-letter.ts";
import { Op, decodeResults, encodeOp } from "./op.ts";
import { type Request, Session } from "./session.ts";
import { digestMd5 } from "./sasl/index.ts";
import { Transaction } from "./transaction.ts";
import { dialSocket, type Dialer } from "./transport.ts";
import type { Clock } from "./clock.ts";
import type { ConnectOptions, CreateOptions, Data, Logger, OpResult, SessionState, WatchedEvent, Watcher } from "./types.ts";
import { checkAcl, checkCreateMode, checkPath, checkVersion, checkWatcher, toBytes } from "./validate.ts";
import { watchIterator } from "./watch-iterator.ts";
import { removeWatchers } from "./watch-removal.ts";
import { type WatchKind, WatchRegistry } from "./watches.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export interface ZooKeeperEvents {
  state: [state: SessionState];
}

export interface InternalOptions extends ConnectOptions {
  /** Test seam: how links are dialled (default: node:net / node:tls). */
  dialer?: Dialer;
  /** Test seam: the session's timers and "now" (default: the runtime's timers and performance.now()). */
  clock?: Clock;
}

export class ZooKeeper extends EventEmitter<ZooKeeperEvents> {
  private readonly session: Session;
  private readonly watches = new WatchRegistry();
  private readonly chroot: string;
  private readonly log: Logger;

  private constructor(connectString: string, options: InternalOptions) {
    super();
    let parsed;
    try {
      parsed = parseConnectString(connectString);
    } catch (e) {
      throw badArguments(e instanceof ProtocolError ? e.message : String(e), "connect");
    }
    this.chroot = parsed.chroot;
    this.log = options.logger ?? silent;
    const num = (name: keyof ConnectOptions, dflt: number): number => {
      const v = options[name] ?? dflt;
      if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw badArguments(`${name} must be a positive number`, "connect");
      return v;
    };
    this.session = new Session({
      hosts: parsed.hosts,
      sessionTimeout: Math.round(num("sessionTimeout", 30_000)),
      connectTimeout: num("connectTimeout", 30_000),
      readOnly: options.readOnly === true,
      tls: options.tls,
      sasl: options.sasl ? saslFactory(options.sasl) : undefined,
      sessionId: options.sessionId,
      sessionPassword: options.sessionPassword,
      maxBufferSize: num("maxBufferSize", DEFAULT_MAX_BUFFER),
      clientSideExpiry: options.clientSideExpiry !== false,
      logger: this.log,
      dialer: options.dialer ?? dialSocket,
      clock: options.clock,
      watches: this.watches,
      onState: (state) => this.emitSafely(state),
      onWatchEvent: (ev, watchers) => this.deliver(watchers, { type: ev.type, state: ev.state, path: stripChroot(this.chroot, ev.path) }),
      onSessionEvent: (state) => this.deliver(this.watches.all(), { type: EventType.None, state, path: null }),
      fourLetter: (host, cmd) => fourLetterWord(host, cmd, 2000, options.tls),
    });
  }

  /** Connects and resolves once a session is established. */
  static async connect(connectString: string, options: ConnectOptions = {}): Promise<ZooKeeper> {
    if (options === null || typeof options !== "object") throw badArguments("options must be an object", "connect");
    if (options.sessionId !== undefined && typeof options.sessionId !== "bigint") throw badArguments("sessionId must be a bigint", "connect");
    if (options.sessionPassword !== undefined && !(options.sessionPassword instanceof Uint8Array)) {
      throw badArguments("sessionPassword must be a Uint8Array", "connect");
    }
    if (options.sessionId !== undefined && options.sessionId !== 0n && options.sessionPassword === undefined) {
      throw badArguments("resuming a session needs its sessionPassword", "connect");
    }
    for (const k of ["readOnly", "clientSideExpiry"] as const) {
      if (options[k] !== undefined && typeof options[k] !== "boolean") throw badArguments(`${k} must be a boolean`, "connect");
    }
    if (options.auth !== undefined && !Array.isArray(options.auth)) throw badArguments("auth must be an array", "connect");
    for (const a of options.auth ?? []) {
      if (!a || typeof a.scheme !== "string") throw badArguments("auth entries need a scheme and auth", "connect");
    }
    const zk = new ZooKeeper(connectString, options);
    const auths = (options.auth ?? []).map((a) => zk.session.addAuth(a.scheme, toBytes("connect", "/", a.auth) ?? new Uint8Array(0)));
    // Stored credentials go out on the first connection's priming; their outcome is the session's.
    for (const p of auths) p.catch(() => {});
    await zk.session.start();
    return zk;
  }

  get state(): SessionState {
    return this.session.state;
  }
  get sessionId(): bigint {
    return this.session.sessionId;
  }
  get sessionPassword(): Uint8Array {
    return this.session.password;
  }
  get negotiatedTimeout(): number {
    return this.session.negotiatedTimeout;
  }
  /** performance.now() time of the last bytes received from the server (for "is my link in doubt" checks). */
  get lastHeardAt(): number {
    return this.session.lastHeardAt;
  }
  /** Read timeout of the link: 2/3 of the negotiated session timeout (ms); silence past it drops the link. */
  get readTimeout(): number {
    return (this.session.negotiatedTimeout * 2) / 3;
  }
  /** "host:port" of the server this client is connected to, or null while not connected. */
  get remoteAddress(): string | null {
    return this.session.remote;
  }
  /** The highest zxid seen in a reply. */
  get lastZxid(): bigint {
    return this.session.lastZxid;
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- plumbing ---

  private emitSafely(state: SessionState): void {
    try {
      this.emit("state", state);
    } catch (e) {
      this.log.error(`zookeeper: a "state" listener threw: ${(e as Error).message}`);
    }
  }

  /** Watchers run after the current reply's callbacks, each isolated from the others' exceptions. */
  private deliver(watchers: Iterable<Watcher>, event: WatchedEvent): void {
    const list = [...watchers];
    if (list.length === 0) return;
    queueMicrotask(() => {
      for (const w of list) {
        try {
          w(event);
        } catch (e) {
          this.log.error(`zookeeper: a watcher threw: ${(e as Error).message}`);
        }
      }
    });
  }

  private server(path: string): string {
    return addChroot(this.chroot, path);
  }

  private client(path: string): string {
    return stripChroot(this.chroot, path);
  }

  private request<T>(req: Request<T>): Promise<T> {
    return this.session.submit(req);
  }

  private watchOnReply(path: string, watcher: Watcher | undefined, onOk: WatchKind, onNoNode?: WatchKind): ((err: number) => void) | undefined {
    if (!watcher) return undefined;
    const serverPath = this.server(path);
    return (err) => {
      if (err === ErrorCode.OK) this.watches.add(onOk, serverPath, watcher);
      else if (err === ErrorCode.NONODE && onNoNode) this.watches.add(onNoNode, serverPath, watcher);
    };
  }

  // --- operations ---

  async create(path: string, data?: Data, options: CreateOptions = {}): Promise<string> {
    return (await this.doCreate("create", path, data, options, false)).path;
  }

  createWithStat(path: string, data?: Data, options: CreateOptions = {}): Promise<{ path: string; stat: Stat }> {
    return this.doCreate("createWithStat", path, data, options, true) as Promise<{ path: string; stat: Stat }>;
  }

  private async doCreate(op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: boolean): Promise<{ path: string; stat?: Stat }> {
    const o = options ?? {};
    const { mode, ttl, sequential } = checkCreateMode(op, path, o.mode, o.ttl);
    checkPath(op, path, sequential);
    const body = { path: this.server(path), data: toBytes(op, path, data), acl: checkAcl(op, path, o.acl ?? Ids.OPEN_ACL_UNSAFE), flags: mode };
    if (ttl !== undefined) {
      const r = await this.request({ opcode: OpCode.createTTL, op, path, write: (w) => Ops.createTTL.writeRequest(w, { ...body, ttl: BigInt(ttl) }), decode: Ops.createTTL.readResponse });
      return { path: this.client(r.path), stat: r.stat };
    }
    if (mode === CreateMode.CONTAINER || withStat) {
      const spec = mode === CreateMode.CONTAINER ? Ops.createContainer : Ops.create2;
      const r = await this.request({ opcode: spec.code, op, path, write: (w) => spec.writeRequest(w, body), decode: spec.readResponse });
      return { path: this.client(r.path), stat: r.stat };
    }
    const created = await this.request({ opcode: OpCode.create, op, path, write: (w) => Ops.create.writeRequest(w, body), decode: Ops.create.readResponse });
    return { path: this.client(created) };
  }

  async delete(path: string, version?: number): Promise<void> {
    checkPath("delete", path);
    const v = checkVersion("delete", path, version);
    await this.request<void>({ opcode: OpCode.delete, op: "delete", path, write: (w) => Ops.delete.writeRequest(w, { path: this.server(path), version: v }) });
  }

  async exists(path: string, watcher?: Watcher): Promise<Stat | null> {
    checkPath("exists", path);
    const w = checkWatcher("exists", path, watcher);
    try {
      return await this.request({
        opcode: OpCode.exists,
        op: "exists",
        path,
        write: (x) => Ops.exists.writeRequest(x, { path: this.server(path), watch: w !== undefined }),
        decode: Ops.exists.readResponse,
        // A missing node still leaves a server-side watch: it fires NodeCreated.
        onReply: this.watchOnReply(path, w, "data", "exist"),
      });
    } catch (e) {
      if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) return null;
      throw e;
    }
  }

  getData(path: string, watcher?: Watcher): Promise<{ data: Uint8Array | null; stat: Stat }> {
    return this.guard(() => {
      checkPath("getData", path);
      const w = checkWatcher("getData", path, watcher);
      return this.request({
        opcode: OpCode.getData,
        op: "getData",
        path,
        write: (x) => Ops.getData.writeRequest(x, { path: this.server(path), watch: w !== undefined }),
        decode: Ops.getData.readResponse,
        onReply: this.watchOnReply(path, w, "data"),
      });
    });
  }

  setData(path: string, data: Data, version?: number): Promise<Stat> {
    return this.guard(() => {
      checkPath("setData", path);
      const bytes = toBytes("setData", path, data);
      const v = checkVersion("setData", path, version);
      return this.request({
        opcode: OpCode.setData,
        op: "setData",
        path,
        write: (w) => Ops.setData.writeRequest(w, { path: this.server(path), data: bytes, version: v }),
        decode: Ops.setData.readResponse,
      });
    });
  }

  async getChildren(path: string, watcher?: Watcher): Promise<string[]> {
    checkPath("getChildren", path);
    const w = checkWatcher("getChildren", path, watcher);
    return this.request({
      opcode: OpCode.getChildren,
      op: "getChildren",
      path,
      write: (x) => Ops.getChildren.writeRequest(x, { path: this.server(path), watch: w !== undefined }),
      decode: Ops.getChildren.readResponse,
      onReply: this.watchOnReply(path, w, "child"),
    });
  }

  async getChildrenWithStat(path: string, watcher?: Watcher): Promise<{ children: string[]; stat: Stat }> {
    checkPath("getChildrenWithStat", path);
    const w = checkWatcher("getChildrenWithStat", path, watcher);
    return this.request({
      opcode: OpCode.getChildren2,
      op: "getChildrenWithStat",
      path,
      write: (x) => Ops.getChildren2.writeRequest(x, { path: this.server(path), watch: w !== undefined }),
      decode: Ops.getChildren2.readResponse,
      onReply: this.watchOnReply(path, w, "child"),
    });
  }

  async getACL(path: string): Promise<{ acl: ACL[]; stat: Stat }> {
    checkPath("getACL", path);
    return this.request({ opcode: OpCode.getACL, op: "getACL", path, write: (w) => Ops.getACL.writeRequest(w, { path: this.server(path) }), decode: Ops.getACL.readResponse });
  }

  async setACL(path: string, acl: ACL[], version?: number): Promise<Stat> {
    checkPath("setACL", path);
    const list = checkAcl("setACL", path, acl);
    const v = checkVersion("setACL", path, version);
    return this.request({
      opcode: OpCode.setACL,
      op: "setACL",
      path,
      write: (w) => Ops.setACL.writeRequest(w, { path: this.server(path), acl: list, version: v }),
      decode: Ops.setACL.readResponse,
    });
  }

  async sync(path: string): Promise<void> {
    checkPath("sync", path);
    await this.request({ opcode: OpCode.sync, op: "sync", path, write: (w) => Ops.sync.writeRequest(w, { path: this.server(path) }), decode: Ops.sync.readResponse });
  }

  async multi(ops: readonly Op[]): Promise<OpResult[]> {
    if (!Array.isArray(ops)) throw badArguments("multi takes an array of ops", "multi");
    const encoded = ops.map((op) => encodeOp(op, this.chroot));
    if (encoded.length === 0) return [];
    const res = await this.request({ opcode: OpCode.multi, op: "multi", write: (w) => Ops.multi.writeRequest(w, { ops: encoded }), decode: Ops.multi.readResponse });
    return decodeResults(res.results, this.chroot, ops);
  }

  transaction(): Transaction {
    return new Transaction((ops) => this.multi(ops));
  }

  async addWatch(path: string, mode: number, watcher: Watcher): Promise<void> {
    checkPath("addWatch", path);
    const w = checkWatcher("addWatch", path, watcher, true)!;
    if (mode !== AddWatchMode.PERSISTENT && mode !== AddWatchMode.PERSISTENT_RECURSIVE) throw badArguments(`mode must be an AddWatchMode, got ${String(mode)}`, "addWatch", path);
    const serverPath = this.server(path);
    await this.request({
      opcode: OpCode.addWatch,
      op: "addWatch",
      path,
      write: (x) => Ops.addWatch.writeRequest(x, { path: serverPath, mode }),
      decode: Ops.addWatch.readResponse,
      onReply: (err) => {
        if (err === ErrorCode.OK) this.watches.add(mode === AddWatchMode.PERSISTENT ? "persistent" : "persistentRecursive", serverPath, w);
      },
    });
  }

  /** Removes one watcher. The server's watch goes only when no other local watcher still needs it. */
  async removeWatches(path: string, watcher: Watcher, type: number): Promise<void> {
    checkPath("removeWatches", path);
    checkWatcher("removeWatches", path, watcher, true);
    await this.removeLocal("removeWatches", path, type, watcher);
  }

  async removeAllWatches(path: string, type: number): Promise<void> {
    checkPath("removeAllWatches", path);
    await this.removeLocal("removeAllWatches", path, type, undefined);
  }

  private removeLocal(op: string, path: string, type: number, watcher: Watcher | undefined): Promise<void> {
    const ctx = { watches: this.watches, deliver: (ws: Iterable<Watcher>, e: WatchedEvent) => this.deliver(ws, e), request: (r: Request<void>) => this.request(r) };
    return removeWatchers(ctx, op, path, this.server(path), type, watcher);
  }

  /** A persistent watch as an async iterator, removed when the loop ends or `signal` aborts. */
  watch(path: string, options: { recursive?: boolean; signal?: AbortSignal } = {}): AsyncIterable<WatchedEvent> {
    checkPath("watch", path);
    const mode = options.recursive ? AddWatchMode.PERSISTENT_RECURSIVE : AddWatchMode.PERSISTENT;
    return watchIterator({
      signal: options.signal,
      add: (w) => this.addWatch(path, mode, w),
      remove: (w) => this.removeWatches(path, w, WatcherType.Any).catch(() => {}),
    });
  }

  async getEphemerals(prefixPath = "/"): Promise<string[]> {
    if (typeof prefixPath !== "string" || !prefixPath.startsWith("/")) throw badArguments("prefixPath must be a string starting with /", "getEphemerals", String(prefixPath));
    // The server matches a plain string prefix; inside a chroot, "/" means the chroot's subtree.
    const prefix = this.chroot ? (prefixPath === "/" ? `${this.chroot}/` : this.chroot + prefixPath) : prefixPath;
    const paths = await this.request({ opcode: OpCode.getEphemerals, op: "getEphemerals", path: prefixPath, write: (w) => Ops.getEphemerals.writeRequest(w, { prefixPath: prefix }), decode: Ops.getEphemerals.readResponse });
    return paths.map((p) => this.client(p));
  }

  async getAllChildrenNumber(path: string): Promise<number> {
    checkPath("getAllChildrenNumber", path);
    return this.request({
      opcode: OpCode.getAllChildrenNumber,
      op: "getAllChildrenNumber",
      path,
      write: (w) => Ops.getAllChildrenNumber.writeRequest(w, { path: this.server(path) }),
      decode: Ops.getAllChildrenNumber.readResponse,
    });
  }

  async whoAmI(): Promise<{ scheme: string; id: string }[]> {
    const infos = await this.request({ opcode: OpCode.whoAmI, op: "whoAmI", decode: Ops.whoAmI.readResponse });
    return infos.map((c) => ({ scheme: c.authScheme, id: c.user }));
  }

  async addAuthInfo(scheme: string, auth: Uint8Array | string): Promise<void> {
    if (typeof scheme !== "string" || scheme === "") throw badArguments("scheme must be a non-empty string", "addAuthInfo");
    const bytes = toBytes("addAuthInfo", "/", auth);
    if (bytes === null) throw badArguments("auth must be a Uint8Array or a string", "addAuthInfo");
    await this.session.addAuth(scheme, bytes);
  }

  /** Runs a synchronous validation and the request, turning thrown errors into rejections. */
  private guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return fn();
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

function saslFactory(o: NonNullable<ConnectOptions["sasl"]>): () => ReturnType<typeof digestMd5> {
  if (o.mechanism !== "DIGEST-MD5") throw badArguments(`unsupported SASL mechanism ${JSON.stringify(o.mechanism)} (DIGEST-MD5 is supported)`, "connect");
  if (typeof o.username !== "string" || typeof o.password !== "string") throw badArguments("sasl needs a username and a password", "connect");
  return () => digestMd5({ username: o.username, password: o.password, protocol: "zookeeper", serverName: o.serverName ?? "zk-sasl-md5" });
}

export { Op };
