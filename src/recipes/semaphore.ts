// A distributed counting semaphore, wire-compatible with Apache Curator's InterProcessSemaphoreV2 (`naming: "curator"`)
// and kazoo's Semaphore (`naming: "kazoo"`). Both take a lease the same way: hold a mutex (a Lock, so waiters are
// served in order), count the lease znodes with a children watch, take one when the count allows, release the mutex.
//   Curator: the mutex is `<path>/locks` (InterProcessMutex names), leases are protected ephemeral-sequential
//            `<path>/leases/_c_<uuid>-lease-<seq>`; ours is made first and counts once at most `permits` exist.
//   kazoo:   the mutex is the sibling `<path>-__lock__` (kazoo Lock names), leases are ephemeral `<path>/<uuid hex>`,
//            made only while fewer than `permits` exist; `<path>`'s data is the max_leases, checked against `permits`.
// A lease is held only while nothing casts doubt on it: it is lost (the "lost" event) at the first disconnect, when
// its znode is deleted, or when the session ends, and its znode is deleted once we are back.
import { randomUUID } from "node:crypto";
import { TypedEventEmitter, type TypedEmitter } from "../client/emitter.ts";
import type { SessionState, TimerHandle, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { CreateMode, ErrorCode, EventType } from "../protocol/constants.ts";
import { childrenOrNone, createContender } from "./contender-queue.ts";
import { SemaphoreTimeoutError } from "./errors.ts";
import { Lock, type LockLostReason } from "./lock.ts";
import { CURATOR_LEASE, type LockNaming } from "./naming.ts";
import { Lease as Trust } from "./lease.ts";
import { checkRecipePath } from "./options.ts";
import { TERMINAL, deleteNode, endedSession, untilConnected } from "./reconnects.ts";

/** Options of a Semaphore. */
export interface SemaphoreOptions {
  /** How many leases may be held at once (an integer >= 1): Curator's maxLeases, kazoo's max_leases. */
  permits: number;
  /** Stored as each lease znode's data (UTF-8): kazoo's identifier; Curator readers see the bytes. */
  id?: string;
  /** Whose semaphore to speak (default "curator"). */
  naming?: LockNaming;
}

/** Why a held lease was lost (the `"lost"` event): as for a Lock. */
export type LeaseLostReason = LockLostReason;

/** Events of a SemaphoreLease. */
export interface SemaphoreLeaseEvents {
  /** The lease was held and no longer is (not emitted for release()). */
  lost: [reason: LeaseLostReason];
}

/** One lease of a Semaphore, from `acquire()` until `release()` or its loss. */
export interface SemaphoreLease extends TypedEmitter<SemaphoreLeaseEvents> {
  /** The lease znode's path. */
  readonly path: string;
  /**
   * True only while the lease is ours without doubt: not released, not lost, the session connected and a request
   * the server answered sent within the read timeout (as `Lock.isHeld`).
   */
  readonly isHeld: boolean;
  /** Gives the lease back; resolves once its znode is gone (or the session has ended). */
  release(): Promise<void>;
  /** `await using` support: the same as `release()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A distributed counting semaphore: at most `permits` leases are held at once, across every client speaking the same
 * layout on `path` (Curator's InterProcessSemaphoreV2 or kazoo's Semaphore). Waiters are served in the order of the
 * semaphore's mutex. Errors are ZooKeeperErrors: BADARGUMENTS for bad arguments (and, with kazoo's layout, a stored
 * max_leases other than `permits`), SemaphoreTimeoutError, and what the client rejects with.
 */
export class Semaphore {
  /** The semaphore's znode path. */
  readonly path: string;
  /** How many leases may be held at once. */
  readonly permits: number;
  /** The id stored in our lease znodes. */
  readonly id: string;
  /** The layout in use: "curator" or "kazoo". */
  readonly naming: LockNaming;
  private readonly zk: ZooKeeper;
  private readonly lockPath: string;
  private readonly leasesPath: string;
  private checked: Promise<void> | null = null; // kazoo: the max_leases check, once

  /** Prepares a semaphore; nothing is sent before `acquire()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: SemaphoreOptions) {
    checkRecipePath(path, "semaphore", "Semaphore");
    const bad = (message: string): ZooKeeperError => new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op: "Semaphore", path });
    if (!options || typeof options.permits !== "number" || !Number.isSafeInteger(options.permits) || options.permits < 1) throw bad("options.permits must be an integer >= 1");
    if (options.id !== undefined && typeof options.id !== "string") throw bad("options.id must be a string");
    const naming = options.naming ?? "curator";
    if (naming !== "curator" && naming !== "kazoo") throw bad(`naming must be "curator" or "kazoo"`);
    this.zk = zk;
    this.path = path;
    this.permits = options.permits;
    this.id = options.id ?? "";
    this.naming = naming;
    this.lockPath = naming === "curator" ? `${path}/locks` : `${path}-__lock__`;
    this.leasesPath = naming === "curator" ? `${path}/leases` : path;
  }

  /**
   * Resolves with a held lease. Rejects on abort or timeout (SemaphoreTimeoutError) after anything of ours is gone,
   * or when the session ends. A lost link while waiting is waited out, and the attempt starts again.
   */
  acquire(options: { signal?: AbortSignal; timeout?: number } = {}): Promise<SemaphoreLease> {
    if (TERMINAL.has(this.zk.state)) return Promise.reject(endedSession(this.zk.state, "acquire", this.path));
    const { signal, timeout } = options ?? {};
    if (timeout !== undefined && (typeof timeout !== "number" || !(timeout >= 0))) {
      return Promise.reject(new ZooKeeperError(ErrorCode.BADARGUMENTS, "timeout must be a number of ms >= 0", { op: "acquire", path: this.path }));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const ac = new AbortController();
    const onAbort = (): void => ac.abort(signal!.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    let timer: TimerHandle | undefined;
    if (timeout !== undefined) timer = this.zk.clock.setTimeout(() => ac.abort(new SemaphoreTimeoutError(this.path, timeout)), timeout);
    return this.attempt(ac.signal).finally(() => {
      if (timer !== undefined) this.zk.clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    });
  }

  /** The ids (znode data) of the leases held now, as read from the server (Curator's participant nodes, kazoo's lease_holders). */
  async leases(): Promise<string[]> {
    const decoder = new TextDecoder();
    const ids = await Promise.all(
      (await childrenOrNone(this.zk, this.leasesPath)).map(async (name) => {
        try {
          const { data } = await this.zk.getData(`${this.leasesPath}/${name}`);
          return data ? decoder.decode(data) : "";
        } catch (e) {
          if (isZooKeeperError(e, ErrorCode.NONODE)) return null; // released meanwhile
          throw e;
        }
      }),
    );
    return ids.filter((id): id is string => id !== null);
  }

  private async attempt(signal: AbortSignal): Promise<SemaphoreLease> {
    for (;;) {
      const mutex = new Lock(this.zk, this.lockPath, { id: this.id, naming: this.naming });
      const ours: { node: string | null } = { node: null };
      let lease: HeldLease | null = null;
      let released: Promise<void> | null = null;
      try {
        if (this.naming === "kazoo") await this.checkKazooPath();
        await mutex.acquire({ signal });
        const node = this.naming === "curator" ? await this.curatorLease(mutex, signal, ours) : await this.kazooLease(mutex, signal, ours);
        // The count allowed our lease: the mutex is done with. Its delete goes out with the lease's watch (one
        // round trip for both, not two); the lease is handed out once both are answered.
        released = mutex.release().catch(() => {});
        lease = await HeldLease.take(this.zk, node);
        return lease;
      } catch (e) {
        if (signal.aborted || !isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
        if (TERMINAL.has(this.zk.state)) throw endedSession(this.zk.state, "acquire", this.path); // the mutex lost with the session
      } finally {
        if (lease === null && ours.node !== null) await deleteNode(this.zk, ours.node).catch(() => {});
        await (released ?? mutex.release().catch(() => {}));
      }
      await untilConnected(this.zk); // a lost link: start again once back (rejects when the session ended)
    }
  }

  /** Curator: our protected sequential lease first, then wait while more than `permits` leases exist. */
  private async curatorLease(mutex: Lock, signal: AbortSignal, ours: { node: string | null }): Promise<string> {
    for (;;) {
      if (ours.node === null) ours.node = await createContender(this.zk, this.leasesPath, CURATOR_LEASE, this.id);
      const name = ours.node.slice(this.leasesPath.length + 1);
      const changed = childWatch();
      const children = await this.zk.getChildren(this.leasesPath, changed.watcher);
      if (!children.includes(name)) {
        ours.node = null; // deleted behind our back: make another, as Curator does
        continue;
      }
      if (children.length <= this.permits) return ours.node;
      await waitFor(changed.fired, signal, mutex, this.path);
    }
  }

  /** kazoo: our lease znode only while fewer than `permits` exist; then it is ours if it exists. */
  private async kazooLease(mutex: Lock, signal: AbortSignal, ours: { node: string | null }): Promise<string> {
    const node = `${this.path}/${randomUUID().replaceAll("-", "")}`;
    ours.node = node;
    for (;;) {
      const changed = childWatch();
      const children = await this.zk.getChildren(this.path, changed.watcher);
      if (children.length < this.permits) {
        try {
          await this.zk.create(node, this.id, { mode: CreateMode.EPHEMERAL });
        } catch (e) {
          if (!isZooKeeperError(e, ErrorCode.NODEEXISTS)) throw e;
        }
      }
      if ((await this.zk.exists(node)) !== null) return node;
      await waitFor(changed.fired, signal, mutex, this.path);
    }
  }

  /** kazoo's max_leases: set when we make the path, else the stored number (when it is one) must be `permits`. */
  private checkKazooPath(): Promise<void> {
    this.checked ??= (async () => {
      try {
        await this.zk.create(this.path, String(this.permits), { createParents: true });
        return;
      } catch (e) {
        if (!isZooKeeperError(e, ErrorCode.NODEEXISTS)) throw e;
      }
      const { data } = await this.zk.getData(this.path);
      const text = data ? new TextDecoder().decode(data).trim() : "";
      const stored = /^[+-]?\d+$/.test(text) ? Number(text) : undefined; // kazoo ignores data that is not a number
      if (stored !== undefined && stored !== this.permits) {
        throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `permits ${this.permits} differ from the max_leases ${stored} stored at the semaphore path`, { op: "acquire", path: this.path });
      }
    })();
    const job = this.checked;
    job.catch(() => {
      if (this.checked === job) this.checked = null; // checked again by the next acquire
    });
    return job;
  }
}

/** A one-shot children watch and the promise it resolves. */
function childWatch(): { watcher: Watcher; fired: Promise<void> } {
  let fire!: () => void;
  const fired = new Promise<void>((r) => (fire = r));
  return { watcher: () => fire(), fired };
}

/** Waits for the lease children to change; rejects on abort, and with CONNECTIONLOSS when the mutex is lost meanwhile. */
function waitFor(changed: Promise<void>, signal: AbortSignal, mutex: Lock, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (): void => {
      signal.removeEventListener("abort", onAbort);
      mutex.off("lost", onLost);
    };
    const onAbort = (): void => (done(), reject(signal.reason));
    const onLost = (reason: LockLostReason): void => (done(), reject(new ZooKeeperError(ErrorCode.CONNECTIONLOSS, `the semaphore's mutex was lost (${reason})`, { op: "acquire", path })));
    if (signal.aborted) return onAbort();
    if (!mutex.isHeld) return onLost("disconnected");
    signal.addEventListener("abort", onAbort, { once: true });
    mutex.on("lost", onLost);
    void changed.then(() => (done(), resolve()));
  });
}

/** A held lease: lost at the first doubt (a disconnect, its znode deleted, the session ended), like a Lock. */
class HeldLease extends TypedEventEmitter<SemaphoreLeaseEvents> implements SemaphoreLease {
  readonly path: string;
  private readonly zk: ZooKeeper;
  private readonly trust: Trust;
  private held = true;
  private ended: Promise<void> | null = null;

  private constructor(zk: ZooKeeper, path: string) {
    super();
    this.zk = zk;
    this.path = path;
    this.trust = new Trust(zk, "disconnected");
  }

  /** Watches the lease znode and the session; CONNECTIONLOSS when the link or the znode is already in doubt. */
  static async take(zk: ZooKeeper, path: string): Promise<HeldLease> {
    const lease = new HeldLease(zk, path);
    const stat = await zk.exists(path, lease.onNode);
    if (stat === null || zk.state !== "connected") throw new ZooKeeperError(ErrorCode.CONNECTIONLOSS, "the lease was in doubt before it was handed out", { op: "acquire", path });
    zk.on("state", lease.onState);
    zk.on("closing", lease.onClosing);
    return lease;
  }

  get isHeld(): boolean {
    return this.held && this.trust.valid;
  }

  async release(): Promise<void> {
    this.end();
    await this.ended;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  private end(): boolean {
    if (!this.held) return false;
    this.held = false;
    this.zk.off("state", this.onState);
    this.zk.off("closing", this.onClosing);
    this.ended = deleteNode(this.zk, this.path).catch(() => {}); // after a disconnect: once we are back
    return true;
  }

  private lose(reason: LeaseLostReason): void {
    if (this.end()) emitIsolated(this.zk, this, "SemaphoreLease", "lost", reason);
  }

  private readonly onNode: Watcher = (event: WatchedEvent) => {
    if (!this.held || event.type === EventType.None) return;
    if (event.type === EventType.NodeDeleted) return this.lose("deleted");
    void this.zk.exists(this.path, this.onNode).catch(() => {}); // another change: keep watching
  };

  private readonly onState = (state: SessionState): void => {
    if (state === "connected") return;
    this.lose(state === "expired" ? "expired" : TERMINAL.has(state) ? "closed" : "disconnected");
  };

  private readonly onClosing = (): void => this.lose("closed");
}
