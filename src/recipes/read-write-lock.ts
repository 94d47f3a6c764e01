// A distributed read-write lock, wire-compatible with Apache Curator's InterProcessReadWriteLock (`naming: "curator"`)
// and kazoo's ReadLock / WriteLock (`naming: "kazoo"`). Readers and writers stand in one queue of
// ephemeral-sequential contenders ordered by sequence: a reader waits only for the writers before it, a writer
// for every contender before it, so readers share, a writer excludes, and a writer is not starved by readers
// who came after it. Each side is a Lock (the same contender machinery) with its own names and wait policy.
import type { ZooKeeper } from "../client/index.ts";
import { ZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { LockUpgradeError } from "./errors.ts";
import { LOCK_SIDE, Lock, type LockOptions, type LockSide } from "./lock.ts";
import { READ_WRITE, type LockNaming } from "./naming.ts";
import { checkRecipePath } from "./options.ts";

/** Options of a ReadWriteLock. */
export interface ReadWriteLockOptions {
  /** Stored as each contender znode's data (UTF-8): kazoo's identifier; Curator readers see the bytes. */
  id?: string;
  /** Whose read-write lock to speak (default "curator"). */
  naming?: LockNaming;
}

/**
 * A distributed read-write lock: `readLock` and `writeLock` are each used like a {@link Lock} (acquire/release
 * with timeout and AbortSignal, `run`, `isHeld`, `token`, the `"lost"` event). Wire-compatible with Curator's
 * InterProcessReadWriteLock (`naming: "curator"`: `_c_<uuid>-__READ__<seq>` / `_c_<uuid>-__WRIT__<seq>`) and
 * kazoo's ReadLock / WriteLock (`naming: "kazoo"`: `<uuid hex>__rlock__<seq>` / `<uuid hex>__lock__<seq>`).
 * Downgrade is allowed (acquire the read lock while holding the write lock, then release the write lock); upgrade is
 * refused: `writeLock.acquire()` while the read lock is held or pending rejects with LockUpgradeError.
 */
export class ReadWriteLock {
  /** The lock's znode path (readers' and writers' contenders are its children). */
  readonly path: string;
  /** The id stored in this lock's contender znodes. */
  readonly id: string;
  /** The znode naming in use: "curator" or "kazoo". */
  readonly naming: LockNaming;
  /** The shared side: held together with other readers, never beside a writer. */
  readonly readLock: Lock;
  /** The exclusive side: held alone. */
  readonly writeLock: Lock;

  /** Prepares both sides; nothing is sent before an `acquire()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: ReadWriteLockOptions = {}) {
    checkRecipePath(path, "lock", "ReadWriteLock");
    const o = options ?? {};
    if (o.id !== undefined && typeof o.id !== "string") throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "options.id must be a string", { op: "ReadWriteLock", path });
    const naming = o.naming ?? "curator";
    if (naming !== "curator" && naming !== "kazoo") throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `naming must be "curator" or "kazoo"`, { op: "ReadWriteLock", path });
    this.path = path;
    this.id = o.id ?? "";
    this.naming = naming;
    const rw = READ_WRITE[naming];
    const side = (s: LockSide): LockOptions => ({ id: this.id, naming, [LOCK_SIDE]: s }) as LockOptions;
    // A reader waits for the writers before it, except our own writer while it holds the lock (a downgrade).
    const ownWriter = (name: string): boolean => this.writeLock.isHeld && this.writeLock.nodePath === `${path}/${name}`;
    this.readLock = new Lock(zk, path, side({ naming: rw.read, waitsFor: (name) => rw.isWriter(name) && !ownWriter(name) }));
    this.writeLock = new Lock(zk, path, side({ naming: rw.write, refuse: () => (this.readLock.nodePath !== null ? new LockUpgradeError(path) : null) }));
  }

  /** `await using` support: releases both sides. */
  async [Symbol.asyncDispose](): Promise<void> {
    await Promise.all([this.readLock.release(), this.writeLock.release()]);
  }
}
