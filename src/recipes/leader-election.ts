// Leader election (docs/recipes.md "Leader election"; reference: `npm run docs`), wire-compatible with Apache Curator's LeaderLatch: protected
// ephemeral-sequential candidates, order by sequence, each candidate watches only its predecessor,
// the leader must own the first znode (ephemeralOwner), and leadership ends at the first doubt.
import { TypedEventEmitter } from "../client/emitter.ts";
import type { Stat, ZooKeeper } from "../client/index.ts";
import { type Transaction, ZooKeeperError, emitIsolated } from "../client/index.ts";
import { readParticipants, type Participant } from "./contender-queue.ts";
import { Contender, guardedTransaction, type ContenderEvents } from "./contender.ts";
import { ElectionClosedError, LeadershipTimeoutError, NotLeaderError, RecipeStateError } from "./errors.ts";
import type { ElectionProtocol, Naming } from "./naming.ts";
import { Lease, runHeld } from "./lease.ts";
import { checkRecipePath, electionOptions } from "./options.ts";
import { publishRecipe, reportError } from "./reporting.ts";
import { Waiters } from "./serial.ts";

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
 * `path` and watches only its predecessor; the first leads. Leadership is revoked at the first doubt (docs/recipes.md, "LeaderElection: what is guaranteed").
 * Errors are ZooKeeperErrors: BADARGUMENTS for bad constructor arguments, and what the client rejects with.
 */
export class LeaderElection extends TypedEventEmitter<LeaderElectionEvents> {
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
  private readonly contender: Contender; // our candidate znode and its place
  private phase: Phase = "latent";
  private term: { token: bigint; version: number } | null = null; // while we lead: our znode's czxid and version
  private readonly lease: Lease;
  private ended: unknown = null; // why the election ended (rejects later calls)
  private readonly waiters: Waiters;

  /** Prepares a participant; nothing is sent before `start()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: LeaderElectionOptions) {
    super();
    checkRecipePath(path, "election", "LeaderElection");
    ({ id: this.id, revokeOn: this.revokeOn, protocol: this.protocol, naming: this.naming } = electionOptions(path, options));
    this.zk = zk;
    this.waiters = new Waiters(zk.clock);
    this.path = path;
    this.lease = new Lease(zk, this.revokeOn);
    this.contender = new Contender(zk, path, this.naming, this.id, this.policy, { hint: true, op: "election", noun: "candidates" });
  }

  /**
   * True only while this participant leads and its lease holds (`zk.heardWithin`: see Lease in lease.ts, by
   * `revokeOn`), so a process resuming from a pause reads false at once. `"revoked"` fires when this turns false.
   */
  get isLeader(): boolean {
    return this.term !== null && this.phase === "started" && this.lease.valid;
  }

  /** The lease timer's check, also run when the client resumes from a pause (before its stale reads). */
  private readonly checkLease = (): void => {
    if (this.term === null || this.phase !== "started") return;
    if (this.isLeader) return this.lease.arm(this.checkLease);
    this.revoke(this.revokeOn);
    this.contender.check(); // a session that is still fine leads again once the server answers
  };

  /** Fencing token while leading: the czxid of our candidate znode (grows from leader to leader). */
  get token(): bigint | undefined {
    return this.isLeader ? this.term?.token : undefined;
  }

  /** Our candidate znode's path, or null while we have none. */
  get candidatePath(): string | null {
    return this.contender.node;
  }

  /** Joins the election; resolves once our candidate znode is in place. */
  async start(): Promise<void> {
    if (this.phase !== "latent") throw new RecipeStateError(this.path, "start", "start() may be called once");
    this.phase = "started";
    this.zk.on("state", this.checkLease); // before the contender's own: a lease that lapsed ends before a change is acted on
    this.zk.on("resumed", this.checkLease);
    try {
      await this.contender.stand();
    } catch (e) {
      this.finish("closed", e);
      throw e;
    }
  }

  /** Resolves when this participant leads; rejects on abort, LeadershipTimeoutError, or ElectionClosedError when it ends. */
  waitForLeadership(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<void> {
    if (this.phase !== "started") return Promise.reject(this.ended ?? this.endedError("waitForLeadership"));
    if (this.isLeader) return Promise.resolve();
    return this.waiters.wait(options.signal, options.timeout, () => new LeadershipTimeoutError(this.path, options.timeout ?? 0));
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
    return guardedTransaction(this.zk, () => this.contender, () => (this.isLeader ? this.term : null), () => new NotLeaderError(this.path, this.id));
  }

  /** Steps down (when leading) and rejoins at the back of the queue. */
  async resign(): Promise<void> {
    if (this.phase !== "started") throw this.endedError("resign");
    await this.contender.restand(() => this.revoke("resigned"));
  }

  /** Leaves the election; resolves once our candidate znode is gone (or the session has ended). */
  async close(): Promise<void> {
    if (this.phase !== "closed") this.finish("closed", this.endedError("close"));
    await this.contender.leave();
  }

  /**
   * Waits for leadership, runs `fn` with a signal that aborts when leadership is revoked, then
   * resigns so the next candidate gets its turn and this one rejoins at the back.
   */
  async run<T>(fn: (signal: AbortSignal) => Promise<T> | T, options: { signal?: AbortSignal } = {}): Promise<T> {
    if (this.phase === "latent") await this.start();
    await this.waitForLeadership({ signal: options.signal });
    try {
      return await runHeld(fn, "leadership revoked", () => this.isLeader, (revoked) => (this.on("revoked", revoked), () => this.off("revoked", revoked)));
    } finally {
      if (this.phase === "started") await this.resign().catch((e) => reportError(this.zk, this, "LeaderElection", e));
    }
  }

  /** `await using` support: the same as `close()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // --- the policy: leads while first (and connected, with revokeOn "disconnected"), steps down at the first doubt ---

  private readonly policy: ContenderEvents = {
    first: (stat) => {
      if (this.term === null) this.contender.markLeader(); // successors need not list every candidate (ContenderQueue)
      this.elect(stat);
    },
    behind: () => this.revoke("deleted"), // a lower candidate appeared ahead of ours (hand-made names only)
    suspended: () => {
      if (this.revokeOn === "disconnected") this.revoke("disconnected");
    },
    lost: (reason) => {
      if (reason === "deleted") this.revoke("deleted"); // our znode vanished: step down, and stand again
      else if (reason === "expired") this.finish("expired", new ElectionClosedError(this.path, "election", "expired"));
      else this.finish("closed", this.endedError("election"));
    },
    watched: (path) => this.emitSafely("watch", path),
    failed: (e) => {
      reportError(this.zk, this, "LeaderElection", e);
      this.contender.checkLater(RETRY_MS);
    },
  };

  // --- transitions (events only on real changes) ---

  private elect(stat: Stat): void {
    if (this.revokeOn === "disconnected" && this.zk.state !== "connected") return; // re-checked on "connected"
    const was = this.term;
    this.term = { token: stat.czxid, version: stat.version };
    if (was === null) {
      publishRecipe("election", () => ({ path: this.path, id: this.id, event: "elected", token: stat.czxid.toString() }));
      this.emitSafely("elected");
    }
    this.lease.arm(this.checkLease); // "revoked" as soon as the lease lapses; then a re-check
    this.waiters.resolveAll();
  }

  private revoke(reason: RevokeReason): void {
    if (this.term === null) return;
    this.term = null;
    this.lease.arm(null);
    publishRecipe("election", () => ({ path: this.path, id: this.id, event: "revoked", reason }));
    this.emitSafely("revoked", reason);
  }

  private finish(reason: "expired" | "closed", error: unknown): void {
    if (this.phase === "closed") return;
    this.phase = "closed";
    this.ended = error;
    this.contender.stop();
    this.zk.off("state", this.checkLease);
    this.zk.off("resumed", this.checkLease);
    this.revoke(reason);
    this.waiters.rejectAll(error);
  }

  private endedError(op: string): ZooKeeperError {
    return new ElectionClosedError(this.path, op, this.phase === "latent" ? "notStarted" : "closed");
  }

  /** A throwing listener must not break the election's bookkeeping: it is reported by the client's policy (zk.reportListenerError). */
  private emitSafely<K extends "elected" | "revoked" | "watch">(event: K, ...args: LeaderElectionEvents[K]): void {
    emitIsolated(this.zk, this, "LeaderElection", event, ...args);
  }
}
