// kazoo's SetPartitioner on its layout: a party of members (`path/party/<uuid hex>-<id>`, an ephemeral holding the
// id: kazoo's ShallowParty, here a GroupMember) splits a set of items; each member takes every n-th item of the
// sorted set from its place among the sorted ids, and holds each item by a kazoo Lock on `path/locks/<item>`
// (a Lock with `naming: "kazoo"`). Allocation starts once the party has been stable for `settle` ms; a lock not
// acquired within `reaction` ms is tried again unless the party changed meanwhile (then everything acquired is
// released and allocation starts over), so two members never hold an item at once: the one giving it up
// releases its lock before the one taking it over can acquire it.
import { randomUUID } from "node:crypto";
import { TypedEventEmitter } from "../client/emitter.ts";
import type { SessionState, TimerHandle, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { GroupMember, type Member } from "./group-member.ts";
import { Lock, type LockLostReason } from "./lock.ts";
import { LockTimeoutError, RecipeStateError } from "./errors.ts";
import { checkRecipePath } from "./options.ts";
import { TERMINAL, endedSession, untilConnected } from "./reconnects.ts";
import { reportError } from "./reporting.ts";
import { Waiters } from "./serial.ts";

/**
 * Where a SetPartitioner stands (kazoo's PartitionState): "allocating" (waiting for a stable party, then taking its
 * items' locks), "acquired" (`partition` is ours), "release" (the party changed or a lock is in doubt: stop using
 * the items and call `release()`), "failure" (the session ended, a lock could not be taken, or `finish()`: make a new one).
 */
export type PartitionState = "allocating" | "acquired" | "release" | "failure";

/** Options of a SetPartitioner. */
export interface SetPartitionerOptions {
  /** The items to split (znode names: non-empty, no "/"); duplicates count once. */
  set: readonly string[];
  /** This member's identifier (kazoo's `identifier`): its place in the sorted ids decides its items. Ids should be unique. */
  id: string;
  /** How long the party must be unchanged before items are allocated, ms (kazoo's `time_boundary`; default 1000). */
  settle?: number;
  /** How long each try at an item's lock waits before the party is checked for a change, ms (kazoo's `max_reaction_time`; default 1000). */
  reaction?: number;
}

/** Events of a SetPartitioner. */
export interface SetPartitionerEvents {
  /** The state changed (`partition` is set when it is "acquired"). */
  state: [state: PartitionState];
  /** A background failure that did not end the partitioner (reported, then retried). */
  error: [error: Error];
}

/** Rejects `waitForAcquire({ timeout })` when the set was not acquired in time (code OPERATIONTIMEOUT). */
export class PartitionTimeoutError extends ZooKeeperError {
  /** The timeout that passed, ms. */
  readonly timeout: number;

  /** Made by `waitForAcquire()`; `path` is the partitioner's path. */
  constructor(path: string, timeout: number) {
    super(ErrorCode.OPERATIONTIMEOUT, `the partition was not acquired within ${timeout} ms`, { op: "waitForAcquire", path });
    this.name = "PartitionTimeoutError";
    this.timeout = timeout;
  }
}

/** kazoo's split: the sorted items from our place among the sorted ids, every n-th (empty when `id` is not in the party). */
export function kazooPartition(id: string, ids: readonly string[], items: readonly string[]): string[] {
  const members = [...ids].sort(byCodePoint);
  const i = members.indexOf(id);
  if (i < 0) return [];
  return [...items].sort(byCodePoint).filter((_, k) => k % members.length === i);
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Splits a set of items among the members of a party (kazoo SetPartitioner, on its znode layout): every item is
 * held by one member at a time, under a lock, and the split follows members joining and leaving. Listen for
 * "state": on "acquired" work on `partition`; on "release" stop using it and call `release()`. Errors are
 * ZooKeeperErrors: BADARGUMENTS for bad arguments, PartitionTimeoutError, RecipeStateError (APIERROR) for
 * `start()` twice or a call after "failure", and what the client rejects with. Servers 3.5.3+ (container parents), as Lock.
 */
export class SetPartitioner extends TypedEventEmitter<SetPartitionerEvents> {
  /** The partitioner's znode path (`party` and `locks` live under it). */
  readonly path: string;
  /** This member's identifier. */
  readonly id: string;
  /** The items, sorted, without duplicates. */
  readonly set: readonly string[];
  private readonly zk: ZooKeeper;
  private readonly member: GroupMember;
  private readonly settle: number;
  private readonly reaction: number;
  private readonly waiters: Waiters;
  private now: PartitionState = "allocating";
  private started = false;
  private held: Lock[] = [];
  private heldItems: string[] = [];
  private ids: string[] | null = null; // the party's ids from the last "change"
  private partyChanges = 0;
  private run = 0; // bumped by every release, finish and failure: an allocation of another run stops
  private stableTimer: TimerHandle | null = null;
  private wakeStable: (() => void) | null = null;

  /** Prepares a member; nothing is sent before `start()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: SetPartitionerOptions) {
    super();
    checkRecipePath(path, "partitioner", "SetPartitioner");
    const bad = (message: string): ZooKeeperError => new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op: "SetPartitioner", path });
    if (!options || typeof options.id !== "string" || options.id === "" || options.id.includes("/")) throw bad("options.id must be a non-empty string without '/'");
    if (!Array.isArray(options.set) || !options.set.every((s) => typeof s === "string" && s !== "" && s !== "." && s !== ".." && !s.includes("/"))) {
      throw bad("options.set must be an array of znode names (non-empty, no '/')");
    }
    const ms = (v: unknown, name: string, dflt: number): number => {
      if (v === undefined) return dflt;
      if (typeof v !== "number" || !(v >= 0) || !Number.isFinite(v)) throw bad(`options.${name} must be a number of ms >= 0`);
      return v;
    };
    this.settle = ms(options.settle, "settle", 1000);
    this.reaction = ms(options.reaction, "reaction", 1000);
    this.zk = zk;
    this.path = path;
    this.id = options.id;
    this.set = [...new Set(options.set)].sort(byCodePoint);
    this.waiters = new Waiters(zk.clock);
    this.member = new GroupMember(zk, `${path}/party`, { id: `${randomUUID().replaceAll("-", "")}-${options.id}`, data: options.id });
  }

  /** The current state. */
  get state(): PartitionState {
    return this.now;
  }

  /** The items this member holds: set while "acquired" (and still locked in "release" until `release()`), else empty. */
  get partition(): readonly string[] {
    return this.now === "acquired" || this.now === "release" ? this.heldItems : [];
  }

  /** Joins the party and starts allocating (state "allocating"). RecipeStateError when started already or failed. */
  async start(): Promise<void> {
    if (this.started || this.now === "failure") throw new RecipeStateError(this.path, "start", this.started ? "start() was called already" : "the partitioner is in state failure; make a new one");
    if (TERMINAL.has(this.zk.state)) throw endedSession(this.zk.state, "start", this.path);
    this.started = true;
    this.member.on("change", this.onParty);
    this.member.on("error", (e) => reportError(this.zk, this, "SetPartitioner", e));
    this.zk.on("state", this.onState);
    try {
      await this.member.join();
    } catch (e) {
      this.member.off("change", this.onParty);
      this.zk.off("state", this.onState);
      this.now = "failure";
      throw e;
    }
    this.startAllocating();
  }

  /** Resolves with `partition` once "acquired"; rejects when the state becomes "failure", on abort or after `timeout` ms. */
  async waitForAcquire(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<readonly string[]> {
    const { signal, timeout } = options ?? {};
    if (timeout !== undefined && (typeof timeout !== "number" || !(timeout >= 0))) {
      throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "timeout must be a number of ms >= 0", { op: "waitForAcquire", path: this.path });
    }
    if (this.now === "failure") throw this.failed("waitForAcquire");
    if (this.now !== "acquired") await this.waiters.wait(signal, timeout, () => new PartitionTimeoutError(this.path, timeout ?? 0));
    return this.partition;
  }

  /**
   * Gives up the items (their locks are released; resolved once their znodes are gone) and allocates again:
   * call it on "release", once the items are no longer used. RecipeStateError in "failure".
   */
  async release(): Promise<void> {
    if (this.now === "failure") throw this.failed("release");
    this.run++;
    this.setState("allocating");
    await this.releaseLocks();
    this.startAllocating();
  }

  /** Releases the items and leaves the party; the state becomes "failure" (kazoo's `finish`): the partitioner is done. */
  async finish(): Promise<void> {
    if (this.now === "failure" && !this.started) return;
    this.run++;
    this.started = false;
    this.member.off("change", this.onParty);
    this.zk.off("state", this.onState);
    this.stopStable();
    this.setState("failure");
    await this.releaseLocks();
    if (!TERMINAL.has(this.zk.state)) await this.member.leave();
  }

  /** `await using` support: the same as `finish()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.finish();
  }

  // --- allocation ---

  private startAllocating(): void {
    this.allocate(this.run).catch((e: unknown) => reportError(this.zk, this, "SetPartitioner", e)); // not expected: every step handles its errors
  }

  /** Waits for a stable party, takes our items' locks, and becomes "acquired" unless the run ended or the party changed. */
  private async allocate(run: number): Promise<void> {
    for (;;) {
      if (run !== this.run) return;
      if (this.zk.state !== "connected") await untilConnected(this.zk).catch(() => {}); // an ended session: onState fails us
      if (run !== this.run) return;
      await this.stable();
      if (run !== this.run) return;
      const seen = this.partyChanges;
      const ids = this.ids!;
      const mine = kazooPartition(this.id, ids, this.set);
      let restart = false;
      for (const item of mine) {
        const lock = new Lock(this.zk, `${this.path}/locks/${item}`, { naming: "kazoo", id: this.id });
        for (;;) {
          try {
            await lock.acquire({ timeout: this.reaction });
            break;
          } catch (e) {
            if (run !== this.run) return;
            if (e instanceof LockTimeoutError) {
              if (this.partyChanges !== seen) {
                restart = true;
                break;
              }
              continue;
            }
            if (TERMINAL.has(this.zk.state)) return this.endSession(this.zk.state);
            reportError(this.zk, this, "SetPartitioner", e); // a lost link meanwhile: start over once back
            restart = true;
            break;
          }
        }
        if (run !== this.run) {
          await lock.release().catch(() => {}); // an ended session has released it already
          return;
        }
        if (restart) break;
        lock.on("lost", (reason) => this.onLockLost(run, reason));
        this.held.push(lock);
        this.heldItems.push(item);
        if (this.partyChanges !== seen) {
          restart = true;
          break;
        }
      }
      if (!restart && run === this.run && this.partyChanges === seen && this.held.every((l) => l.isHeld)) {
        this.setState("acquired");
        this.waiters.resolveAll();
        return;
      }
      if (run !== this.run) return;
      await this.releaseLocks(); // the party changed while we were taking locks: start over
    }
  }

  /** Resolves once the party is known, includes us, and has not changed for `settle` ms. */
  private stable(): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.stableTimer !== null) this.zk.clock.clearTimeout(this.stableTimer);
        this.stableTimer = null;
        if (this.ids === null || !this.ids.includes(this.id)) return; // the next "change" checks again
        this.stableTimer = this.zk.clock.setTimeout(() => {
          this.stableTimer = null;
          this.wakeStable = null;
          resolve();
        }, this.settle);
      };
      this.wakeStable = check;
      check();
    });
  }

  private async releaseLocks(): Promise<void> {
    const locks = this.held;
    this.held = [];
    this.heldItems = [];
    await Promise.all(locks.map((l) => l.release().catch(() => {}))); // an ended session has released them already
  }

  private readonly onParty = (members: Member[]): void => {
    this.ids = members.map((m) => m.id.slice(m.id.indexOf("-") + 1));
    this.partyChanges++;
    this.wakeStable?.();
    if (this.now === "acquired") this.setState("release");
  };

  private onLockLost(run: number, reason: LockLostReason): void {
    if (run !== this.run) return;
    if (reason === "expired" || reason === "closed") return this.endSession(TERMINAL.has(this.zk.state) ? this.zk.state : "closed");
    if (this.now === "acquired") this.setState("release");
    // while allocating, allocate() sees the lock is not held and starts over
  }

  private readonly onState = (state: SessionState): void => {
    if (TERMINAL.has(state)) this.endSession(state);
  };

  private endSession(state: SessionState): void {
    if (this.now === "failure") return;
    this.run++;
    this.started = false;
    this.member.off("change", this.onParty);
    this.zk.off("state", this.onState);
    this.stopStable();
    this.held = [];
    this.heldItems = [];
    this.waiters.rejectAll(endedSession(state, "SetPartitioner", this.path));
    this.setState("failure");
  }

  private stopStable(): void {
    if (this.stableTimer !== null) this.zk.clock.clearTimeout(this.stableTimer);
    this.stableTimer = null;
    this.wakeStable = null;
  }

  private failed(op: string): RecipeStateError {
    return new RecipeStateError(this.path, op, "the partitioner is in state failure; make a new one");
  }

  private setState(state: PartitionState): void {
    if (this.now === state) return;
    this.now = state;
    if (state === "failure") this.waiters.rejectAll(this.failed("waitForAcquire"));
    emitIsolated(this.zk, this, "SetPartitioner", "state", state);
  }
}
