// A distributed mutex, wire-compatible with Apache Curator's InterProcessMutex (`naming: "curator"`)
// and kazoo's Lock (`naming: "kazoo"`): a protected ephemeral-sequential contender znode, order by
// sequence, each waiter watches only its predecessor, the holder must own the first znode
// (ephemeralOwner), and the lock counts as held only while nothing casts doubt on it.
import { TypedEventEmitter } from "../client/emitter.ts";
import type { Stat, TimerHandle, Transaction, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { readParticipants, type Participant } from "./contender-queue.ts";
import { Contender, guardedTransaction, type ContenderEvents } from "./contender.ts";
import { LockNotHeldError, LockNotReentrantError, LockReleasedError, LockTimeoutError } from "./errors.ts";
import { lockNaming, type LockNaming, type Naming } from "./naming.ts";
import { Lease, runHeld } from "./lease.ts";
import { checkRecipePath } from "./options.ts";
import { TERMINAL, endedSession } from "./reconnects.ts";
import { publishRecipe } from "./reporting.ts";
import { Serial } from "./serial.ts";

/** Why a held lock was lost (the `"lost"` event). */
export type LockLostReason = "disconnected" | "expired" | "deleted" | "closed";

/** Options of a Lock. */
export interface LockOptions {
  /** Stored as the contender znode's data (UTF-8): kazoo's identifier; Curator readers see the bytes. */
  id?: string;
  /** Whose lock to speak (default "curator"). */
  naming?: LockNaming;
}

/**
 * How a ReadWriteLock's side differs from a plain Lock (internal: not exported by the package): its names, which
 * lower contenders it waits for, and a refusal checked before each acquire (a read -> write upgrade).
 */
export interface LockSide {
  naming: Naming;
  waitsFor?: (name: string) => boolean;
  refuse?: () => Error | null;
}
/** The LockOptions key of a LockSide. */
export const LOCK_SIDE: unique symbol = Symbol("zookeeper-ts lock side");

/** Events of a Lock. */
export interface LockEvents {
  /** The lock was held and no longer is (not emitted for release()). */
  lost: [reason: LockLostReason];
  /** Our predecessor watch fired (observability: the herd test counts these). */
  watch: [path: string];
}

/** One acquire() from create to release: its contender, and whether it holds the lock. */
interface Attempt {
  readonly contender: Contender;
  held: boolean;
  resolve(): void;
  reject(e: unknown): void;
}

/**
 * A distributed mutex, wire-compatible with Curator's InterProcessMutex (`naming: "curator"`) and kazoo's Lock
 * (`naming: "kazoo"`). Errors are ZooKeeperErrors: BADARGUMENTS for bad arguments, LockNotReentrantError,
 * LockTimeoutError, LockReleasedError (recipes/errors.ts), and what the client rejects with. Servers 3.5.3+ (container parents).
 */
export class Lock extends TypedEventEmitter<LockEvents> {
  /** The lock's znode path. */
  readonly path: string;
  /** The id stored in this contender's znode. */
  readonly id: string;
  /** The znode naming in use: "curator" or "kazoo". */
  readonly naming: LockNaming;
  private readonly zk: ZooKeeper;
  private readonly protocol: Naming;
  private readonly side: LockSide | undefined;
  private readonly serial = new Serial(); // shared by the attempts: an acquire queues behind the last cleanup
  private readonly lease: Lease;
  private attempt: Attempt | null = null;
  private term: { token: bigint; version: number } | undefined; // while held: our znode's czxid and version

  /** Prepares a lock; nothing is sent before `acquire()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: LockOptions = {}) {
    super();
    checkRecipePath(path, "lock", "Lock");
    const o = options ?? {};
    if (o.id !== undefined && typeof o.id !== "string") throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "options.id must be a string", { op: "Lock", path });
    const naming = lockNaming(o.naming ?? "curator");
    if (!naming) throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `naming must be "curator" or "kazoo"`, { op: "Lock", path });
    this.zk = zk;
    this.path = path;
    this.id = o.id ?? "";
    this.naming = o.naming ?? "curator";
    this.side = (o as { [LOCK_SIDE]?: LockSide })[LOCK_SIDE];
    this.protocol = this.side?.naming ?? naming;
    this.lease = new Lease(zk, "disconnected");
  }

  /**
   * True only while we hold the lock and nothing casts doubt on it: the session is connected and a request
   * the server answered was sent within the read timeout (`zk.heardWithin`, 2/3 of the session timeout),
   * so a process resuming from a pause reads false before any timer or socket callback has run.
   */
  get isHeld(): boolean {
    return this.attempt?.held === true && this.lease.valid;
  }

  /** Fencing token while held: our lock znode's czxid (grows from holder to holder). */
  get token(): bigint | undefined {
    return this.isHeld ? this.term?.token : undefined;
  }

  /** Our contender znode, or null while we have none. */
  get nodePath(): string | null {
    return this.attempt?.contender.node ?? null;
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
    if (TERMINAL.has(this.zk.state)) return Promise.reject(endedSession(this.zk.state, "acquire", this.path));
    if (this.attempt && !this.attempt.contender.gone) return Promise.reject(new LockNotReentrantError(this.path));
    const refused = this.side?.refuse?.();
    if (refused) return Promise.reject(refused);
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
      const contender = new Contender(this.zk, this.path, this.protocol, this.id, this.policy(() => attempt), { serial: this.serial, op: "acquire", noun: "contenders", waitsFor: this.side?.waitsFor });
      const attempt: Attempt = {
        contender,
        held: false,
        resolve: () => (settle(), resolve()),
        reject: (e) => (settle(), reject(e)),
      };
      // Rejected once our znode is gone: a create still in flight is awaited (Serial) and undone.
      const giveUp = (e: unknown): void => {
        if (contender.gone || attempt.held) return;
        settle();
        void this.end(attempt).then(() => reject(e));
      };
      const onAbort = (): void => giveUp(signal!.reason);
      this.attempt = attempt; // a lost or released one still cleaning up goes first (Serial)
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeout !== undefined) timer = this.zk.clock.setTimeout(() => giveUp(new LockTimeoutError(this.path, timeout)), timeout);
      void contender.stand().catch((e) => contender.fail(e)); // a failed create ends the attempt as a failed check does
    });
  }

  /**
   * A Transaction that commits only while the lock is held (fencing, as `LeaderElection.transaction()`): commit()
   * rejects with LockNotHeldError (NOAUTH) before sending anything when `isHeld` is false; otherwise the ops go in
   * one multi with a check of our lock znode, so the server rejects them atomically (NONODE or BADVERSION) once
   * that znode is gone (a delete behind our back, the session expired). The results are those of our ops.
   */
  transaction(): Transaction {
    return guardedTransaction(this.zk, () => this.attempt?.contender ?? null, () => (this.isHeld ? (this.term ?? null) : null), () => new LockNotHeldError(this.path));
  }

  /** Releases the lock (or gives up a pending acquire); resolves once our znode is gone. */
  async release(): Promise<void> {
    const attempt = this.attempt;
    if (!attempt) return this.serial.run(async () => {}); // nothing held; a loss's cleanup may be under way
    const pending = !attempt.held && !attempt.contender.gone;
    if (attempt.held) publishRecipe("lock", () => ({ path: this.path, id: this.id, event: "released" }));
    const ended = this.end(attempt);
    if (pending) attempt.reject(new LockReleasedError(this.path));
    await ended;
  }

  /** Acquires, runs `fn` with a signal that aborts when the lock is lost, then releases. */
  async run<T>(fn: (signal: AbortSignal) => Promise<T> | T, options: { signal?: AbortSignal; timeout?: number } = {}): Promise<T> {
    await this.acquire(options);
    try {
      return await runHeld(fn, "lock lost", () => this.isHeld, (lost) => (this.on("lost", lost), () => this.off("lost", lost)));
    } finally {
      await this.release();
    }
  }

  /** `await using` support: releases the lock if held. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  // --- the policy: held while first and connected; lost at the first doubt ---

  /** What the attempt's contender says, and what it means to the lock (`attempt` is read when it speaks). */
  private policy(attempt: () => Attempt): ContenderEvents {
    return {
      first: (stat) => this.hold(attempt(), stat),
      behind: () => this.loseHeld(attempt(), "deleted"), // a hand-made lower name appeared
      suspended: () => this.loseHeld(attempt(), "disconnected"), // the znode is deleted once we are back
      lost: (reason) => (reason === "deleted" ? this.loseHeld(attempt(), reason) : this.lose(attempt(), reason)), // a waiter stands again
      watched: (path, own) => (own ? undefined : this.emitSafely("watch", path)),
      failed: (e) => this.fail(attempt(), e),
    };
  }

  private hold(attempt: Attempt, stat: Stat): void {
    if (this.zk.state !== "connected") return; // re-checked on "connected"
    this.term = { token: stat.czxid, version: stat.version };
    if (attempt.held) return;
    attempt.held = true;
    publishRecipe("lock", () => ({ path: this.path, id: this.id, event: "acquired", token: stat.czxid.toString() }));
    attempt.resolve();
  }

  private fail(attempt: Attempt, e: unknown): void {
    if (attempt.held) return this.lose(attempt, "deleted");
    void this.end(attempt).then(() => attempt.reject(e));
  }

  private loseHeld(attempt: Attempt, reason: LockLostReason): void {
    if (attempt.held) this.lose(attempt, reason);
  }

  private lose(attempt: Attempt, reason: LockLostReason): void {
    if (attempt.contender.gone) return;
    const wasHeld = attempt.held;
    attempt.held = false;
    this.term = undefined;
    void this.end(attempt);
    if (wasHeld) {
      publishRecipe("lock", () => ({ path: this.path, id: this.id, event: "lost", reason }));
      this.emitSafely("lost", reason);
    }
    else if (reason === "expired" || reason === "closed") attempt.reject(endedSession(reason === "expired" ? "expired" : TERMINAL.has(this.zk.state) ? this.zk.state : "closed", "acquire", this.path)); // "closing": state reads on
    else attempt.reject(new ZooKeeperError(ErrorCode.CONNECTIONLOSS, `the session is ${this.zk.state}`, { op: "acquire", path: this.path }));
  }

  /** Ends the attempt: our znode is deleted (in the Serial, so after any create in flight), then the instance is free. */
  private async end(attempt: Attempt): Promise<void> {
    await attempt.contender.leave();
    if (this.attempt !== attempt) return;
    this.attempt = null;
    this.term = undefined;
  }

  /** A throwing listener must not break the lock's bookkeeping: it is reported by the client's policy (zk.reportListenerError). */
  private emitSafely<K extends keyof LockEvents>(event: K, ...args: LockEvents[K]): void {
    emitIsolated(this.zk, this, "Lock", event, ...args);
  }
}
