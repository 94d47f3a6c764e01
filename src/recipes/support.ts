// Small helpers the recipes share: a one-at-a-time job queue, waiters, a holder's lease, a guarded run and session-aware retries.
import type { Clock, ListenerSource, SessionState, TimerHandle, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";
import * as dc from "node:diagnostics_channel";
import { type ElectionProtocol, type Naming, electionNaming } from "./naming.ts";

/** What `zookeeper-ts:election` and `zookeeper-ts:lock` carry (docs/observability.md). */
interface RecipeMessage {
  path: string;
  id: string;
  event: "elected" | "revoked" | "acquired" | "lost" | "released";
  reason?: string;
  /** The fencing token, decimal. */
  token?: string;
}

const recipeChannels = { election: dc.channel("zookeeper-ts:election"), lock: dc.channel("zookeeper-ts:lock") };

/** Publishes a recipe's leadership or lock change on its diagnostics channel; `message` is built only when subscribed. */
export function publishRecipe(kind: "election" | "lock", message: () => RecipeMessage): void {
  const ch = recipeChannels[kind];
  if (ch.hasSubscribers) ch.publish(message());
}

/** Runs jobs one after another, so checks, resigns and closes never interleave. */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.catch(() => {});
    return result;
  }
}

/** Promises waiting for an outcome (e.g. leadership), each with an optional abort signal and timeout. */
export class Waiters {
  private readonly set = new Set<{ resolve(): void; reject(e: unknown): void }>();
  private readonly clock: Clock;

  /** Timeouts run on `clock` (the client's, `zk.clock`). */
  constructor(clock: Clock) {
    this.clock = clock;
  }

  wait(signal: AbortSignal | undefined, timeoutMs: number | undefined, timeoutError: () => Error): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const done = (): void => {
        this.set.delete(waiter);
        if (timer !== undefined) this.clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const waiter = {
        resolve: () => (done(), resolve()),
        reject: (e: unknown) => (done(), reject(e)),
      };
      const onAbort = (): void => waiter.reject(signal!.reason);
      this.set.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) timer = this.clock.setTimeout(() => waiter.reject(timeoutError()), timeoutMs);
    });
  }

  resolveAll(): void {
    for (const w of [...this.set]) w.resolve();
  }

  rejectAll(error: unknown): void {
    for (const w of [...this.set]) w.reject(error);
  }
}

export const TERMINAL: ReadonlySet<SessionState> = new Set(["expired", "closed", "authFailed"]);

/**
 * How long the holder of a lock or a leadership may trust its session (`zk.heardWithin`): until "disconnected",
 * while connected and a request the server answered was sent within the read timeout (2/3 of the session
 * timeout); until "expired", while the session lives and within 90% of the session timeout. A process
 * resuming from a pause reads false before any timer or socket callback has run.
 */
export class Lease {
  private readonly zk: ZooKeeper;
  private readonly until: "disconnected" | "expired";
  private timer: TimerHandle | null = null;

  constructor(zk: ZooKeeper, until: "disconnected" | "expired") {
    this.zk = zk;
    this.until = until;
  }

  get valid(): boolean {
    if (this.until === "disconnected") return this.zk.state === "connected" && this.zk.heardWithin(this.ms);
    return !TERMINAL.has(this.zk.state) && this.zk.heardWithin(this.ms);
  }

  private get ms(): number {
    return this.until === "disconnected" ? this.zk.readTimeout : this.zk.negotiatedTimeout * 0.9;
  }

  /** Calls `lapsed` when the lease may have run out (on zk.clock); `arm(null)` disarms. */
  arm(lapsed: (() => void) | null): void {
    if (this.timer !== null) this.zk.clock.clearTimeout(this.timer);
    this.timer = lapsed === null ? null : this.zk.clock.setTimeout(lapsed, this.zk.leaseRemaining(this.ms));
  }
}

/** Runs `fn` with a signal that aborts at the first loss `subscribe` reports, or at once when `held()` is already false. */
export async function runHeld<T>(
  fn: (signal: AbortSignal) => Promise<T> | T,
  what: string,
  held: () => boolean,
  subscribe: (lost: (reason: string) => void) => () => void,
): Promise<T> {
  const ac = new AbortController();
  const lost = (reason: string): void => ac.abort(new Error(`${what}: ${reason}`, { cause: reason }));
  const unsubscribe = subscribe(lost);
  try {
    if (!held()) lost("disconnected");
    return await fn(ac.signal);
  } finally {
    unsubscribe();
  }
}

/** Throws BADARGUMENTS unless `path` is an absolute znode path (not "/", no trailing "/"). */
export function checkRecipePath(path: unknown, what: string, op: string): asserts path is string {
  if (typeof path !== "string" || !path.startsWith("/") || path.length < 2 || path.endsWith("/")) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `the ${what} path must be an absolute znode path`, { op, path: String(path) });
  }
}

/** A recipe's background failure, as an "error" event when someone listens (isolated like every recipe event). */
export function reportError(zk: ZooKeeper, recipe: ListenerSource & { listenerCount(event: "error"): number }, name: string, e: unknown): void {
  if (recipe.listenerCount("error") > 0) emitIsolated(zk, recipe, name, "error", e instanceof Error ? e : new Error(String(e)));
}

/** A LeaderElection's options, checked (BADARGUMENTS, naming the first bad one) and completed with their defaults. */
export function electionOptions(
  path: string,
  options: { id?: unknown; revokeOn?: unknown; protocol?: unknown } | undefined,
): { id: string; revokeOn: "disconnected" | "expired"; protocol: ElectionProtocol; naming: Naming } {
  const bad = (message: string): ZooKeeperError => new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op: "LeaderElection", path });
  if (!options || typeof options.id !== "string") throw bad("options.id must be a string");
  const revokeOn = options.revokeOn === undefined ? "disconnected" : options.revokeOn;
  if (revokeOn !== "disconnected" && revokeOn !== "expired") throw bad(`revokeOn must be "disconnected" or "expired"`);
  const protocol = (options.protocol ?? "curator-latch") as ElectionProtocol;
  const naming = electionNaming(protocol);
  if (!naming) throw bad(`protocol must be "curator-latch", "curator-selector" or "kazoo"`);
  return { id: options.id, revokeOn, protocol, naming };
}

/**
 * The error of a recipe call on a session that has ended, as the client gives it: SESSIONEXPIRED for an expired
 * or closed client (never retried by withRetry), AUTHFAILED after refused credentials; CONNECTIONLOSS otherwise.
 */
export function endedSession(state: SessionState, op: string, path?: string): ZooKeeperError {
  if (state === "expired") return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the session has expired; connect a new client", { op, path });
  if (state === "closed") return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the client is closed (close() was called); connect a new client", { op, path });
  if (state === "authFailed") return new ZooKeeperError(ErrorCode.AUTHFAILED, "authentication failed; the client is finished", { op, path });
  return new ZooKeeperError(ErrorCode.CONNECTIONLOSS, `the session is ${state}`, { op, path });
}

/** Resolves once the session is connected (read-write); rejects when it has ended. */
export function untilConnected(zk: ZooKeeper): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = (state: SessionState): boolean => {
      if (state === "connected") resolve();
      else if (TERMINAL.has(state)) {
        reject(endedSession(state, "recipe"));
      } else return false;
      return true;
    };
    if (check(zk.state)) return;
    const listener = (state: SessionState): void => {
      if (check(state)) zk.off("state", listener);
    };
    zk.on("state", listener);
  });
}

/**
 * After a CONNECTIONLOSS: waits for the session to be connected again. The session reads "disconnected"
 * before a call fails with CONNECTIONLOSS, so one that still reads "connected" is being closed (close()
 * shows the state before it until the end): its next state is the end, and a retry loop never spins.
 */
export async function afterConnectionLoss(zk: ZooKeeper): Promise<void> {
  if (zk.state === "connected") await new Promise<void>((r) => zk.once("state", () => r()));
  await untilConnected(zk);
}

/** Deletes a node, retrying across reconnects; done when it is gone or the session (and so its ephemerals) ended. */
export async function deleteNode(zk: ZooKeeper, path: string): Promise<void> {
  for (;;) {
    try {
      await zk.delete(path);
      return;
    } catch (e) {
      if (isZooKeeperError(e, ErrorCode.NONODE)) return;
      if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
      try {
        await afterConnectionLoss(zk);
      } catch {
        return;
      }
    }
  }
}

/** After a lost create reply: the child of `parent` whose name starts with `prefix`, if the create went through. */
export async function findProtected(zk: ZooKeeper, parent: string, prefix: string): Promise<string | null> {
  try {
    await zk.sync(parent); // the server we reached may lag the one that ran the create
    const name = (await zk.getChildren(parent)).find((c) => c.startsWith(prefix));
    return name === undefined ? null : `${parent}/${name}`;
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return null;
    throw e;
  }
}
