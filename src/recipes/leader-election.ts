// Leader election (README "Recipes"; reference: `npm run docs`), wire-compatible with Apache Curator's LeaderLatch: protected
// ephemeral-sequential candidates, order by sequence, each candidate watches only its predecessor,
// the leader must own the first znode (ephemeralOwner), and leadership ends at the first doubt.
import { EventEmitter } from "node:events";
import type { SessionState, TimerHandle, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { Op, Transaction, ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { ErrorCode, EventType } from "../protocol/constants.ts";
import { ContenderQueue, createContender, forgetWatch, readParticipants, type Participant } from "./candidates.ts";
import { ElectionClosedError, LeadershipTimeoutError, NotLeaderError, RecipeStateError } from "./errors.ts";
import { electionNaming, type ElectionProtocol, type Naming } from "./naming.ts";
import { Serial, TERMINAL, Waiters, deleteNode } from "./support.ts";

export type { Participant };

/** Why leadership ended (the `"revoked"` event). */
export type RevokeReason = "resigned" | "disconnected" | "expired" | "deleted" | "closed";

/** Options of a LeaderElection. */
export interface LeaderElectionOptions {
  /** This participant's id, stored as the candidate znode's data (UTF-8). */
  id: string;
  /** When a leader steps down on link trouble: at "disconnected" (default, safe) or only at "expired". */
  revokeOn?: "disconnected" | "expired";
  /** Whose election to join: Curator LeaderLatch (default), Curator LeaderSelector, or kazoo Election. */
  protocol?: ElectionProtocol;
}

/** Events of a LeaderElection. */
export interface LeaderElectionEvents {
  /** This participant leads now. */
  elected: [];
  /** This participant stopped leading, and why. */
  revoked: [reason: RevokeReason];
  /** One of this participant's watches fired (observability: the herd-effect test counts these). */
  watch: [path: string];
  /** A background re-check failed for a reason other than a lost link; it is retried in 1 s. */
  error: [error: Error];
}

type Phase = "latent" | "started" | "closed";
const RETRY_MS = 1000;

/**
 * Leader election, Curator `LeaderLatch`-compatible: each participant is an ephemeral-sequential znode under
 * `path` and watches only its predecessor; the first leads. Leadership is revoked at the first doubt (see README).
 * Errors are ZooKeeperErrors: BADARGUMENTS for bad constructor arguments, and what the client rejects with.
 */
export class LeaderElection extends EventEmitter<LeaderElectionEvents> {
  /** The election's znode path. */
  readonly path: string;
  /** This participant's id (stored in its candidate znode). */
  readonly id: string;
  /** When leadership is given up: at the first disconnect (default) or only at expiry. */
  readonly revokeOn: "disconnected" | "expired";
  /** The znode naming this election speaks (`LeaderElectionOptions.protocol`). */
  readonly protocol: ElectionProtocol;
  private readonly naming: Naming;
  private readonly zk: ZooKeeper;
  private readonly serial = new Serial();
  private phase: Phase = "latent";
  private ours: string | null = null; // our candidate znode (full path)
  private ownWatched: string | null = null; // the znode our exists-watch is on
  private predecessor: string | null = null; // the znode our getData-watch is on
  private leading = false;
  private leaderToken: bigint | undefined;
  private leaderVersion = 0;
  private checkQueued = false;
  private leaseTimer: TimerHandle | null = null; // fires when isLeader's lease may have lapsed
  private relistQueued = false;
  private pruneQueued = false;
  private readonly queue: ContenderQueue; // the lower candidates we know (walk-down on handover)
  private retry: TimerHandle | null = null;
  private ended: unknown = null; // why the election ended (rejects later calls)
  private readonly waiters: Waiters;

  /**
   * Prepares a participant; nothing is sent before `start()`. Throws BADARGUMENTS for an invalid path or options.
   */
  constructor(zk: ZooKeeper, path: string, options: LeaderElectionOptions) {
    super();
    if (typeof path !== "string" || !path.startsWith("/") || path.length < 2 || path.endsWith("/")) {
      throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "the election path must be an absolute znode path", { op: "LeaderElection", path: String(path) });
    }
    if (!options || typeof options.id !== "string") throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "options.id must be a string", { op: "LeaderElection", path });
    if (options.revokeOn !== undefined && options.revokeOn !== "disconnected" && options.revokeOn !== "expired") {
      throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `revokeOn must be "disconnected" or "expired"`, { op: "LeaderElection", path });
    }
    this.zk = zk;
    this.waiters = new Waiters(zk.clock);
    this.path = path;
    this.id = options.id;
    this.revokeOn = options.revokeOn ?? "disconnected";
    this.protocol = options.protocol ?? "curator-latch";
    const naming = electionNaming(this.protocol);
    if (!naming) throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `protocol must be "curator-latch", "curator-selector" or "kazoo"`, { op: "LeaderElection", path });
    this.naming = naming;
    this.queue = new ContenderQueue(zk, path, naming, { useHint: true });
  }

  /**
   * True only while this participant leads and `zk.heardWithin(lease)`: a request the server answered was sent
   * within the read timeout, connected (revokeOn "disconnected"), or 90% of the session timeout (revokeOn
   * "expired"). A process resuming from a pause reads false before any timer or socket callback has run.
   * `"revoked"` fires when this turns false, not later.
   */
  get isLeader(): boolean {
    if (!this.leading || this.phase !== "started") return false;
    if (this.revokeOn === "disconnected") return this.zk.state === "connected" && this.zk.heardWithin(this.leaseMs);
    return !TERMINAL.has(this.zk.state) && this.zk.heardWithin(this.leaseMs);
  }

  private get leaseMs(): number {
    return this.revokeOn === "disconnected" ? this.zk.readTimeout : this.zk.negotiatedTimeout * 0.9;
  }

  /** Re-armed on every election and lapse check: "revoked" as soon as isLeader's lease lapses; then a re-check. */
  private watchLease(): void {
    if (this.leaseTimer !== null) this.zk.clock.clearTimeout(this.leaseTimer);
    this.leaseTimer = null;
    if (!this.leading || this.phase !== "started") return;
    this.leaseTimer = this.zk.clock.setTimeout(this.checkLease, this.zk.leaseRemaining(this.leaseMs));
  }

  /** The lease timer's check, also run when the client resumes from a pause (before its stale reads). */
  private readonly checkLease = (): void => {
    if (!this.leading || this.phase !== "started") return;
    if (this.isLeader) return this.watchLease();
    this.revoke(this.revokeOn);
    this.requestCheck(); // a session that is still fine leads again once the server answers
  };

  /** Fencing token while leading: the czxid of our candidate znode (grows from leader to leader). */
  get token(): bigint | undefined {
    return this.isLeader ? this.leaderToken : undefined;
  }

  /** Our candidate znode's path, or null while we have none. */
  get candidatePath(): string | null {
    return this.ours;
  }

  /** Joins the election; resolves once our candidate znode is in place. */
  async start(): Promise<void> {
    if (this.phase !== "latent") throw new RecipeStateError(this.path, "start", "start() may be called once");
    this.phase = "started";
    this.zk.on("state", this.onState);
    this.zk.on("resumed", this.checkLease);
    try {
      await this.serial.run(async () => {
        this.ours = await this.createCandidate();
        await this.reconcile().catch((e) => this.onCheckError(e));
      });
    } catch (e) {
      this.finish("closed", e);
      throw e;
    }
  }

  /** Resolves when this participant leads; rejects on abort, LeadershipTimeoutError, or ElectionClosedError when it ends. */
  waitForLeadership(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<void> {
    if (this.phase !== "started") return Promise.reject(this.ended ?? this.endedError("waitForLeadership"));
    if (this.isLeader) return Promise.resolve();
    const timeout = (): Error => new LeadershipTimeoutError(this.path, options.timeout ?? 0);
    return this.waiters.wait(options.signal, options.timeout, timeout);
  }

  /** Every candidate in election order; the first one leads. */
  participants(): Promise<Participant[]> {
    return readParticipants(this.zk, this.path, this.naming);
  }

  /** The current leader as read from the server, or null when there is no candidate. */
  async leader(): Promise<Participant | null> {
    return (await this.participants())[0] ?? null;
  }

  /**
   * A Transaction that commits only while this participant leads. commit() rejects with NotLeaderError (NOAUTH)
   * before sending anything when we are not the leader; otherwise our ops go in one multi together
   * with a check of our candidate znode, so the server rejects them atomically (NONODE or BADVERSION)
   * once that znode is gone. The results are those of our ops (the check's is left off).
   */
  transaction(): Transaction {
    return new Transaction(async (ops) => {
      const guard = this.ours;
      if (!this.isLeader || guard === null) {
        throw new NotLeaderError(this.path, this.id);
      }
      try {
        return (await this.zk.multi([...ops, Op.check(guard, this.leaderVersion)])).slice(0, ops.length);
      } catch (e) {
        if (isZooKeeperError(e) && e.path === guard) this.requestCheck(); // our znode changed: find out now
        throw e;
      }
    });
  }

  /** Steps down (when leading) and rejoins at the back of the queue. */
  async resign(): Promise<void> {
    if (this.phase !== "started") throw this.endedError("resign");
    await this.serial.run(async () => {
      if (this.phase !== "started") return;
      this.revoke("resigned");
      const old = this.dropOurs();
      if (old) await deleteNode(this.zk, old);
      if (this.phase !== "started") return;
      this.ours = await this.createCandidate();
      await this.reconcile().catch((e) => this.onCheckError(e));
    });
  }

  /** Leaves the election; resolves once our candidate znode is gone (or the session has ended). */
  async close(): Promise<void> {
    if (this.phase !== "closed") this.finish("closed", this.endedError("close"));
    await this.serial.run(async () => {
      const old = this.dropOurs();
      if (old) await deleteNode(this.zk, old).catch(() => {});
    });
  }

  /**
   * Waits for leadership, runs `fn` with a signal that aborts when leadership is revoked, then
   * resigns so the next candidate gets its turn and this one rejoins at the back.
   */
  async run<T>(fn: (signal: AbortSignal) => Promise<T> | T, options: { signal?: AbortSignal } = {}): Promise<T> {
    if (this.phase === "latent") await this.start();
    await this.waitForLeadership({ signal: options.signal });
    const ac = new AbortController();
    const onRevoked = (reason: RevokeReason): void => ac.abort(new Error(`leadership revoked: ${reason}`, { cause: reason }));
    this.on("revoked", onRevoked);
    try {
      if (!this.isLeader) ac.abort(new Error("leadership revoked: disconnected", { cause: "disconnected" }));
      return await fn(ac.signal);
    } finally {
      this.off("revoked", onRevoked);
      if (this.phase === "started") await this.resign().catch((e) => this.report(e));
    }
  }

  /** `await using` support: the same as `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- the check: who leads, whom to watch ---

  /** Queues a check; `relist` lists the children again (a new candidate, a reconnect) instead of walking down. */
  private requestCheck(relist = false): void {
    this.relistQueued ||= relist;
    if (this.checkQueued || this.phase !== "started") return;
    this.checkQueued = true;
    void this.serial.run(async () => {
      this.checkQueued = false;
      const again = this.relistQueued;
      this.relistQueued = false;
      if (this.phase !== "started") return;
      if (this.ours === null) this.ours = await this.createCandidate();
      await this.reconcile(again);
    }).catch((e) => this.onCheckError(e));
  }

  /**
   * Leads (first, and ours) or watches the predecessor, walking down the lower candidates we know (ContenderQueue,
   * README "Big elections"). Only the leader watches its own znode; a waiter watches only its predecessor.
   */
  private async reconcile(relist = true): Promise<void> {
    const prune = this.pruneQueued;
    this.pruneQueued = false;
    if (prune && !relist && this.ours !== null) await this.queue.prune();
    for (let listings = 0; this.phase === "started"; ) {
      if (this.ours === null) {
        this.ours = await this.createCandidate();
        relist = true;
      }
      const ours = this.ours;
      if (relist || this.queue.needsListing) {
        if (++listings > 20) throw new ZooKeeperError(ErrorCode.SYSTEMERROR, "the candidates keep changing; retrying later", { op: "election", path: this.path });
        relist = false;
        const lower = await this.queue.list(ours);
        if (this.phase !== "started" || this.ours !== ours) return;
        if (lower < 0) {
          this.lostOurs();
          continue;
        }
        if (lower > 0) this.revoke("deleted"); // a lower candidate appeared ahead of ours (hand-made names only)
      }
      const predecessor = this.queue.predecessor;
      if (predecessor === null) {
        if (!this.queue.first) continue; // the known ones ran out of a truncated listing: list again
        const stat = await this.zk.exists(ours, this.onOwn);
        if (this.phase !== "started" || this.ours !== ours) return;
        if (stat === null) {
          this.lostOurs();
          continue;
        }
        this.ownWatched = ours;
        this.predecessor = null;
        if (stat.ephemeralOwner !== this.zk.sessionId) {
          this.dropOurs(); // named like ours but another session's (cannot happen within one session): replace it
          await deleteNode(this.zk, ours);
          continue;
        }
        if (!this.leading) this.queue.markLeader(ours); // successors need not list every candidate (ContenderQueue)
        this.elect(stat.czxid, stat.version);
        return;
      }
      this.predecessor = predecessor;
      try {
        await this.zk.getData(predecessor, this.onPredecessor);
        return;
      } catch (e) {
        if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
        // Gone since we learnt of it: walk down past it (and past any other known one gone too).
        this.queue.gone(predecessor);
        if (this.phase !== "started" || this.ours !== ours) return;
        await this.queue.prune();
      }
    }
  }

  /** Protected create: a create whose reply was lost is found by its uuid prefix, never made twice. */
  private createCandidate(): Promise<string> {
    return createContender(this.zk, this.path, this.naming, this.id);
  }

  private readonly onPredecessor: Watcher = (event: WatchedEvent) => {
    const path = event.path;
    if (event.type === EventType.None || this.phase !== "started" || path === null || path !== this.predecessor) return;
    this.predecessor = null;
    if (event.type === EventType.NodeDeleted) {
      this.queue.gone(path);
      this.pruneQueued = true; // the others we know may be gone too: one round trip checks them all
    }
    this.emitSafely("watch", path);
    this.requestCheck();
  };

  private readonly onOwn: Watcher = (event: WatchedEvent) => {
    const path = event.path;
    if (event.type === EventType.None || this.phase !== "started" || path === null || path !== this.ownWatched) return;
    this.ownWatched = null;
    this.emitSafely("watch", path);
    this.requestCheck(true);
  };

  private readonly onState = (state: SessionState): void => {
    if (this.phase !== "started") return;
    if (this.leading) this.checkLease(); // a lease that lapsed meanwhile ends before this change is acted on
    switch (state) {
      case "connected":
        this.requestCheck(true);
        break;
      case "disconnected":
      case "connectedReadOnly":
      case "connecting":
        if (this.revokeOn === "disconnected") this.revoke("disconnected");
        break;
      case "expired":
        this.finish("expired", new ElectionClosedError(this.path, "election", "expired"));
        break;
      case "closed":
      case "authFailed":
        this.finish("closed", this.endedError("election"));
        break;
    }
  };

  private onCheckError(e: unknown): void {
    if (this.phase !== "started") return;
    // A lost link is re-checked on "connected"; an ended session ends the election via "state". The session
    // reads "disconnected" before a call fails with CONNECTIONLOSS, so one still reading "connected" is being
    // closed, and its "closed" is on the way.
    if (isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) return;
    if (isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)) return;
    this.report(e);
    this.retryLater(RETRY_MS);
  }

  private retryLater(ms: number): void {
    if (this.retry) return;
    this.retry = this.zk.clock.setTimeout(() => {
      this.retry = null;
      this.requestCheck();
    }, ms);
  }

  // --- transitions (events only on real changes) ---

  private elect(token: bigint, version: number): void {
    if (this.revokeOn === "disconnected" && this.zk.state !== "connected") return; // re-checked on "connected"
    this.leaderToken = token;
    this.leaderVersion = version;
    if (!this.leading) {
      this.leading = true;
      this.emitSafely("elected");
    }
    this.watchLease();
    this.waiters.resolveAll();
  }

  private revoke(reason: RevokeReason): void {
    if (!this.leading) return;
    this.leading = false;
    this.leaderToken = undefined;
    this.watchLease();
    this.emitSafely("revoked", reason);
  }

  /** Our znode vanished (someone deleted it): step down and stand again. */
  private lostOurs(): void {
    this.revoke("deleted");
    this.dropOurs();
  }

  private dropOurs(): string | null {
    const old = this.ours;
    this.ours = null;
    this.ownWatched = null;
    forgetWatch(this.zk, this.predecessor, this.onPredecessor);
    this.predecessor = null;
    this.queue.reset();
    return old;
  }

  private finish(reason: "expired" | "closed", error: unknown): void {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.ended = error;
    this.zk.off("state", this.onState);
    this.zk.off("resumed", this.checkLease);
    if (this.retry !== null) this.zk.clock.clearTimeout(this.retry);
    this.retry = null;
    this.revoke(reason);
    this.waiters.rejectAll(error);
  }

  private endedError(op: string): ZooKeeperError {
    return new ElectionClosedError(this.path, op, this.phase === "latent" ? "notStarted" : "closed");
  }

  private report(e: unknown): void {
    if (this.listenerCount("error") > 0) emitIsolated(this.zk, this, "LeaderElection", "error", e instanceof Error ? e : new Error(String(e)));
  }

  /** A throwing listener must not break the election's bookkeeping: it is reported by the client's policy (zk.reportListenerError). */
  private emitSafely<K extends "elected" | "revoked" | "watch">(event: K, ...args: LeaderElectionEvents[K]): void {
    emitIsolated(this.zk, this, "LeaderElection", event, ...args);
  }
}
