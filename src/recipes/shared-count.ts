// A shared integer in one znode, changed by versioned compare-and-set, on the layouts of Curator's SharedCount
// (`naming: "curator"`: the value as a 4-byte big-endian int) and kazoo's Counter (`naming: "kazoo"`: the value as
// decimal ASCII text, e.g. "5"; kazoo's `ensure_path` leaves the znode empty, which both read as the initial value).
// A set whose reply was lost is sent again once the session is connected, still conditional on the version, and
// the client judges it (src/client/outcome.ts): the version unchanged, it applies now; another write at the next
// version, BADVERSION (false); our value at the next version may be ours or another incrementer's, so it is
// OutcomeUnknownError, never a failure.
import { type TypedEmitter, TypedEventEmitter } from "../client/emitter.ts";
import type { SessionState, Stat, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { OutcomeUnknownError, ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { ErrorCode, EventType } from "../protocol/constants.ts";
import { checkRecipePath } from "./options.ts";
import { TERMINAL, afterConnectionLoss } from "./reconnects.ts";
import { reportError } from "./reporting.ts";

/** How the count is stored: a 4-byte big-endian int (Curator SharedCount, kazoo Counter with `support_curator`) or decimal text (kazoo Counter). */
export type SharedCountNaming = "curator" | "kazoo";

/** Options of a SharedCount. */
export interface SharedCountOptions {
  /** The value the znode is created with when missing, and what an empty znode reads as (default 0). */
  initial?: number;
  /** How the value is stored (default "curator"). */
  naming?: SharedCountNaming;
}

/** A value of the count with the znode version it was read at (the version a `trySet` must name). */
export interface VersionedCount {
  /** The count. */
  value: number;
  /** The znode's data version. */
  version: number;
}

/** Events of a SharedCount. */
export interface SharedCountEvents {
  /** The count changed (emitted while someone listens; each write seen once, in order, though writes may be skipped). */
  change: [count: VersionedCount];
  /** A background read failed for another reason than a lost link; it is tried again on the next change or reconnect. */
  error: [error: Error];
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/**
 * A shared integer (Curator SharedCount, kazoo Counter): `get()` reads the value with its version, `trySet()`
 * writes only at that version, `increment()` retries that until it lands. Errors are ZooKeeperErrors:
 * BADARGUMENTS for bad arguments or a value the layout cannot hold, MARSHALLINGERROR for a znode that does not
 * hold a count, OutcomeUnknownError (a lost set nobody can tell applied), and what the client rejects with.
 */
export class SharedCount extends TypedEventEmitter<SharedCountEvents> {
  /** The count's znode path. */
  readonly path: string;
  /** How the value is stored. */
  readonly naming: SharedCountNaming;
  /** The value of a missing or empty znode. */
  readonly initial: number;
  private readonly zk: ZooKeeper;
  private watching = false;
  private reading = false;
  private readAgain = false;
  private lastSeen = -1n; // mzxid of the last "change" emitted

  /** Prepares a count; nothing is sent before a call. Throws BADARGUMENTS for an invalid path or options. */
  constructor(zk: ZooKeeper, path: string, options: SharedCountOptions = {}) {
    super();
    checkRecipePath(path, "count", "SharedCount");
    const o = options ?? {};
    const naming = o.naming ?? "curator";
    if (naming !== "curator" && naming !== "kazoo") throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `naming must be "curator" or "kazoo"`, { op: "SharedCount", path });
    this.zk = zk;
    this.path = path;
    this.naming = naming;
    this.initial = this.checkValue(o.initial ?? 0, "SharedCount", "options.initial");
    // The znode is watched only while someone listens for "change".
    const self = this as unknown as TypedEmitter<{ newListener: [event: string | symbol]; removeListener: [event: string | symbol] }>;
    self.on("newListener", (event: string | symbol) => {
      if (event !== "change" || this.watching) return;
      this.watching = true;
      this.zk.on("state", this.onState);
      this.refresh();
    });
    self.on("removeListener", (event: string | symbol) => {
      if (event !== "change" || this.listenerCount("change") > 0 || !this.watching) return;
      this.watching = false; // the watch in place fires once more, unheard
      this.zk.off("state", this.onState);
    });
  }

  /** The count and its version, read from the server; a missing znode is created with the initial value first. */
  async get(): Promise<VersionedCount> {
    for (;;) {
      try {
        return this.decode(await this.zk.getData(this.path));
      } catch (e) {
        if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
      }
      await this.create();
    }
  }

  /**
   * Sets the count to `value` if the znode is still at `version`: true when it was set, false when another write
   * came first (BADVERSION, also when a lost set sent again finds another value at the next version). A lost reply
   * is never a false: the set is sent again and judged by the client, or rejected with OutcomeUnknownError.
   */
  async trySet(value: number, version: number): Promise<boolean> {
    this.checkValue(value, "trySet", "value");
    if (!Number.isSafeInteger(version) || version < 0) throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "version must be an integer >= 0 (from get())", { op: "trySet", path: this.path });
    const data = this.encode(value);
    const lost: unknown[] = []; // sets sent whose replies were lost
    for (;;) {
      try {
        await this.zk.setData(this.path, data, version);
        return true;
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.BADVERSION)) return false;
        if (e instanceof OutcomeUnknownError || !isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw lost.length > 0 && !(e instanceof OutcomeUnknownError) ? this.unknown([...lost, e]) : e;
        if (e.sent === true) lost.push(e);
      }
      // Lost: the same set again, once connected; the client judges a refusal it may have caused.
      try {
        await afterConnectionLoss(this.zk);
      } catch (e) {
        throw lost.length > 0 ? this.unknown([...lost, e]) : e;
      }
    }
  }

  /** A set that was sent and lost, and the session (or a later attempt) ended before anything told its fate. */
  private unknown(attempts: unknown[]): OutcomeUnknownError {
    return new OutcomeUnknownError(attempts, "a set was sent and its reply lost, and the count could not be set again to tell", { op: "trySet", path: this.path });
  }

  /**
   * Adds `delta` (kazoo Counter's `+=`): reads, then sets at the version read, again until a set lands.
   * Resolves with the count it set; OutcomeUnknownError when a lost reply leaves it unknown whether it landed.
   */
  async increment(delta = 1): Promise<VersionedCount> {
    if (!Number.isSafeInteger(delta)) throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "delta must be an integer", { op: "increment", path: this.path });
    for (;;) {
      const now = await this.get();
      const value = this.checkValue(now.value + delta, "increment", "the sum");
      if (await this.trySet(value, now.version)) return { value, version: now.version + 1 };
    }
  }

  /** Stops watching the znode (removes every "change" listener). */
  close(): void {
    this.removeAllListeners("change");
  }

  /** Creates the znode with the initial value (parents as containers); one that exists already is fine. */
  private async create(): Promise<void> {
    for (;;) {
      try {
        await this.zk.create(this.path, this.encode(this.initial), { createParents: true });
        return;
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.NODEEXISTS)) return;
        if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
        await afterConnectionLoss(this.zk);
      }
    }
  }

  private checkValue(value: unknown, op: string, what: string): number {
    const ok = typeof value === "number" && Number.isSafeInteger(value) && (this.naming !== "curator" || (value >= INT32_MIN && value <= INT32_MAX));
    if (!ok) throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `${what} must be ${this.naming === "curator" ? "a 32-bit signed integer" : "a safe integer"}, got ${String(value)}`, { op, path: this.path });
    return value as number;
  }

  private encode(value: number): Uint8Array {
    if (this.naming === "kazoo") return new TextEncoder().encode(String(value));
    const out = new Uint8Array(4);
    new DataView(out.buffer).setInt32(0, value);
    return out;
  }

  private decode(read: { data: Uint8Array | null; stat: Stat }): VersionedCount {
    const { data, stat } = read;
    if (data === null || data.length === 0) return { value: this.initial, version: stat.version };
    if (this.naming === "curator") {
      if (data.length !== 4) throw this.notACount(`${data.length} bytes, not a 4-byte int`);
      return { value: new DataView(data.buffer, data.byteOffset, 4).getInt32(0), version: stat.version };
    }
    const text = new TextDecoder().decode(data);
    const value = /^-?\d{1,16}$/.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(value)) throw this.notACount(`${JSON.stringify(text.slice(0, 40))} is not a decimal integer`);
    return { value, version: stat.version };
  }

  private notACount(why: string): ZooKeeperError {
    return new ZooKeeperError(ErrorCode.MARSHALLINGERROR, `the znode does not hold a ${this.naming} count: ${why}`, { op: "SharedCount", path: this.path });
  }

  private readonly onWatch: Watcher = (event: WatchedEvent) => {
    if (event.type !== EventType.None) this.refresh();
  };

  private readonly onState = (state: SessionState): void => {
    if (state === "connected") this.refresh(); // writes made while the link was down
  };

  /** Reads the znode with a watch (an exists watch while it is missing) and emits "change" for a write not seen yet. */
  private refresh(): void {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    void (async () => {
      do {
        this.readAgain = false;
        if (!this.watching) return;
        try {
          const read = await this.zk.getData(this.path, this.onWatch);
          if (read.stat.mzxid <= this.lastSeen) continue;
          const count = this.decode(read);
          this.lastSeen = read.stat.mzxid;
          if (this.watching) emitIsolated(this.zk, this, "SharedCount", "change", count);
        } catch (e) {
          if (isZooKeeperError(e, ErrorCode.NONODE)) {
            if ((await this.zk.exists(this.path, this.onWatch).catch(() => null)) !== null) this.readAgain = true; // created meanwhile
          } else if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS) && !isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)) {
            reportError(this.zk, this, "SharedCount", e); // "connected" reads again after a lost link
          }
        }
      } while (this.readAgain);
    })().finally(() => {
      this.reading = false;
    });
  }
}
