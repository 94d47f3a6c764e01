// An in-memory mirror of a subtree. Every change the server reports (one persistent recursive watch
// on 3.6+, or one-shot data and child watches re-armed per node on older servers) schedules a
// re-read of that node; a node has at most one read in flight (a change during it reads it again),
// and at most `maxInFlight` nodes are read at once. After a reconnect every cached node is re-read
// and compared by mzxid, so changes made meanwhile are reported once and unchanged nodes not at all.
// A recursive watch never reports NodeChildrenChanged, so a child's creation or deletion also
// schedules a Stat refresh of its parent (an exists, through the same queue): its numChildren,
// cversion and pzxid stay current, silently (see `refreshStat`).
import { TypedEventEmitter } from "../client/emitter.ts";
import type { SessionState, Stat, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { AddWatchMode, ErrorCode, EventType, WatcherType } from "../protocol/constants.ts";
import { RecipeStateError } from "./errors.ts";
import { afterConnectionLoss } from "./reconnects.ts";

/** A cached node: its data and Stat as last read. */
export interface CachedNode {
  /** The node's data. */
  data: Uint8Array | null;
  /** The node's Stat. */
  stat: Stat;
}

/** Options of a TreeCache. */
export interface TreeCacheOptions {
  /** Levels below the root to mirror (0 = the root only); all when omitted. */
  depth?: number;
  /** "auto" (default): a persistent recursive watch, one-shot watches where the server lacks them. */
  watchMode?: "auto" | "persistent" | "oneShot";
  /** Nodes read at once (each read is a getData and a getChildren); default 64. */
  maxInFlight?: number;
  /** Not supported (Curator's compressed data); present so that passing it is a type error. */
  dataIsCompressed?: never;
}

/** Events of a TreeCache. */
export interface TreeCacheEvents {
  /** The first full read of the subtree is done. */
  initialized: [];
  /** A node appeared in the cache. */
  added: [path: string, node: CachedNode];
  /** A cached node's data or Stat changed. */
  changed: [path: string, node: CachedNode];
  /** A node left the cache (its last state). */
  removed: [path: string, node: CachedNode];
  /** The session expired: the cache keeps its last contents until rebuild(newClient) is called. */
  expired: [];
  /** A read failed for a reason other than a lost link; the node is read again in 1 s. */
  error: [error: Error];
}

interface Entry extends CachedNode {
  kids: Set<string>;
}

type Phase = "latent" | "loading" | "ready" | "expired" | "closed";

/** What a scheduled read does: "full" (getData + getChildren, compared) or "stat" (an exists). */
type ReadKind = "full" | "stat";

const merge = (a: ReadKind | undefined, b: ReadKind): ReadKind => (a === "full" || b === "full" ? "full" : "stat");

/**
 * An in-memory mirror of a subtree, kept current by watches: a persistent recursive watch on 3.6+ servers,
 * one-shot watches on older ones. Errors are ZooKeeperErrors: BADARGUMENTS for bad arguments, and what the
 * client rejects with.
 */
export class TreeCache extends TypedEventEmitter<TreeCacheEvents> {
  /** The subtree's root path. */
  readonly path: string;
  private zk: ZooKeeper;
  private readonly depth: number;
  private readonly maxInFlight: number;
  private readonly watchMode: "auto" | "persistent" | "oneShot";
  private recursive = false;
  private phase: Phase = "latent";
  private readonly nodes = new Map<string, Entry>();
  private readonly queue: string[] = [];
  private readonly queued = new Map<string, ReadKind>(); // the pending read of each queued path
  private readonly running = new Set<string>();
  private readonly again = new Map<string, ReadKind>(); // paths to read again once their read is done
  private resyncNeeded = false;
  private onIdle: (() => void) | null = null;
  private settledWaiters: (() => void)[] = [];

  /** Prepares a cache; nothing is read before `start()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: TreeCacheOptions = {}) {
    super();
    const bad = (msg: string): ZooKeeperError => new ZooKeeperError(ErrorCode.BADARGUMENTS, msg, { op: "TreeCache", path: String(path) });
    if (typeof path !== "string" || !path.startsWith("/") || (path.length > 1 && path.endsWith("/"))) throw bad("the cache path must be an absolute znode path");
    const o = options ?? {};
    if (o.depth !== undefined && !(Number.isInteger(o.depth) && o.depth >= 0)) throw bad("depth must be an integer >= 0");
    if (o.maxInFlight !== undefined && !(Number.isInteger(o.maxInFlight) && o.maxInFlight >= 1)) throw bad("maxInFlight must be an integer >= 1");
    if (o.watchMode !== undefined && !["auto", "persistent", "oneShot"].includes(o.watchMode)) throw bad(`watchMode must be "auto", "persistent" or "oneShot"`);
    if (o.dataIsCompressed !== undefined) throw bad("compressed data is not supported");
    this.zk = zk;
    this.path = path;
    this.depth = o.depth ?? Infinity;
    this.maxInFlight = o.maxInFlight ?? 64;
    this.watchMode = o.watchMode ?? "auto";
  }

  /** "persistentRecursive" or "oneShot" once started. */
  get mode(): "persistentRecursive" | "oneShot" {
    return this.recursive ? "persistentRecursive" : "oneShot";
  }

  /** Nodes read right now (never more than maxInFlight). */
  get inFlight(): number {
    return this.running.size;
  }

  /** Resolves once no read is queued or in flight (e.g. after a sync of the cache's client: caught up). */
  settled(): Promise<void> {
    if (this.phase === "closed" || this.phase === "expired" || (this.running.size === 0 && this.queue.length === 0)) return Promise.resolve();
    return new Promise<void>((resolve) => this.settledWaiters.push(resolve));
  }

  /** Loads the snapshot; resolves (and emits "initialized") once every node is in the cache. */
  async start(): Promise<void> {
    if (this.phase !== "latent") throw new RecipeStateError(this.path, "start", "start() may be called once");
    this.phase = "loading";
    this.zk.on("state", this.onState);
    await this.load();
    if (this.phase !== "loading") return;
    this.phase = "ready";
    emitIsolated(this.zk, this, "TreeCache", "initialized");
  }

  /** After "expired": mirror the same subtree through a new client; the differences come as events. */
  async rebuild(zk: ZooKeeper): Promise<void> {
    if (this.phase !== "expired") throw new RecipeStateError(this.path, "rebuild", "rebuild() is for an expired cache");
    this.zk = zk;
    this.phase = "ready";
    zk.on("state", this.onState);
    await this.load();
  }

  /** The cached node at `path` (its data and stat), or undefined. */
  get(path: string): CachedNode | undefined {
    const e = this.nodes.get(path);
    return e ? { data: e.data, stat: e.stat } : undefined;
  }

  /** Names of the cached children of `path`, sorted; undefined when `path` is not cached. */
  children(path: string): string[] | undefined {
    const e = this.nodes.get(path);
    return e ? [...e.kids].sort() : undefined;
  }

  /** Every cached path, parents before children. */
  paths(): string[] {
    return [...this.nodes.keys()].sort();
  }

  /** Stops watching (the cached contents stay readable); never rejects. */
  async close(): Promise<void> {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.zk.off("state", this.onState);
    this.queue.length = 0;
    this.queued.clear();
    this.onIdle?.();
    this.onIdle = null;
    for (const w of this.settledWaiters.splice(0)) w();
    if (this.recursive) await this.zk.removeWatches(this.path, this.watcher, WatcherType.Any).catch(() => {});
  }

  /** `await using` support: the same as `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- loading ---

  private async load(): Promise<void> {
    await this.arm();
    const idle = new Promise<void>((resolve) => (this.onIdle = resolve));
    this.schedule(this.path);
    for (const p of this.nodes.keys()) this.schedule(p); // a rebuild re-reads everything
    await idle;
    if (this.phase === "expired") throw new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the session expired while the cache loaded; connect a new client and rebuild(newClient)", { op: "start", path: this.path });
  }

  /** The persistent recursive watch, when the server has it (3.6+) and we may use it. */
  private async arm(): Promise<void> {
    if (this.watchMode === "oneShot") return;
    for (;;) {
      try {
        await this.zk.addWatch(this.path, AddWatchMode.PERSISTENT_RECURSIVE, this.watcher);
        this.recursive = true;
        return;
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.UNIMPLEMENTED) && this.watchMode === "auto") {
          this.recursive = false; // a server before 3.6 (3.4 also closes the link: wait for the next)
          await afterConnectionLoss(this.zk);
          return;
        }
        if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
        await afterConnectionLoss(this.zk);
      }
    }
  }

  /** Queues a read of `path` (a full read takes the place of a Stat refresh queued for the same path). */
  private schedule(path: string, kind: ReadKind = "full"): void {
    if (this.phase === "closed" || this.phase === "expired") return;
    if (this.running.has(path)) {
      this.again.set(path, merge(this.again.get(path), kind));
      return;
    }
    const pending = this.queued.get(path);
    if (pending !== undefined) {
      this.queued.set(path, merge(pending, kind));
      return;
    }
    this.queued.set(path, kind);
    this.queue.push(path);
    this.pump();
  }

  private pump(): void {
    while (this.running.size < this.maxInFlight && this.queue.length > 0 && this.zk.state === "connected") {
      const path = this.queue.shift()!;
      const kind = this.queued.get(path) ?? "full";
      this.queued.delete(path);
      this.running.add(path);
      void (kind === "stat" ? this.refreshStat(path) : this.read(path)).then(
        () => this.finished(path, kind, false),
        (e) => this.finished(path, kind, this.failed(e)),
      );
    }
    if (this.running.size === 0 && this.queue.length === 0) {
      const idle = this.onIdle;
      this.onIdle = null;
      idle?.();
      for (const w of this.settledWaiters.splice(0)) w();
    }
  }

  private finished(path: string, kind: ReadKind, retry: boolean): void {
    this.running.delete(path);
    const again = this.again.get(path);
    this.again.delete(path);
    if (again !== undefined) this.schedule(path, retry ? merge(again, kind) : again);
    else if (retry) this.schedule(path, kind);
    this.pump();
  }

  /** True when the read should be redone (a lost link: after the reconnect; anything else: reported). */
  private failed(e: unknown): boolean {
    if (isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) return true; // pump() waits for "connected"
    if (isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)) return false;
    if (this.listenerCount("error") > 0) emitIsolated(this.zk, this, "TreeCache", "error", e instanceof Error ? e : new Error(String(e)));
    return true;
  }

  private levelOf(path: string): number {
    if (path === this.path) return 0;
    const rest = this.path === "/" ? path.slice(1) : path.slice(this.path.length + 1);
    return rest.split("/").length;
  }

  private within(path: string): boolean {
    if (path !== this.path && !path.startsWith(this.path === "/" ? "/" : `${this.path}/`)) return false;
    return this.levelOf(path) <= this.depth;
  }

  /** One node: its data and children, compared with the cache. */
  private async read(path: string): Promise<void> {
    const parent = path === this.path ? null : parentOf(path);
    if (parent !== null && !this.nodes.has(parent)) return this.schedule(parent); // found through the parent
    const watch = this.recursive ? undefined : this.watcher;
    const wantKids = this.levelOf(path) < this.depth;
    const [got, listing] = await Promise.all([
      this.zk.getData(path, watch).catch(noNode),
      wantKids ? this.zk.getChildrenWithStat(path, watch).catch(noNode) : Promise.resolve({ children: [] as string[], stat: null }),
    ]);
    if (this.phase === "closed" || this.phase === "expired") return;
    if (got === null || listing === null) {
      if (path === this.path && !this.recursive) await this.zk.exists(path, this.watcher); // its creation wakes us
      this.remove(path);
      return;
    }
    if (parent !== null && !this.nodes.has(parent)) return this.schedule(parent);
    const old = this.nodes.get(path);
    // The data fields of the Stat as getData read them, the child fields as the listing read them: a child made
    // between the two reads is in the listing (whose watch came after it), so its Stat must say so too.
    const kids = listing.children;
    const stat = listing.stat === null ? got.stat : { ...got.stat, numChildren: listing.stat.numChildren, cversion: listing.stat.cversion, pzxid: listing.stat.pzxid };
    const node: CachedNode = { data: got.data, stat };
    if (!old) {
      this.nodes.set(path, { ...node, kids: new Set() });
      if (parent !== null) this.nodes.get(parent)!.kids.add(path.slice(parent.length + (parent === "/" ? 0 : 1)));
      this.publish("added", path, node);
    } else {
      const changed = old.stat.mzxid !== got.stat.mzxid || old.stat.czxid !== got.stat.czxid;
      old.data = got.data;
      old.stat = stat;
      if (changed) this.publish("changed", path, node);
    }
    const entry = this.nodes.get(path)!;
    const listed = new Set(kids);
    for (const name of [...entry.kids]) if (!listed.has(name)) this.remove(join(path, name));
    for (const name of kids) if (!entry.kids.has(name)) this.schedule(join(path, name));
  }

  /**
   * A cached node's Stat after a child of it was created or deleted, which a recursive watch reports
   * only for the child. Only numChildren, cversion and pzxid can have moved, and they are updated
   * silently: "changed" means the node's own data changed (mzxid), as in one-shot mode, where a child
   * watch re-reads the parent, and as in Curator's TreeCache (NODE_UPDATED only when mzxid moves);
   * the child's creation or deletion is itself reported as "added" or "removed". If the node itself
   * changed (mzxid or czxid moved, or it is gone), a full read follows, which reports it.
   */
  private async refreshStat(path: string): Promise<void> {
    if (!this.nodes.has(path)) return; // not cached yet: its own read, still to come, gets a newer Stat
    const stat = await this.zk.exists(path);
    if (this.phase === "closed" || this.phase === "expired") return;
    const entry = this.nodes.get(path);
    if (!entry) return;
    if (stat === null || stat.czxid !== entry.stat.czxid || stat.mzxid !== entry.stat.mzxid) return this.schedule(path); // after this one
    entry.stat = stat;
  }

  /** Drops `path` and everything below it, deepest first. */
  private remove(path: string): void {
    const entry = this.nodes.get(path);
    if (!entry) return;
    for (const name of [...entry.kids]) this.remove(join(path, name));
    this.nodes.delete(path);
    const parent = path === this.path ? null : parentOf(path);
    if (parent !== null) this.nodes.get(parent)?.kids.delete(path.slice(parent.length + (parent === "/" ? 0 : 1)));
    this.publish("removed", path, { data: entry.data, stat: entry.stat });
  }

  private publish(kind: "added" | "changed" | "removed", path: string, node: CachedNode): void {
    if (this.phase !== "ready") return; // the snapshot is what start() resolves with
    emitIsolated(this.zk, this, "TreeCache", kind, path, node);
  }

  private readonly watcher: Watcher = (event: WatchedEvent) => {
    if (event.type === EventType.None || event.path === null) return;
    if (event.type === EventType.PersistentWatchRemoved || event.type === EventType.DataWatchRemoved || event.type === EventType.ChildWatchRemoved) return;
    if (this.within(event.path)) this.schedule(event.path);
    // A recursive watch sends no NodeChildrenChanged: the parent's numChildren, cversion and pzxid
    // moved too (also when the child is one level below `depth` and itself not cached).
    if (this.recursive && (event.type === EventType.NodeCreated || event.type === EventType.NodeDeleted) && event.path !== this.path) {
      const parent = parentOf(event.path);
      if (this.within(parent)) this.schedule(parent, "stat");
    }
  };

  private readonly onState = (state: SessionState): void => {
    if (this.phase === "closed" || this.phase === "expired") return;
    switch (state) {
      case "connected":
        if (this.resyncNeeded) {
          // Watches are back (the client re-registers them), but a recursive watch does not replay
          // what changed meanwhile: re-read every node and compare.
          for (const p of this.nodes.keys()) this.schedule(p);
          this.schedule(this.path);
          this.resyncNeeded = false;
        }
        this.pump();
        break;
      case "expired":
        this.phase = "expired";
        this.zk.off("state", this.onState);
        this.queue.length = 0;
        this.queued.clear();
        this.again.clear();
        this.onIdle?.();
        this.onIdle = null;
        for (const w of this.settledWaiters.splice(0)) w();
        emitIsolated(this.zk, this, "TreeCache", "expired");
        break;
      case "closed":
      case "authFailed":
        void this.close();
        break;
      default:
        this.resyncNeeded = true;
    }
  };
}

function noNode(e: unknown): null {
  if (isZooKeeperError(e, ErrorCode.NONODE)) return null;
  throw e;
}

function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i === 0 ? "/" : path.slice(0, i);
}

function join(parent: string, name: string): string {
  return parent === "/" ? `/${name}` : `${parent}/${name}`;
}
