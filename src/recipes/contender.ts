// One contender of a lock or an election, the algorithm Curator's InterProcessMutex and LeaderLatch and kazoo's
// Lock share: a protected ephemeral-sequential znode under the recipe path, its place in the naming's order,
// and a watch on its predecessor only (no herd). Lock and LeaderElection are policies on top of it: they
// decide what being first, falling behind, a doubtful link or a lost znode means to them.
import type { SessionState, Stat, TimerHandle, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { Op, Transaction, ZooKeeperError, isZooKeeperError } from "../client/index.ts";
import { ErrorCode, EventType, WatcherType } from "../protocol/constants.ts";
import { ContenderQueue, createContender } from "./contender-queue.ts";
import type { Naming } from "./naming.ts";
import { deleteNode } from "./reconnects.ts";
import { Serial } from "./serial.ts";

/** Where a contender stands. */
type ContenderPhase =
  | { readonly kind: "standing" } // making our znode, or finding its place
  | { readonly kind: "waiting"; readonly predecessor: string } // our data watch is on the predecessor
  | { readonly kind: "first" } // ours is the first znode and our session owns it; our exists watch is on it
  | { readonly kind: "gone" }; // left, or the session ended: no more checks and no more events

/** Why a contender lost its place: its znode was deleted (it stands again unless the policy leaves), or the session ended. */
type ContenderLoss = "deleted" | "expired" | "closed";

/** What a contender tells its policy, always from a check or a session change, and never once it is gone. */
export interface ContenderEvents {
  /** Ours is the first znode and our session owns it (its czxid is the fencing token); told after every check that finds it so. */
  first(stat: Stat): void;
  /** A listing found contenders ahead of ours (when ours was first, only hand-made names can do that). */
  behind(): void;
  /** The link is in doubt (disconnected, connecting, read-only); a re-check follows on "connected". */
  suspended(): void;
  /** Our znode vanished ("deleted") or the session ended (after which the contender is gone). */
  lost(reason: ContenderLoss): void;
  /** A watch of ours fired: on the predecessor, or on our own znode (`own`). */
  watched(path: string, own: boolean): void;
  /** A check failed for a reason other than a lost link (re-checked on "connected") or an ended session. */
  failed(error: unknown): void;
}

interface ContenderOptions {
  /** The queue its jobs run in; a Lock shares one between its attempts, so an acquire queues behind the last cleanup. */
  serial?: Serial;
  /** Leader hint of big elections (ContenderQueue, `markLeader`). */
  hint?: boolean;
  /** Which lower contenders ours waits for (a reader: writers only); default all. Ours is "first" when none is left. */
  waitsFor?: (name: string) => boolean;
  /** Names the error of a listing that keeps changing: the op, and what the contenders are called. */
  op: string;
  noun: string;
}

const STANDING: ContenderPhase = { kind: "standing" };
const FIRST: ContenderPhase = { kind: "first" };
const GONE: ContenderPhase = { kind: "gone" };

/** A contender: `stand()` to take a place, `check()` when something changed, `leave()` or `stop()` to end. */
export class Contender {
  private readonly serial: Serial; // every create, check and delete of ours, one at a time
  private readonly zk: ZooKeeper;
  private readonly path: string;
  private readonly naming: Naming;
  private readonly data: string;
  private readonly events: ContenderEvents;
  private readonly options: ContenderOptions;
  private readonly queue: ContenderQueue; // the lower contenders we know (walk-down on handover)
  private now: ContenderPhase = STANDING;
  private ours: string | null = null; // our znode (full path)
  private watching: string | null = null; // the predecessor our data watch is on (kept when gone, for leave())
  private checkQueued = false;
  private relistQueued = false;
  private pruneQueued = false;
  private fresh = false; // our znode was just made and not listed yet (its own exists goes out with the listing)
  private retry: TimerHandle | null = null;

  constructor(zk: ZooKeeper, path: string, naming: Naming, data: string, events: ContenderEvents, options: ContenderOptions) {
    this.zk = zk;
    this.path = path;
    this.naming = naming;
    this.data = data;
    this.events = events;
    this.options = options;
    this.serial = options.serial ?? new Serial();
    this.queue = new ContenderQueue(zk, path, naming, { useHint: options.hint ?? false, waitsFor: options.waitsFor });
  }

  get phase(): ContenderPhase {
    return this.now;
  }

  get gone(): boolean {
    return this.now.kind === "gone";
  }

  /** Our znode, or null while we have none. */
  get node(): string | null {
    return this.ours;
  }

  /** Makes our znode and finds its place; rejects only when the create fails (a failed check goes to `failed`). */
  stand(): Promise<void> {
    this.zk.off("state", this.onState);
    this.zk.on("state", this.onState);
    this.zk.off("closing", this.onClosing);
    this.zk.on("closing", this.onClosing);
    return this.serial.run(() => this.standAgain());
  }

  /** Leaves our place and stands again at the back; `turn` runs when the job's turn comes, after any check in flight. */
  restand(turn: () => void): Promise<void> {
    return this.serial.run(async () => {
      if (this.gone) return;
      turn();
      const old = this.drop();
      if (old) await deleteNode(this.zk, old);
      await this.standAgain();
    });
  }

  /** Queues a check; `relist` lists the children again (a reconnect) instead of walking down the known ones. */
  check(relist = false): void {
    this.relistQueued ||= relist;
    if (this.checkQueued || this.gone) return;
    this.checkQueued = true;
    void this.serial.run(async () => {
      this.checkQueued = false;
      const again = this.relistQueued;
      this.relistQueued = false;
      if (!this.gone) await this.reconcile(again);
    }).catch((e) => this.fail(e));
  }

  /** Queues a check in `ms` (on zk.clock), unless one is already due then. */
  checkLater(ms: number): void {
    if (this.retry !== null || this.gone) return;
    this.retry = this.zk.clock.setTimeout(() => {
      this.retry = null;
      this.check();
    }, ms);
  }

  /** Ends the contender (no more checks or events) and keeps its znode: the session ended, or leave() follows. */
  stop(): void {
    this.now = GONE;
    this.zk.off("state", this.onState);
    this.zk.off("closing", this.onClosing);
    if (this.retry !== null) this.zk.clock.clearTimeout(this.retry);
    this.retry = null;
  }

  /** Ends the contender; resolves once our znode is deleted (after any create in flight) and our watch dropped. */
  leave(): Promise<void> {
    this.stop();
    return this.serial.run(async () => {
      const old = this.drop();
      if (old) await deleteNode(this.zk, old).catch(() => {});
    });
  }

  /** Names ours as the leader in the recipe znode's data (the leader hint, ContenderQueue). */
  markLeader(): void {
    if (this.ours !== null) this.queue.markLeader(this.ours);
  }

  /** Where every failure goes: a lost link is re-checked on "connected" and an ended session ends us; the rest is the policy's. */
  fail(e: unknown): void {
    if (this.gone) return;
    // The session reads "disconnected" before a call fails with CONNECTIONLOSS, so one that still reads
    // "connected" is being closed, and its "closed" is on the way.
    if (isZooKeeperError(e, ErrorCode.CONNECTIONLOSS) || isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)) return;
    this.events.failed(e);
  }

  private async standAgain(): Promise<void> {
    if (this.gone) return;
    this.ours = await this.create();
    if (!this.gone) await this.reconcile().catch((e) => this.fail(e));
  }

  /** Protected create: a create whose reply was lost is found by its prefix, never made twice. */
  private async create(): Promise<string | null> {
    const made = (await createContender(this.zk, this.path, this.naming, this.data, () => this.gone)) || null;
    this.fresh = made !== null;
    return made;
  }

  /**
   * First (ours, and our session's) or watching the predecessor, walking down the lower contenders we know
   * (ContenderQueue, docs/recipes.md "Big elections"). Only the first watches its own znode; the others only their predecessor.
   * The first listing of a fresh znode takes our own exists along (pipelined: an uncontended contender is first after
   * one round trip, not two); a contender found waiting drops that watch again.
   */
  private async reconcile(relist = true): Promise<void> {
    const prune = this.pruneQueued;
    this.pruneQueued = false;
    if (prune && !relist && this.ours !== null) await this.queue.prune();
    let own: Promise<Stat | null> | null = null; // our own exists, sent with the listing of a fresh znode
    for (let listings = 0; !this.gone; ) {
      const ours = this.ours;
      if (ours === null) {
        this.ours = await this.create();
        relist = true;
        continue;
      }
      if (relist || this.queue.needsListing) {
        if (++listings > 20) throw new ZooKeeperError(ErrorCode.SYSTEMERROR, `the ${this.options.noun} keep changing; retrying later`, { op: this.options.op, path: this.path });
        relist = false;
        if (this.fresh) {
          this.fresh = false;
          own = this.zk.exists(ours, this.onOwn);
          own.catch(() => {}); // read below when first, else dropped
        }
        const lower = await this.queue.list(ours);
        if (this.moved(ours)) return;
        if (lower < 0) {
          await this.dropOwn(ours, own);
          own = null;
          if (this.moved(ours)) return;
          this.vanished();
          continue;
        }
        if (lower > 0) this.events.behind();
        if (this.moved(ours)) return;
      }
      const predecessor = this.queue.predecessor;
      if (predecessor === null) {
        if (!this.queue.first) continue; // the known ones ran out of a truncated listing: list again
        const stat = await (own ?? this.zk.exists(ours, this.onOwn));
        own = null;
        if (this.moved(ours)) return;
        if (stat === null) {
          this.vanished();
          continue;
        }
        this.watching = null;
        if (stat.ephemeralOwner !== this.zk.sessionId) {
          this.drop(); // named like ours but another session's (cannot happen within one session): replace it
          await deleteNode(this.zk, ours);
          continue;
        }
        this.now = FIRST;
        this.events.first(stat);
        return;
      }
      if (own !== null) {
        await this.dropOwn(ours, own);
        own = null;
        if (this.moved(ours)) return;
      }
      this.now = { kind: "waiting", predecessor };
      this.watching = predecessor;
      try {
        await this.zk.getData(predecessor, this.onPredecessor);
        return;
      } catch (e) {
        if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
        this.queue.gone(predecessor); // gone since we learnt of it: walk down past it, and past any other known one gone too
        if (this.moved(ours)) return;
        await this.queue.prune();
      }
    }
  }

  /**
   * A waiter (or a vanished znode) keeps no own watch: the one sent with the listing is removed once that exists is
   * answered (its watcher is registered then; it was sent with the listing, so that is now or one reply later), and
   * the removal goes out before the predecessor's watch.
   */
  private async dropOwn(ours: string, own: Promise<Stat | null> | null): Promise<void> {
    if (own === null) return;
    await own.catch(() => null);
    void this.zk.removeWatches(ours, this.onOwn, WatcherType.Data).catch(() => {});
  }

  /** True once the check in flight no longer counts: we are gone, or ours changed meanwhile. */
  private moved(ours: string): boolean {
    return this.gone || this.ours !== ours;
  }

  /** Our znode vanished (someone deleted it): told, then we stand again unless the policy left. */
  private vanished(): void {
    this.events.lost("deleted");
    if (!this.gone) this.drop();
  }

  /** Forgets our znode and the predecessor watch (a waiter that leaves leaves no watch behind); returns the znode. */
  private drop(): string | null {
    const old = this.ours;
    this.ours = null;
    if (this.watching !== null) void this.zk.removeWatches(this.watching, this.onPredecessor, WatcherType.Data).catch(() => {});
    this.watching = null;
    this.queue.reset();
    if (!this.gone) this.now = STANDING;
    return old;
  }

  private readonly onPredecessor: Watcher = (event: WatchedEvent) => {
    const path = event.path;
    if (event.type === EventType.None || this.gone || path === null || path !== this.watching) return;
    this.watching = null;
    this.now = STANDING;
    if (event.type === EventType.NodeDeleted) {
      this.queue.gone(path);
      this.pruneQueued = true; // the others we know may be gone too: one round trip checks them all
    }
    this.events.watched(path, false);
    this.check();
  };

  private readonly onOwn: Watcher = (event: WatchedEvent) => {
    const path = event.path;
    if (event.type === EventType.None || event.type === EventType.DataWatchRemoved || this.gone || path === null || path !== this.ours) return;
    if (this.now.kind === "first") this.now = STANDING;
    this.events.watched(path, true);
    this.check(true);
  };

  private readonly onState = (state: SessionState): void => {
    if (this.gone) return;
    switch (state) {
      case "connected":
        return this.check(true);
      case "disconnected":
      case "connectedReadOnly":
      case "connecting":
        return this.events.suspended();
      case "expired":
        return this.end("expired");
      case "closed":
      case "authFailed":
        return this.end("closed");
    }
  };

  // close() was called on the client: the server drops our znode with the session, so this place ends now,
  // before the closeSession leaves, and no one else can take it over while we still hold it.
  private readonly onClosing = (): void => {
    if (!this.gone) this.end("closed");
  };

  private end(reason: "expired" | "closed"): void {
    this.events.lost(reason);
    this.stop();
  }
}

/**
 * A Transaction that commits only while `term()` gives the holder's term (its contender znode's version): the
 * ops go in one multi with a check of that znode, so the server rejects them atomically (NONODE or BADVERSION)
 * once it is gone; with no term, `refuse()` is thrown before anything is sent. The results are those of the
 * ops (the check's is left off). LeaderElection.transaction() and Lock.transaction() are this.
 */
export function guardedTransaction(zk: ZooKeeper, contender: () => Contender | null, term: () => { version: number } | null, refuse: () => Error): Transaction {
  return new Transaction(async (ops) => {
    const ours = contender();
    const guard = ours?.node ?? null;
    const held = term();
    if (ours === null || guard === null || held === null) throw refuse();
    try {
      return (await zk.multi([...ops, Op.check(guard, held.version)])).slice(0, ops.length);
    } catch (e) {
      if (isZooKeeperError(e) && e.path === guard) ours.check(); // our znode changed: find out now
      throw e;
    }
  });
}
