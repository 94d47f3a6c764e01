// The helpers users reach for first (kazoo's ensure_path / delete(recursive=True), Curator's
// creatingParentsIfNeeded / deletingChildrenIfNeeded), on the client's public operations only:
// creating missing parents, deleting a subtree bottom-up in bounded multi batches, and retrying
// idempotent calls across connection loss.
import { CreateMode, ErrorCode } from "../protocol/constants.ts";
import type { ACL } from "../protocol/records.ts";
import { OutcomeUnknownError, ZooKeeperError, badArguments, isZooKeeperError } from "./errors.ts";
import { READS, resendable } from "./outcome.ts";
import { Op } from "./multi-ops.ts";
import type { OpResult } from "./types.ts";
import { type Clock, systemClock } from "./clock.ts";
import { compositeSignal } from "./abort.ts";

/** The slice of the client the helpers use (ZooKeeper implements it). */
export interface HelperClient {
  create(path: string, data?: null, options?: { mode?: number; acl?: ACL[]; signal?: AbortSignal }): Promise<string>;
  exists(path: string, watcher?: undefined, options?: { signal?: AbortSignal }): Promise<unknown>;
  getChildren(path: string, watcher?: undefined, options?: { signal?: AbortSignal }): Promise<string[]>;
  multi(ops: readonly Op[], options?: { signal?: AbortSignal }): Promise<OpResult[]>;
}

// Clients whose server cannot take a container create (3.4): parents are persistent there. The client
// refuses such a create locally with UNIMPLEMENTED (zk.serverFeatures), so learning this sends nothing.
const noContainers = new WeakSet<object>();

/**
 * Creates the missing ancestors of `path` (not `path` itself): containers where the server has them
 * (reaped by the server once their last child goes), else persistent. Nodes that exist already, or
 * that a concurrent creator makes first, are fine.
 */
async function ensureParents(zk: HelperClient, path: string, acl: ACL[], signal?: AbortSignal): Promise<void> {
  const parts = path.split("/").filter(Boolean);
  let current = "";
  for (const part of parts.slice(0, -1)) {
    current += `/${part}`;
    for (;;) {
      const mode = noContainers.has(zk) ? CreateMode.PERSISTENT : CreateMode.CONTAINER;
      try {
        await zk.create(current, null, { mode, acl, signal });
        break;
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.NODEEXISTS)) break;
        if (mode === CreateMode.CONTAINER && isZooKeeperError(e, ErrorCode.UNIMPLEMENTED)) {
          noContainers.add(zk);
          continue;
        }
        // The server checks the parent's CREATE permission before existence: an existing node may say NOAUTH.
        if (isZooKeeperError(e, ErrorCode.NOAUTH) && (await zk.exists(current, undefined, { signal })) !== null) break;
        throw e;
      }
    }
  }
}

const PARENT_ATTEMPTS = 5;

/** Runs `create`; on NONODE makes the parents and tries again (a container parent may be reaped meanwhile). */
export async function createWithParents<T>(zk: HelperClient, path: string, acl: ACL[], signal: AbortSignal | undefined, create: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await create();
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.NONODE) || attempt >= PARENT_ATTEMPTS) throw e;
      await ensureParents(zk, path, acl, signal);
    }
  }
}

// Bytes of one delete op inside a multi request: MultiHeader (type, done, err) + path (length-prefixed) + version.
const enc = new TextEncoder();
const deleteOpBytes = (path: string): number => 9 + 4 + enc.encode(path).length + 4;
const FRAME_OVERHEAD = 64; // frame length, request header, the closing MultiHeader, and margin
const ROUNDS = 10;

/** Every node of the subtree at `root`, children before their parent; null when `root` does not exist. */
async function postOrder(zk: HelperClient, path: string, signal?: AbortSignal): Promise<string[] | null> {
  let children: string[];
  try {
    children = await zk.getChildren(path, undefined, { signal });
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return null; // vanished meanwhile
    throw e;
  }
  const base = path === "/" ? "" : path;
  const below = await Promise.all(children.sort().map((c) => postOrder(zk, `${base}/${c}`, signal)));
  return [...below.flatMap((b) => b ?? []), path];
}

const isRace = (e: unknown): boolean => isZooKeeperError(e, ErrorCode.NONODE) || isZooKeeperError(e, ErrorCode.NOTEMPTY);

/** Batches of delete ops whose multi request stays within `maxBytes`. */
function batches(paths: readonly string[], maxBytes: number): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let size = FRAME_OVERHEAD;
  for (const p of paths) {
    const n = deleteOpBytes(p);
    if (current.length > 0 && size + n > maxBytes) {
      out.push(current);
      current = [];
      size = FRAME_OVERHEAD;
    }
    current.push(p);
    size += n;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * Deletes `root` and everything below it, deepest first, in multi batches of at most `maxBytes`.
 * A batch that meets a node deleted meanwhile (NONODE) or a child created meanwhile (NOTEMPTY) applied
 * nothing (a multi is atomic): the ops before the failed one are sent again on their own, the remaining
 * tree is read again and the deletion resumed. It gives up
 * (with that error) only after ROUNDS rounds in a row that deleted nothing. NONODE only when `root`
 * never existed during the call.
 */
export async function deleteTree(zk: HelperClient, root: string, maxBytes: number, signal?: AbortSignal): Promise<void> {
  if (root === "/") throw badArguments("the root node cannot be deleted", "deleteRecursive", root);
  // postOrder reads every level's children at once: one listener on the caller's signal for them all.
  return compositeSignal(signal, (inner) => deleteAll(zk, root, maxBytes, inner));
}

async function deleteAll(zk: HelperClient, root: string, maxBytes: number, signal?: AbortSignal): Promise<void> {
  let existed = false;
  for (let idle = 0; ; ) {
    const nodes = await postOrder(zk, root, signal);
    if (nodes === null) {
      if (existed) return; // someone else finished it
      throw new ZooKeeperError(ErrorCode.NONODE, undefined, { op: "deleteRecursive", path: root });
    }
    existed = true;
    let deleted = 0;
    try {
      for (const batch of batches(nodes, maxBytes)) {
        try {
          await zk.multi(batch.map((p) => Op.delete(p)), { signal });
          deleted += batch.length;
        } catch (e) {
          // The ops before the one that failed would have applied: delete those, then read again.
          const failed = e instanceof ZooKeeperError ? (e.results?.findIndex((r) => r.type === "error" && r.code !== ErrorCode.OK) ?? -1) : -1;
          if (failed > 0 && isRace(e)) {
            await zk.multi(batch.slice(0, failed).map((p) => Op.delete(p)), { signal }).then(() => (deleted += failed), () => {});
          }
          throw e;
        }
      }
      return;
    } catch (e) {
      idle = deleted > 0 ? 0 : idle + 1;
      if (!isRace(e) || idle >= ROUNDS) throw e;
    }
  }
}

/** How `withRetry` retries: attempts, backoff bounds (full jitter) and a signal to stop. */
export interface RetryOptions {
  /** Retries after the first attempt (default 5). */
  retries?: number;
  /** First backoff ceiling, ms (default 100); doubles per retry. */
  baseDelay?: number;
  /** Largest backoff, ms (default 10000). */
  maxDelay?: number;
  /** Stops retrying: rejects with the signal's reason (and is handed to `fn`). */
  signal?: AbortSignal;
  /** The backoff's timers (default `systemClock`; pass `zk.clock` to wait on the client's clock). */
  clock?: Clock;
}

const RETRYABLE = new Set<number>([ErrorCode.CONNECTIONLOSS, ErrorCode.OPERATIONTIMEOUT]);

function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => (clock.clearTimeout(timer), reject(signal!.reason));
    const timer = clock.setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** A write that was sent and lost its reply: it may have been applied. */
const mayHaveApplied = (e: unknown): boolean => e instanceof ZooKeeperError && e.sent === true && !(e.op !== undefined && READS.has(e.op));

/**
 * Why `withRetry` gives up: the last error, unless a write it sent may have applied and nothing after told
 * whether it did; then an OutcomeUnknownError carrying every attempt.
 */
function giveUp(errors: readonly unknown[]): unknown {
  const last = errors[errors.length - 1];
  if (last instanceof OutcomeUnknownError || !errors.some(mayHaveApplied)) return last;
  const first = errors.find(mayHaveApplied) as ZooKeeperError;
  const why = errors.length === 1 ? "it was sent and its reply lost, and it is not safe to send again" : `an attempt was sent and its reply lost, and the ${errors.length - 1} after it did not tell whether it was applied`;
  return new OutcomeUnknownError(errors, why, { op: first.op, path: first.path });
}

/**
 * Runs `fn` and retries it after CONNECTIONLOSS or OPERATIONTIMEOUT, with "full jitter" exponential backoff (a
 * random wait in [0, min(maxDelay, baseDelay·2^n)]). Every other error, SESSIONEXPIRED included (also what every
 * call of a closed client rejects with), is thrown at once.
 *
 * It never reports a write as failed when it may have happened. A call that was never sent (`e.sent === false`)
 * is retried whatever it is. A read is retried. A write whose reply was lost is retried only where the client can
 * judge it when it is sent again — a versioned `setData` or `delete`, a create that is not sequential: a refusal the first attempt could have caused (BADVERSION, NODEEXISTS, NONODE) is checked by reading
 * the node back and becomes the success it was, or OutcomeUnknownError. Any other lost write (a sequential create,
 * an unversioned setData or delete, a multi, setACL...) is not sent again: it rejects with OutcomeUnknownError at once. So
 * a rejection is OutcomeUnknownError exactly when a write `fn` sent may have been applied; any other error means
 * no write of `fn`'s happened (as far as the calls it awaited tell).
 */
export async function withRetry<T>(fn: (attempt: { attempt: number; signal?: AbortSignal }) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const num = (name: "retries" | "baseDelay" | "maxDelay", dflt: number): number => {
    const v = options[name] ?? dflt;
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw badArguments(`${name} must be a non-negative number`, "withRetry");
    return v;
  };
  if (typeof fn !== "function") throw badArguments("withRetry takes a function", "withRetry");
  const retries = Math.floor(num("retries", 5));
  const base = num("baseDelay", 100);
  const max = num("maxDelay", 10_000);
  const { signal } = options;
  const errors: unknown[] = [];
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await fn({ attempt, signal });
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      errors.push(e);
      const again = e instanceof ZooKeeperError && !(e instanceof OutcomeUnknownError) && RETRYABLE.has(e.code) && (e.sent !== true || resendable(e));
      if (!again || attempt >= retries) throw giveUp(errors);
      await sleep(options.clock ?? systemClock, Math.random() * Math.min(max, base * 2 ** attempt), signal);
    }
  }
}
