// Barriers, on the layouts of Curator and kazoo:
//   Barrier        Curator DistributedBarrier, kazoo Barrier: the barrier is up while its znode exists.
//   DoubleBarrier  Curator DistributedDoubleBarrier (`naming: "curator"`: participants `path/<uuid>`) and kazoo
//                  DoubleBarrier (`naming: "kazoo"`: participants `path/<uuid hex>`), each an ephemeral holding
//                  the member's id; `path/ready` (persistent) appears once `size` participants are in.
// Waiting is watch-driven: each read that finds nothing to return leaves a watch, and the wait goes on at the
// next notification or the next "connected" (changes made while the link was down are read then).
import { randomUUID } from "node:crypto";
import type { SessionState, TimerHandle, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, isZooKeeperError } from "../client/index.ts";
import { CreateMode, ErrorCode, EventType, WatcherType } from "../protocol/constants.ts";
import { RecipeStateError } from "./errors.ts";
import { checkRecipePath } from "./options.ts";
import { TERMINAL, afterConnectionLoss, deleteNode, endedSession } from "./reconnects.ts";
import { Serial } from "./serial.ts";

/** Options of a wait: an abort signal and a timeout (ms). */
export interface BarrierWaitOptions {
  /** Aborting rejects the wait with the signal's reason. */
  signal?: AbortSignal;
  /** Rejects with BarrierTimeoutError after this many ms (on the client's clock). */
  timeout?: number;
}

/** Rejects a barrier wait (`Barrier.wait`, `DoubleBarrier.enter`/`leave`) that did not end in time (code OPERATIONTIMEOUT). */
export class BarrierTimeoutError extends ZooKeeperError {
  /** The timeout that passed, ms. */
  readonly timeout: number;

  /** Made by the wait; `op` is the method, `path` the barrier's path. */
  constructor(path: string, op: string, timeout: number) {
    super(ErrorCode.OPERATIONTIMEOUT, `barrier ${op} did not complete within ${timeout} ms`, { op, path });
    this.name = "BarrierTimeoutError";
    this.timeout = timeout;
  }
}

/** What one look at the tree found: `done` ends the wait; otherwise it goes on at the next poke. */
type Look<T> = { done: true; value: T } | { done: false };
const WAIT: Look<never> = { done: false };

/**
 * Runs `look` until it is done: again at once when a poke came while it ran, else at the next poke (a watch of
 * `look`'s firing, or the session connected again). A lost link waits for the session to come back; a timeout,
 * an abort or the end of the session rejects.
 */
async function watchLoop<T>(
  zk: ZooKeeper,
  path: string,
  op: string,
  options: BarrierWaitOptions | undefined,
  make: (poke: () => void) => () => Promise<Look<T>>,
): Promise<T> {
  const { signal, timeout } = options ?? {};
  if (timeout !== undefined && (typeof timeout !== "number" || !(timeout >= 0))) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "timeout must be a number of ms >= 0", { op, path });
  }
  if (signal?.aborted) throw signal.reason;
  if (TERMINAL.has(zk.state)) throw endedSession(zk.state, op, path);
  let poked = false;
  let wake: (() => void) | null = null;
  const poke = (): void => {
    poked = true;
    const w = wake;
    wake = null;
    w?.();
  };
  let stop!: (e: unknown) => void;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  stopped.catch(() => {});
  const onState = (state: SessionState): void => {
    if (state === "connected") poke();
    else if (TERMINAL.has(state)) stop(endedSession(state, op, path));
  };
  const onAbort = (): void => stop(signal!.reason);
  let timer: TimerHandle | undefined;
  zk.on("state", onState);
  signal?.addEventListener("abort", onAbort, { once: true });
  if (timeout !== undefined) timer = zk.clock.setTimeout(() => stop(new BarrierTimeoutError(path, op, timeout)), timeout);
  const look = make(poke);
  try {
    for (;;) {
      poked = false;
      let found: Look<T>;
      try {
        found = await Promise.race([look(), stopped]);
      } catch (e) {
        if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
        await Promise.race([afterConnectionLoss(zk), stopped]);
        continue;
      }
      if (found.done) return found.value;
      if (!poked) await Promise.race([new Promise<void>((r) => (wake = r)), stopped]);
    }
  } finally {
    zk.off("state", onState);
    signal?.removeEventListener("abort", onAbort);
    if (timer !== undefined) zk.clock.clearTimeout(timer);
  }
}

/** Drops a data watch nobody waits on any more (servers 3.5+; elsewhere it fires once, unheard). */
function dropWatch(zk: ZooKeeper, path: string, watcher: Watcher): void {
  if (zk.state === "connected") void zk.removeWatches(path, watcher, WatcherType.Data).catch(() => {});
}

/**
 * A barrier (Curator DistributedBarrier, kazoo Barrier): it is up while its znode exists. `set()` raises it,
 * `remove()` lowers it, `wait()` resolves once it is down. Errors are ZooKeeperErrors: BADARGUMENTS for bad
 * arguments, BarrierTimeoutError, and what the client rejects with.
 */
export class Barrier {
  /** The barrier's znode path. */
  readonly path: string;
  private readonly zk: ZooKeeper;

  /** Prepares a barrier; nothing is sent before a call. Throws BADARGUMENTS for an invalid path. */
  constructor(zk: ZooKeeper, path: string) {
    checkRecipePath(path, "barrier", "Barrier");
    this.zk = zk;
    this.path = path;
  }

  /** Raises the barrier: creates its znode (persistent; parents as containers) unless it exists. Retried across a lost link. */
  async set(): Promise<void> {
    for (;;) {
      try {
        await this.zk.create(this.path, null, { createParents: true });
        return;
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.NODEEXISTS)) return;
        if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
        await afterConnectionLoss(this.zk);
      }
    }
  }

  /** Lowers the barrier: deletes its znode if it exists. Retried across a lost link. */
  async remove(): Promise<void> {
    if (TERMINAL.has(this.zk.state)) throw endedSession(this.zk.state, "remove", this.path);
    await deleteNode(this.zk, this.path);
  }

  /** True while the barrier's znode exists. */
  async isSet(): Promise<boolean> {
    return (await this.zk.exists(this.path)) !== null;
  }

  /**
   * Resolves once the barrier is down: its znode is missing, or a deletion of it was seen (a NodeDeleted event,
   * or a znode created anew, another czxid, found after a lost link), so a removal followed by a new `set()`
   * while this client was cut off still ends the wait. Rejects with BarrierTimeoutError, the signal's reason,
   * or when the session ends.
   */
  wait(options?: BarrierWaitOptions): Promise<void> {
    let watcher: Watcher | null = null;
    return watchLoop<void>(this.zk, this.path, "wait", options, (poke) => {
      let deleted = false;
      let first: bigint | undefined;
      const w: Watcher = (event: WatchedEvent) => {
        if (event.type === EventType.NodeDeleted) deleted = true;
        if (event.type !== EventType.None) poke();
      };
      watcher = w;
      return async () => {
        if (deleted) return { done: true, value: undefined };
        const stat = await this.zk.exists(this.path, w);
        if (stat === null || (first !== undefined && stat.czxid !== first)) return { done: true, value: undefined };
        first ??= stat.czxid;
        return deleted ? { done: true, value: undefined } : WAIT;
      };
    }).finally(() => {
      if (watcher !== null) dropWatch(this.zk, this.path, watcher);
    });
  }
}

/** Whose double-barrier layout to speak: participants named `<uuid>` (Curator) or `<uuid hex>` (kazoo). */
export type DoubleBarrierNaming = "curator" | "kazoo";

/** Options of a DoubleBarrier. */
export interface DoubleBarrierOptions {
  /** How many participants must be in before `enter()` resolves (a threshold: more may enter). */
  size: number;
  /** Stored in our participant znode (UTF-8), as kazoo stores its identifier (default ""). */
  id?: string;
  /** Whose layout to speak (default "curator"); the only difference that matters: kazoo deletes `ready` as the first participant starts to leave, Curator as the last one is done. */
  naming?: DoubleBarrierNaming;
}

const READY = "ready";

/**
 * A double barrier (Curator DistributedDoubleBarrier, kazoo DoubleBarrier): `enter()` resolves once `size`
 * participants have entered, `leave()` once every participant has left. Each participant is an ephemeral
 * znode under the path; the first to count `size` of them creates `path/ready`. Errors are ZooKeeperErrors:
 * BADARGUMENTS for bad arguments, BarrierTimeoutError, RecipeStateError (APIERROR) for a call out of turn,
 * and what the client rejects with.
 */
export class DoubleBarrier {
  /** The barrier's znode path. */
  readonly path: string;
  /** How many participants `enter()` waits for. */
  readonly size: number;
  /** The id stored in our participant znode. */
  readonly id: string;
  /** The layout in use. */
  readonly naming: DoubleBarrierNaming;
  private readonly zk: ZooKeeper;
  private readonly serial = new Serial();
  private phase: "out" | "entering" | "in" | "leaving" = "out";
  private ours: string | null = null;

  /** Prepares a participant; nothing is sent before `enter()`. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: DoubleBarrierOptions) {
    checkRecipePath(path, "barrier", "DoubleBarrier");
    const bad = (message: string): ZooKeeperError => new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op: "DoubleBarrier", path });
    if (!options || !Number.isSafeInteger(options.size) || options.size < 1) throw bad("options.size must be an integer >= 1");
    if (options.id !== undefined && typeof options.id !== "string") throw bad("options.id must be a string");
    const naming = options.naming ?? "curator";
    if (naming !== "curator" && naming !== "kazoo") throw bad(`naming must be "curator" or "kazoo"`);
    this.zk = zk;
    this.path = path;
    this.size = options.size;
    this.id = options.id ?? "";
    this.naming = naming;
  }

  /** Our participant znode while entered (or entering), else null. */
  get nodePath(): string | null {
    return this.ours;
  }

  /**
   * Creates our participant znode and resolves once `size` participants have entered (`path/ready` exists, or
   * was created while we waited). On a timeout, an abort or an error our znode is deleted before the
   * rejection. RecipeStateError unless out of the barrier.
   */
  enter(options?: BarrierWaitOptions): Promise<void> {
    if (this.phase !== "out") return Promise.reject(new RecipeStateError(this.path, "enter", `enter() while ${this.phase}`));
    this.phase = "entering";
    const name = this.naming === "curator" ? randomUUID() : randomUUID().replaceAll("-", "");
    const ours = `${this.path}/${name}`;
    const ready = `${this.path}/${READY}`;
    this.ours = ours;
    let watcher: Watcher | null = null;
    return this.serial.run(() =>
      watchLoop<void>(this.zk, this.path, "enter", options, (poke) => {
        let created = false;
        let readySeen = false;
        const w: Watcher = (event: WatchedEvent) => {
          if (event.type === EventType.NodeCreated) readySeen = true; // kazoo and Curator alike: a creation seen is entry, even if it is gone again
          if (event.type !== EventType.None) poke();
        };
        watcher = w;
        return async () => {
          if (!created) created = await this.createOurs(ours);
          if (readySeen || (await this.zk.exists(ready, w)) !== null) return { done: true, value: undefined };
          const participants = (await this.zk.getChildren(this.path)).filter((c) => c !== READY);
          if (!participants.includes(name)) {
            created = false; // deleted by someone while our session lives: stand again
            poke();
            return WAIT;
          }
          if (participants.length < this.size) return WAIT;
          await this.zk.create(ready, null).catch((e: unknown) => (isZooKeeperError(e, ErrorCode.NODEEXISTS) ? "" : Promise.reject(e)));
          return { done: true, value: undefined };
        };
      }).then(
        () => {
          if (watcher !== null) dropWatch(this.zk, ready, watcher);
          this.phase = "in";
        },
        async (e: unknown) => {
          if (watcher !== null) dropWatch(this.zk, ready, watcher);
          await deleteNode(this.zk, ours).catch(() => {});
          this.ours = null;
          this.phase = "out";
          throw e;
        },
      ),
    );
  }

  /**
   * Deletes our participant znode and resolves once every participant's znode is gone (each waits on the
   * highest one left). `naming: "kazoo"` deletes `path/ready` first, `"curator"` once all are gone.
   * On a timeout our znode is already deleted: we are out, the others may not be. RecipeStateError unless entered.
   */
  leave(options?: BarrierWaitOptions): Promise<void> {
    const ours = this.ours;
    if (this.phase !== "in" || ours === null) return Promise.reject(new RecipeStateError(this.path, "leave", `leave() while ${this.phase}`));
    this.phase = "leaving";
    const name = ours.slice(this.path.length + 1);
    const ready = `${this.path}/${READY}`;
    let watched: { path: string; watcher: Watcher } | null = null;
    return this.serial.run(async () => {
      try {
        if (this.naming === "kazoo") await deleteNode(this.zk, ready);
        await watchLoop<void>(this.zk, this.path, "leave", options, (poke) => {
          let oursGone = false;
          const w: Watcher = (event: WatchedEvent) => {
            if (event.type !== EventType.None) poke();
          };
          return async () => {
            let children: string[];
            try {
              children = await this.zk.getChildren(this.path);
            } catch (e) {
              if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
              children = [];
            }
            const participants = children.filter((c) => c !== READY).sort();
            const others = participants.filter((c) => c !== name);
            if (!oursGone) {
              await deleteNode(this.zk, ours);
              oursGone = true;
            }
            if (others.length === 0) return { done: true, value: undefined };
            const highest = `${this.path}/${others[others.length - 1]}`;
            if (watched !== null && watched.path !== highest) dropWatch(this.zk, watched.path, watched.watcher);
            watched = { path: highest, watcher: w };
            if ((await this.zk.exists(highest, w)) === null) poke(); // gone already: look again at once
            return WAIT;
          };
        });
        if (this.naming === "curator") await deleteNode(this.zk, ready);
      } finally {
        const last = watched as { path: string; watcher: Watcher } | null;
        if (last !== null) dropWatch(this.zk, last.path, last.watcher);
        this.ours = null;
        this.phase = "out";
      }
    });
  }

  /** Creates our ephemeral participant znode (parents as containers), or accepts it when a lost reply had created it. */
  private async createOurs(ours: string): Promise<true> {
    try {
      await this.zk.create(ours, this.id, { mode: CreateMode.EPHEMERAL, createParents: true });
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.NODEEXISTS)) throw e;
      const stat = await this.zk.exists(ours);
      if (stat === null) return this.createOurs(ours);
      if (stat.ephemeralOwner !== this.zk.sessionId) throw new ZooKeeperError(ErrorCode.NODEEXISTS, "our participant znode belongs to another session", { op: "enter", path: ours });
    }
    return true;
  }
}
