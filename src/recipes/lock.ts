// A distributed mutex, wire-compatible with Apache Curator's InterProcessMutex (`naming: "curator"`)
// and kazoo's Lock (`naming: "kazoo"`): a protected ephemeral-sequential contender znode, order by
// sequence, each waiter watches only its predecessor, the holder must own the first znode
// (ephemeralOwner), and the lock counts as held only while nothing casts doubt on it.
import { EventEmitter } from "node:events";
import type { SessionState, TimerHandle, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { ErrorCode, EventType } from "../protocol/constants.ts";
import { ContenderQueue, createContender, forgetWatch, readParticipants, type Participant } from "./candidates.ts";
import { LockNotReentrantError, LockReleasedError, LockTimeoutError } from "./errors.ts";
import { lockNaming, type LockNaming, type Naming } from "./naming.ts";
import { Serial, TERMINAL, deleteNode } from "./support.ts";

/** Why a held lock was lost (the `"lost"` event). */
export type LockLostReason = "disconnected" | "expired" | "deleted" | "closed";

/** Options of a Lock. */
export interface LockOptions {
  /** Stored as the contender znode's data (UTF-8): kazoo's identifier; Curator readers see the bytes. */
  id?: string;
  /** Whose lock to speak (default "curator"). */
  naming?: LockNaming;
}

/** Events of a Lock. */
export interface LockEvents {
  /** The lock was held and no longer is (not emitted for release()). */
  lost: [reason: LockLostReason];
  /** Our predecessor watch fired (observability: the herd test counts these). */
  watch: [path: string];
}

/** One acquire() from create to release: its znode and how it ends. */
interface Attempt {
  node: string | null;
  held: boolean;
  over: boolean;
  resolve(): void;
  reject(e: unknown): void;
}

/**
 * A distributed mutex, wire-compatible with Curator's InterProcessMutex (`naming: "curator"`) and kazoo's Lock
 * (`naming: "kazoo"`). Errors are ZooKeeperErrors: BADARGUMENTS for bad arguments, LockNotReentrantError,
 * LockTimeoutError, LockReleasedError (recipes/errors.ts), and what the client rejects with. Servers 3.5.3+ (container parents).
 */
export class Lock extends EventEmitter<LockEvents> {
  /** The lock's znode path. */
  readonly path: string;
  /** The id stored in this contender's znode. */
  readonly id: string;
  /** The znode naming in use: "curator" or "kazoo". */
  readonly naming: LockNaming;
  private readonly zk: ZooKeeper;
  private readonly protocol: Naming;
  private readonly serial = new Serial();
  private attempt: Attempt | null = null;
  private predecessor: string | null = null;
  private ownWatched: string | null = null;
  private heldToken: bigint | undefined;
  private checkQueued = false;
  private relistQueued = false;
  private pruneQueued = false;
  private readonly queue: ContenderQueue; // the lower contenders we know (walk-down on handover)
  private queued: string | null = null; // the znode the queue was listed for

  /** Prepares a lock; nothing is sent before `acquire()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    super();
    if (typeof path !== "string" || !path.startsWith("/") || path.length < 2 || path.endsWith("/")) {
      throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "the lock path must be an absolute znode path", { op: "Lock", path: String(path) });
    }
    const o = options ?? {};
    if (o.id !== undefined && typeof o.id !== "string") throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "options.id must be a string", { op: "Lock", path });
    const naming = lockNaming(o.naming ?? "curator");
    if (!naming) throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `naming must be "curator" or "kazoo"`, { op: "Lock", path });
    this.zk = zk;
    this.path = path;
    this.id = o.id ?? "";
    this.naming = o.naming ?? "curator";
    this.protocol = naming;
    this.queue = new ContenderQueue(zk, path, naming);
  }

  /**
   * True only while we hold the lock and nothing casts doubt on it: the session is connected and a request
   * the server answered was sent within the read timeout (`zk.heardWithin`, 2/3 of the session timeout),
   * so a process resuming from a pause reads false before any timer or socket callback has run.
   */
  get isHeld(): boolean {
    if (!this.attempt?.held) return false;
    return this.zk.state === "connected" && this.zk.heardWithin(this.zk.readTimeout);
  }

  /** Fencing token while held: our lock znode's czxid (grows from holder to holder). */
  get token(): bigint | undefined {
    return this.isHeld ? this.heldToken : undefined;
  }

  /** Our contender znode, or null while we have none. */
  get nodePath(): string | null {
    return this.attempt?.node ?? null;
  }

  /** Every contender (any client speaking this naming) in order; the first holds the lock. */
  contenders(): Promise<Participant[]> {
    return readParticipants(this.zk, this.path, this.protocol);
  }

  /**
   * Resolves once the lock is held. Rejects on abort or timeout (after our znode is deleted, so
   * nothing is left behind), when the session ends, or with LockNotReentrantError while held or pending.
   * After "lost" it may be called at once: it queues behind the deletion of the lost znode.
   */
  acquire(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<void> {
    if (TERMINAL.has(this.zk.state)) return Promise.reject(new ZooKeeperError(ErrorCode.CONNECTIONLOSS, `the session is ${this.zk.state}`, { op: "acquire", path: this.path }));
    if (this.attempt && !this.attempt.over) return Promise.reject(new LockNotReentrantError(this.path));
    const { signal, timeout } = options ?? {};
    if (timeout !== undefined && (typeof timeout !== "number" || !(timeout >= 0))) {
      return Promise.reject(new ZooKeeperError(ErrorCode.BADARGUMENTS, "timeout must be a number of ms >= 0", { op: "acquire", path: this.path }));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const settle = (): void => {
        if (timer !== undefined) this.zk.clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const attempt: Attempt = {
        node: null,
        held: false,
        over: false,
        resolve: () => (settle(), resolve()),
        reject: (e) => (settle(), reject(e)),
      };
      const giveUp = (e: unknown): void => {
        if (attempt.over || attempt.held) return;
        attempt.over = true;
        settle();
        // Rejected once our znode is gone: a create still in flight is awaited (Serial) and undone.
        void this.serial.run(() => this.cleanUp(attempt)).then(() => reject(e), () => reject(e));
      };
      const onAbort = (): void => giveUp(signal!.reason);
      this.attempt = attempt; // a lost or released one still cleaning up goes first (Serial)
      this.zk.off("state", this.onState);
      this.zk.on("state", this.onState);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeout !== undefined) timer = this.zk.clock.setTimeout(() => giveUp(new LockTimeoutError(this.path, timeout)), timeout);
      void this.serial.run(async () => {
        if (attempt.over) return;
        attempt.node = await this.createNode(attempt);
        if (!attempt.over) await this.reconcile(attempt);
      }).catch((e) => this.onCheckError(attempt, e));
    });
  }

  /** Releases the lock (or gives up a pending acquire); resolves once our znode is gone. */
  async release(): Promise<void> {
    const attempt = this.attempt;
    if (!attempt) return this.serial.run(async () => {}); // nothing held; a loss's cleanup may be under way
    const pending = !attempt.held && !attempt.over;
    attempt.over = true;
    if (pending) attempt.reject(new LockReleasedError(this.path));
    await this.serial.run(() => this.cleanUp(attempt));
  }

  /** Acquires, runs `fn` with a signal that aborts when the lock is lost, then releases. */
  async run<T>(fn: (signal: AbortSignal) => Promise<T> | T, options: { signal?: AbortSignal; timeout?: number } = {}): Promise<T> {
    await this.acquire(options);
    const ac = new AbortController();
    const onLost = (reason: LockLostReason): void => ac.abort(new Error(`lock lost: ${reason}`, { cause: reason }));
    this.on("lost", onLost);
    try {
      if (!this.isHeld) ac.abort(new Error("lock lost: disconnected", { cause: "disconnected" }));
      return await fn(ac.signal);
    } finally {
      this.off("lost", onLost);
      await this.release();
    }
  }

  /** `await using` support: releases the lock if held. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  // --- the check: hold, or watch the predecessor ---

  /** Queues a check; `relist` lists the children again (a reconnect) instead of walking down. */
  private requestCheck(relist = false): void {
    const attempt = this.attempt;
    this.relistQueued ||= relist;
    if (this.checkQueued || !attempt || attempt.over) return;
    this.checkQueued = true;
    void this.serial.run(async () => {
      this.checkQueued = false;
      const again = this.relistQueued;
      this.relistQueued = false;
      if (attempt.over || this.attempt !== attempt) return;
      if (attempt.node === null) attempt.node = await this.createNode(attempt);
      await this.reconcile(attempt, again);
    }).catch((e) => this.onCheckError(attempt, e));
  }

  /** Holds (first, and ours) or watches the predecessor, walking down the lower contenders we know (ContenderQueue). */
  private async reconcile(attempt: Attempt, relist = true): Promise<void> {
    const prune = this.pruneQueued;
    this.pruneQueued = false;
    if (prune && !relist && attempt.node !== null) await this.queue.prune();
    for (let listings = 0; !attempt.over; ) {
      if (attempt.node === null) {
        attempt.node = await this.createNode(attempt);
        relist = true;
      }
      const ours = attempt.node;
      if (relist || this.queue.needsListing || this.queued !== ours) {
        if (++listings > 20) throw new ZooKeeperError(ErrorCode.SYSTEMERROR, "the contenders keep changing; retrying later", { op: "acquire", path: this.path });
        relist = false;
        this.queued = ours;
        const lower = await this.queue.list(ours);
        if (attempt.over || attempt.node !== ours) return;
        if (lower < 0) {
          if (attempt.held) return this.lose(attempt, "deleted");
          attempt.node = null; // deleted under a waiter: stand again
          continue;
        }
        if (lower > 0 && attempt.held) return this.lose(attempt, "deleted"); // a hand-made lower name appeared
      }
      const predecessor = this.queue.predecessor;
      if (predecessor === null) {
        if (!this.queue.first) continue; // the known ones ran out of a truncated listing: list again
        const stat = await this.zk.exists(ours, this.onOwn);
        if (attempt.over || attempt.node !== ours) return;
        if (stat === null) {
          if (attempt.held) return this.lose(attempt, "deleted");
          attempt.node = null;
          continue;
        }
        this.ownWatched = ours;
        if (stat.ephemeralOwner !== this.zk.sessionId) {
          // Named like ours but another session's: replace it.
          attempt.node = null;
          await deleteNode(this.zk, ours);
          continue;
        }
        if (this.zk.state !== "connected") return; // re-checked on "connected"
        this.predecessor = null;
        this.heldToken = stat.czxid;
        if (!attempt.held) {
          attempt.held = true;
          attempt.resolve();
        }
        return;
      }
      this.predecessor = predecessor;
      try {
        await this.zk.getData(predecessor, this.onPredecessor);
        return;
      } catch (e) {
        if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
        this.queue.gone(predecessor); // walk down past it, and past any other known one gone too
        if (attempt.over || attempt.node !== ours) return;
        await this.queue.prune();
      }
    }
  }

  /** Protected create: a create whose reply was lost is found by its prefix, never made twice. */
  private createNode(attempt: Attempt): Promise<string> {
    return createContender(this.zk, this.path, this.protocol, this.id, () => attempt.over);
  }

  /** Deletes the attempt's znode (in the Serial, so after any create in flight) and frees the instance. */
  private async cleanUp(attempt: Attempt): Promise<void> {
    const node = attempt.node;
    attempt.node = null;
    if (node) await deleteNode(this.zk, node).catch(() => {});
    if (this.attempt === attempt) {
      this.attempt = null;
      forgetWatch(this.zk, this.predecessor, this.onPredecessor);
      this.predecessor = null;
      this.ownWatched = null;
      this.heldToken = undefined;
      this.zk.off("state", this.onState);
    }
  }

  private lose(attempt: Attempt, reason: LockLostReason): void {
    if (attempt.over) return;
    const wasHeld = attempt.held;
    attempt.over = true;
    attempt.held = false;
    this.heldToken = undefined;
    void this.serial.run(() => this.cleanUp(attempt));
    if (wasHeld) this.emitSafely("lost", reason);
    else attempt.reject(new ZooKeeperError(reason === "expired" ? ErrorCode.SESSIONEXPIRED : ErrorCode.CONNECTIONLOSS, `the session is ${this.zk.state}`, { op: "acquire", path: this.path }));
  }

  private onCheckError(attempt: Attempt, e: unknown): void {
    if (attempt.over) return;
    // A lost link is re-checked on "connected"; an ended session ends the attempt via "state". The session
    // reads "disconnected" before a call fails with CONNECTIONLOSS, so one still reading "connected" is being
    // closed, and its "closed" is on the way.
    if (isZooKeeperError(e, ErrorCode.CONNECTIONLOSS) || isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)) return;
    if (attempt.held) return this.lose(attempt, "deleted");
    attempt.over = true;
    void this.serial.run(() => this.cleanUp(attempt)).then(() => attempt.reject(e));
  }

  private readonly onPredecessor: Watcher = (event: WatchedEvent) => {
    if (event.type === EventType.None || event.path === null || event.path !== this.predecessor) return;
    this.predecessor = null;
    if (event.type === EventType.NodeDeleted) {
      this.queue.gone(event.path);
      this.pruneQueued = true;
    }
    this.emitSafely("watch", event.path);
    this.requestCheck();
  };

  private readonly onOwn: Watcher = (event: WatchedEvent) => {
    if (event.type === EventType.None || event.path === null || event.path !== this.ownWatched) return;
    this.ownWatched = null;
    this.requestCheck(true);
  };

  private readonly onState = (state: SessionState): void => {
    const attempt = this.attempt;
    if (!attempt || attempt.over) return;
    switch (state) {
      case "connected":
        this.requestCheck(true);
        break;
      case "disconnected":
      case "connectedReadOnly":
      case "connecting":
        if (attempt.held) this.lose(attempt, "disconnected"); // the znode is deleted once we are back
        break;
      case "expired":
        this.lose(attempt, "expired");
        break;
      case "closed":
      case "authFailed":
        this.lose(attempt, "closed");
        break;
    }
  };

  /** A throwing listener must not break the lock's bookkeeping: it is reported by the client's policy (zk.reportListenerError). */
  private emitSafely<K extends keyof LockEvents>(event: K, ...args: LockEvents[K]): void {
    emitIsolated(this.zk, this, "Lock", event, ...args);
  }
}
