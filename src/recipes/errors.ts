// The recipes' own errors: ZooKeeperErrors with the codes the recipes always used (so `err.code` and
// isZooKeeperError checks keep working), each a class of its own for `instanceof`. ZooKeeperError's
// Symbol.for brand plus the class name makes `instanceof` hold across copies of the package (ESM, CommonJS,
// two installed versions), so each class sets `name` to its own, unique name.
import { ZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";

/**
 * Rejects `acquire()` on a Lock that is held or being acquired already (code APIERROR): a Lock is not reentrant.
 */
export class LockNotReentrantError extends ZooKeeperError {
  /** Made by `acquire()`; `path` is the lock's path. */
  constructor(path: string) {
    super(ErrorCode.APIERROR, "this Lock is held or being acquired already (a Lock is not reentrant)", { op: "acquire", path });
    this.name = "LockNotReentrantError";
  }
}

/** Rejects `Lock.acquire({ timeout })` when the lock was not acquired in time (code OPERATIONTIMEOUT); nothing is left behind. */
export class LockTimeoutError extends ZooKeeperError {
  /** The timeout that passed, ms. */
  readonly timeout: number;

  /** Made by `acquire()`; `path` is the lock's path. */
  constructor(path: string, timeout: number) {
    super(ErrorCode.OPERATIONTIMEOUT, `lock not acquired within ${timeout} ms`, { op: "acquire", path });
    this.name = "LockTimeoutError";
    this.timeout = timeout;
  }
}

/** Rejects a pending `Lock.acquire()` that `release()` gave up before the lock was held (code CONNECTIONLOSS). */
export class LockReleasedError extends ZooKeeperError {
  /** Made by `release()`; `path` is the lock's path. */
  constructor(path: string) {
    super(ErrorCode.CONNECTIONLOSS, "released before acquired", { op: "acquire", path });
    this.name = "LockReleasedError";
  }
}

/** Rejects `commit()` of a `Lock.transaction()` when the lock is not held (code NOAUTH); nothing was sent. */
export class LockNotHeldError extends ZooKeeperError {
  /** Made by `commit()`; `path` is the lock's path. */
  constructor(path: string) {
    super(ErrorCode.NOAUTH, "the lock is not held", { op: "transaction", path });
    this.name = "LockNotHeldError";
  }
}

/**
 * Rejects `writeLock.acquire()` of a ReadWriteLock whose read lock is held or being acquired (code APIERROR): a read
 * lock cannot be upgraded (the writer would wait for our own reader). Release the read lock first.
 */
export class LockUpgradeError extends ZooKeeperError {
  /** Made by `writeLock.acquire()`; `path` is the lock's path. */
  constructor(path: string) {
    super(ErrorCode.APIERROR, "the read lock is held or being acquired: it cannot be upgraded to the write lock; release it first", { op: "acquire", path });
    this.name = "LockUpgradeError";
  }
}

/** Rejects `Semaphore.acquire({ timeout })` when no lease was had in time (code OPERATIONTIMEOUT); nothing is left behind. */
export class SemaphoreTimeoutError extends ZooKeeperError {
  /** The timeout that passed, ms. */
  readonly timeout: number;

  /** Made by `acquire()`; `path` is the semaphore's path. */
  constructor(path: string, timeout: number) {
    super(ErrorCode.OPERATIONTIMEOUT, `no lease acquired within ${timeout} ms`, { op: "acquire", path });
    this.name = "SemaphoreTimeoutError";
    this.timeout = timeout;
  }
}

/**
 * Rejects `commit()` of a `LeaderElection.transaction()` when this participant is not the leader (code NOAUTH);
 * nothing was sent.
 */
export class NotLeaderError extends ZooKeeperError {
  /** The participant's id. */
  readonly id: string;

  /** Made by `commit()`; `path` is the election's path. */
  constructor(path: string, id: string) {
    super(ErrorCode.NOAUTH, `participant ${JSON.stringify(id)} is not the leader`, { op: "transaction", path });
    this.name = "NotLeaderError";
    this.id = id;
  }
}

/** Rejects `LeaderElection.waitForLeadership({ timeout })` when not elected in time (code OPERATIONTIMEOUT). */
export class LeadershipTimeoutError extends ZooKeeperError {
  /** The timeout that passed, ms. */
  readonly timeout: number;

  /** Made by `waitForLeadership()`; `path` is the election's path. */
  constructor(path: string, timeout: number) {
    super(ErrorCode.OPERATIONTIMEOUT, `not elected within ${timeout} ms`, { op: "waitForLeadership", path });
    this.name = "LeadershipTimeoutError";
    this.timeout = timeout;
  }
}

/** Why a LeaderElection does not run: never started, closed (or its client closed), or its session expired. */
export type ElectionEndReason = "notStarted" | "closed" | "expired";

/**
 * A call on a LeaderElection that is not running: code CONNECTIONLOSS when it was not started or was closed,
 * SESSIONEXPIRED when its session expired (the election is then over). `waitForLeadership` waiters reject with it too.
 */
export class ElectionClosedError extends ZooKeeperError {
  /** Why the election does not run. */
  readonly reason: ElectionEndReason;

  /** Made by the election; `op` is the call refused, `path` the election's path. */
  constructor(path: string, op: string, reason: ElectionEndReason) {
    const message = reason === "expired" ? "the session has expired; the election is over (connect a new client for a new one)" : reason === "notStarted" ? "the election is not started" : "the election is closed";
    super(reason === "expired" ? ErrorCode.SESSIONEXPIRED : ErrorCode.CONNECTIONLOSS, message, { op, path });
    this.name = "ElectionClosedError";
    this.reason = reason;
  }
}

/**
 * A recipe method called at the wrong time (code APIERROR): `start()` a second time (LeaderElection, TreeCache),
 * or `TreeCache.rebuild()` on a cache that has not expired.
 */
export class RecipeStateError extends ZooKeeperError {
  /** Made by the recipe; `op` is the method, `path` the recipe's path. */
  constructor(path: string, op: string, message: string) {
    super(ErrorCode.APIERROR, message, { op, path });
    this.name = "RecipeStateError";
  }
}

/** Rejects `GroupMember.join()` when another live session holds the member id's znode (code NODEEXISTS). */
export class MemberIdTakenError extends ZooKeeperError {
  /** The member id asked for. */
  readonly id: string;

  /** Made by `join()`; `path` is the member's znode. */
  constructor(path: string, id: string) {
    super(ErrorCode.NODEEXISTS, `member id ${JSON.stringify(id)} is taken by another session`, { op: "join", path });
    this.name = "MemberIdTakenError";
    this.id = id;
  }
}
