// Lost writes, and what a later attempt of the same write learns of them. A write that was sent and lost its
// reply may have been applied. When the same write is sent again (withRetry, a recipe, the application's own
// loop) and the server refuses it in a way the first attempt could have caused — BADVERSION for a versioned
// setData or delete, NODEEXISTS for a create — the refusal is not the answer: the node is read back and the
// first attempt judged from what is there. The zxid the session had seen when the loss was seen bounds it:
// everything the connection delivered came before the lost reply would have, so a write the lost attempt
// applied has a larger zxid, and a node whose data (or creation) is not newer than that was not its work.
import { CreateMode, ErrorCode } from "../protocol/constants.ts";
import type { Stat } from "../protocol/records.ts";
import { OutcomeUnknownError, ZooKeeperError } from "./errors.ts";
import type { Call } from "./wire/call-record.ts";

/** The body fields of the writes that can be judged (the call descriptor is the request body for these). */
interface WriteFields {
  data?: Uint8Array | null;
  version?: number;
  flags?: number;
}

type WriteCall = Call<unknown, unknown> & WriteFields;

/** A write that was sent and lost its reply, as the session saw it. */
export interface LostWrite {
  readonly op: "setData" | "delete" | "create" | "createWithStat";
  readonly path: string;
  readonly data: Uint8Array | null;
  readonly version: number;
  readonly flags: number;
  /** The caller said no other client writes these very bytes (WriteOptions.uniqueData). */
  readonly unique: boolean;
  /** The error its caller got (CONNECTIONLOSS or SESSIONEXPIRED, `sent: true`). */
  readonly error: ZooKeeperError;
  /** The session's last zxid when the loss was seen: a write the lost attempt applied has a larger one. */
  readonly seenZxid: bigint;
}

/** The node as a read-back found it (null: no such node). */
export type ReadBack = { data: Uint8Array | null; stat: Stat } | null;

/** What a read-back says of a lost attempt: it was applied, it was not, or nobody can tell. */
type Verdict = { kind: "applied" } | { kind: "refused" } | { kind: "unknown"; why: string };

/** Errors whose lost write was recorded, so that sending it again is safe (withRetry asks). */
const judged = new WeakSet<object>();

/** True when `e` is the loss of a write that a later attempt of the same write can resolve (or of a read). */
export function resendable(e: ZooKeeperError): boolean {
  return judged.has(e) || (e.op !== undefined && READS.has(e.op));
}

/** Calls that change nothing on the server: sending one again after a loss is always safe. */
export const READS: ReadonlySet<string> = new Set([
  "getData", "exists", "getChildren", "getChildren2", "getACL", "getAllChildrenNumber", "getEphemerals", "sync",
  "multiRead", "whoAmI", "getConfig",
]);

const isSequential = (flags: number): boolean =>
  flags === CreateMode.PERSISTENT_SEQUENTIAL || flags === CreateMode.EPHEMERAL_SEQUENTIAL || flags === CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL;

/** The LostWrite for `call`, when it is a write a read-back can judge. */
function describe(call: WriteCall, error: ZooKeeperError, seenZxid: bigint): LostWrite | null {
  const op = call.op;
  const path = call.path;
  if (path === undefined) return null;
  const data = call.data ?? null;
  if (op === "setData" || op === "delete") {
    // Unversioned, sending it again could apply it twice (over another client's write, or a node made since).
    if (typeof call.version !== "number" || call.version < 0) return null;
    return { op, path, data, version: call.version, flags: 0, unique: call.unique === true, error, seenZxid };
  }
  if (op === "create" || op === "createWithStat") {
    // Sequential creates make a new name each time: nothing to read back (the recipes find theirs by a prefix).
    if (typeof call.flags !== "number" || isSequential(call.flags)) return null;
    return { op, path, data, version: -1, flags: call.flags, unique: call.unique === true, error, seenZxid };
  }
  return null;
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  const x = a ?? EMPTY;
  const y = b ?? EMPTY;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}
const EMPTY = new Uint8Array(0);
const SAME_BYTES = "the node holds these bytes, written after the loss, but another client may have written the very same bytes (uniqueData: true says none does)";

/**
 * Judges `lost` from the node as read back after a later attempt of the same write was refused with `code`.
 * `sessionId` is the session's (an ephemeral node of ours names it as its owner).
 */
export function judge(lost: LostWrite, code: number, node: ReadBack, sessionId: bigint): Verdict {
  const seen = lost.seenZxid;
  if (lost.op === "setData" && code === ErrorCode.BADVERSION) {
    if (node === null) return { kind: "unknown", why: "the node was deleted since" };
    const s = node.stat;
    // Our write would be the node's latest data change or older than it; either way mzxid would be past `seen`.
    if (s.mzxid <= seen) return { kind: "refused" };
    if (s.version === lost.version + 1) {
      if (sameBytes(node.data, lost.data)) return lost.unique ? { kind: "applied" } : { kind: "unknown", why: SAME_BYTES };
      // Version v + 1 of the same node (created before the loss) holds other bytes: another writer moved v to v + 1.
      if (s.czxid <= seen) return { kind: "refused" };
      return { kind: "unknown", why: "the node was deleted and created again since" };
    }
    return { kind: "unknown", why: `the node is at version ${s.version} now; the write expected ${lost.version}, and later writes hide whether it moved the node to ${lost.version + 1}` };
  }
  if (lost.op === "delete" && code === ErrorCode.BADVERSION) {
    // The node the first attempt would have deleted, created before it was sent, is still there: it was not deleted.
    if (node !== null && node.stat.czxid <= seen) return { kind: "refused" };
    return { kind: "unknown", why: "the node was created again since" };
  }
  if ((lost.op === "create" || lost.op === "createWithStat") && code === ErrorCode.NODEEXISTS) {
    if (node === null) return { kind: "unknown", why: "the node was deleted since" };
    const s = node.stat;
    if (s.czxid <= seen) return { kind: "refused" }; // it existed before the first attempt could have made it
    if (lost.flags === CreateMode.EPHEMERAL) {
      if (s.ephemeralOwner === sessionId) return { kind: "applied" };
      return { kind: "unknown", why: "another session's ephemeral node stands there now" };
    }
    if (s.version === 0 && sameBytes(node.data, lost.data)) return lost.unique ? { kind: "applied" } : { kind: "unknown", why: SAME_BYTES };
    return { kind: "unknown", why: "the node made since holds other data (or was changed since)" };
  }
  if (code === ErrorCode.NONODE) return { kind: "unknown", why: lost.op === "delete" ? "the node is gone, by this write or another" : "the node (or its parent) is gone since" };
  return { kind: "unknown", why: `a later attempt was refused with code ${code}` };
}

/** What the session's last zxid and id are (the Session). */
interface SessionView {
  readonly lastZxid: bigint;
  readonly sessionId: bigint;
}

/** How many lost writes a session remembers; the oldest is forgotten first. */
const REMEMBERED = 32;

/**
 * The session's lost writes: recorded as their loss is seen (call-record.ts Pending.onFail), looked up when the same
 * write is sent again. A later attempt that succeeds proves the first did not apply (the version, or the node's
 * absence, was still there) and forgets it.
 */
export class LostWrites {
  private readonly entries: LostWrite[] = [];
  private readonly session: SessionView;

  constructor(session: SessionView) {
    this.session = session;
  }

  get size(): number {
    return this.entries.length;
  }

  get sessionId(): bigint {
    return this.session.sessionId;
  }

  record(call: Call<unknown, unknown>, error: ZooKeeperError): void {
    const lost = describe(call as WriteCall, error, this.session.lastZxid);
    if (lost === null) return;
    judged.add(error);
    if (this.entries.length >= REMEMBERED) this.entries.shift();
    this.entries.push(lost);
  }

  /**
   * The earliest lost attempt of the very write `call` is (same op, path, version, mode and bytes), with every
   * later one taken out too: any of them may have applied, and the earliest has the smallest `seenZxid`, the
   * bound that holds for all of them.
   */
  take(call: Call<unknown, unknown>): LostWrite | null {
    const c = call as WriteCall;
    let first: LostWrite | null = null;
    for (let i = 0; i < this.entries.length; ) {
      const e = this.entries[i]!;
      const same =
        e.op === c.op && e.path === c.path &&
        (e.op === "setData" || e.op === "delete" ? e.version === c.version : e.flags === c.flags) &&
        (e.op === "delete" || sameBytes(e.data, c.data ?? null));
      if (!same) {
        i++;
        continue;
      }
      first ??= e;
      this.entries.splice(i, 1);
    }
    return first;
  }
}

/** Codes by which the server refuses a write that an earlier attempt of it could have caused. */
const AFTERMATH = new Set<number>([ErrorCode.BADVERSION, ErrorCode.NODEEXISTS, ErrorCode.NONODE]);

/** The value the write's caller gets when its lost attempt applied (what its reply would have carried). */
function appliedValue(lost: LostWrite, node: ReadBack): unknown {
  const stat = node?.stat;
  if (lost.op === "setData") return stat;
  if (lost.op === "createWithStat") return { path: lost.path, stat };
  return lost.path;
}

/**
 * Follows the outcome of `done`, a write sent while `lost` remembers writes: a success forgets the same write's
 * lost attempt; a refusal it could have caused is judged by reading the node back (`read`), and becomes the
 * success it was, stays the refusal it is, or becomes an OutcomeUnknownError carrying both attempts.
 */
export function follow<T>(done: Promise<T>, call: Call<unknown, unknown>, lost: LostWrites, read: (path: string) => Promise<ReadBack>): Promise<T> {
  const op = call.op;
  if (op !== "setData" && op !== "delete" && op !== "create" && op !== "createWithStat") return done;
  return done.then(
    (value) => {
      lost.take(call);
      return value;
    },
    async (e: unknown) => {
      if (!(e instanceof ZooKeeperError) || !AFTERMATH.has(e.code)) throw e;
      const first = lost.take(call);
      if (first === null) throw e;
      let node: ReadBack;
      try {
        node = await read(first.path);
      } catch (readError) {
        throw new OutcomeUnknownError([first.error, e, readError], `an earlier attempt was sent and lost its reply, a later one was refused (${e.codeName}), and reading the node back failed`, { op, path: first.path });
      }
      const verdict = judge(first, e.code, node, lost.sessionId);
      if (verdict.kind === "refused") throw e;
      if (verdict.kind === "applied") return appliedValue(first, node) as T;
      throw new OutcomeUnknownError([first.error, e], `an earlier attempt was sent and lost its reply, a later one was refused (${e.codeName}), and ${verdict.why}`, { op, path: first.path });
    },
  );
}
