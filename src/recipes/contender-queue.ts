// Reading the contenders of an election or lock path: their ids (the znodes' data, as Curator's
// LeaderLatch/LeaderSelector and kazoo's Election write them) in protocol order; the first leads.
import type { ZooKeeper } from "../client/index.ts";
import { isZooKeeperError } from "../client/index.ts";
import { CreateMode, ErrorCode } from "../protocol/constants.ts";
import { NAMINGS, sortByNaming, type Naming } from "./naming.ts";
import { afterConnectionLoss, findProtected } from "./reconnects.ts";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true }); // ids keep a leading U+FEFF

/** A candidate of an election as read from the server. */
export interface Participant {
  /** The participant id stored in its znode. */
  id: string;
  /** The candidate znode's full path. */
  path: string;
  /** Its sequence number: the lowest leads. */
  sequence: number;
  /** True for the first candidate (the leader). */
  isLeader: boolean;
}

/**
 * Protected create of an ephemeral-sequential contender under `path`: a create whose reply was lost is
 * found by its uuid prefix, never made twice. `stop()` ends the search after a loss ("" when nothing was made).
 */
export async function createContender(zk: ZooKeeper, path: string, naming: Naming, data: string, stop: () => boolean = () => false): Promise<string> {
  const prefix = naming.newPrefix();
  // Missing parents are made as containers (persistent on 3.4), so an abandoned recipe path is reaped.
  const create = (): Promise<string> => zk.create(`${path}/${naming.nodeName(prefix)}`, data, { mode: CreateMode.EPHEMERAL_SEQUENTIAL, createParents: true });
  let uncertain = false;
  for (;;) {
    try {
      if (uncertain) {
        const found = await findProtected(zk, path, prefix);
        if (found || stop()) return found ?? "";
      }
      return await create();
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
      if (e.sent !== false) uncertain = true; // never sent: nothing to look for

      await afterConnectionLoss(zk);
    }
  }
}

/** The election path's children; none when the path is gone (a container reaped after its last child). */
export async function childrenOrNone(zk: ZooKeeper, path: string): Promise<string[]> {
  try {
    return await zk.getChildren(path);
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return [];
    throw e;
  }
}

/** Every candidate under `path` with its id (the znode's data), in order; the first leads. */
export async function readParticipants(zk: ZooKeeper, path: string, naming: Naming = NAMINGS["curator-latch"]): Promise<Participant[]> {
  const read = await Promise.all(
    sortByNaming(naming, await childrenOrNone(zk, path)).map(async (c) => {
      const full = `${path}/${c.name}`;
      try {
        const { data } = await zk.getData(full);
        return { id: data ? decoder.decode(data) : "", path: full, sequence: c.sequence, isLeader: false };
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.NONODE)) return null; // left meanwhile
        throw e;
      }
    }),
  );
  const out = read.filter((p): p is Participant => p !== null);
  if (out.length > 0) out[0].isLeader = true;
  return out;
}

/** What an elected leader writes into the election znode's data: a marker and its own candidate's name. */
const HINT_PREFIX = "zookeeper-ts leader:";

/**
 * The candidates lower than ours that we know of (docs/recipes.md "Big elections"): the nearest `limit` of them from
 * the last listing, so that when the predecessor we watch goes, the successor walks down to the next one
 * it knows instead of listing every child again. Sound because candidates lower than ours can only
 * disappear (a new one always gets a higher sequence); relisted only when the known ones run out and
 * the listing was truncated, or when the owner asks (a new candidate, a reconnect).
 *
 * The leader hint (`useHint`) makes a chain of hand-overs O(1): a leader, once elected, names its candidate
 * in the election znode's data (`markLeader`). A candidate that was ever first stays the lowest of those
 * left, so every candidate below a named one is gone for good; when the known ones ran out and the named
 * leader is not below the window of the last listing, the window held every lower candidate that can
 * still exist, and none is left: ours is first without listing N children again.
 */
export class ContenderQueue {
  private readonly zk: ZooKeeper;
  private readonly path: string;
  private readonly naming: Naming;
  private readonly limit: number;
  private known: string[] = []; // names of the nearest lower candidates, ascending: the last is the predecessor
  private complete = false; // `known` held every lower candidate at the listing
  private listed = false;
  private floor: { name: string; seq: number } | null = null; // the lowest of a truncated listing's window
  private readonly useHint: boolean;
  private readonly waitsFor: ((name: string) => boolean) | undefined;

  /** `waitsFor` picks the lower contenders that count (a reader of a read-write lock waits only for writers); default all. */
  constructor(zk: ZooKeeper, path: string, naming: Naming, options: { limit?: number; useHint?: boolean; waitsFor?: (name: string) => boolean } = {}) {
    this.zk = zk;
    this.path = path;
    this.naming = naming;
    this.limit = options.limit ?? 16;
    this.useHint = options.useHint ?? false;
    this.waitsFor = options.waitsFor;
  }

  /** Forget everything (a new candidate of ours, or a reconnect): the next step lists the children. */
  reset(): void {
    this.known = [];
    this.complete = false;
    this.listed = false;
    this.floor = null;
  }

  /** Whether the next step must list the children (nothing known yet, or the known ones ran out of a truncated listing). */
  get needsListing(): boolean {
    return !this.listed || (this.known.length === 0 && !this.complete);
  }

  /** True when no candidate lower than ours is left: ours is first. */
  get first(): boolean {
    return this.listed && this.complete && this.known.length === 0;
  }

  /** The nearest lower candidate still believed alive (full path), or null. */
  get predecessor(): string | null {
    const name = this.known.at(-1);
    return name === undefined ? null : `${this.path}/${name}`;
  }

  /** How many lower candidates are known (for the memory figures). */
  get size(): number {
    return this.known.length;
  }

  /**
   * One getChildren: keeps the nearest `limit` candidates below `ours` (a full path). Returns how many
   * candidates are lower than ours, or -1 when ours is not among the children. Linear, no full sort.
   */
  async list(ours: string): Promise<number> {
    const oursName = ours.slice(this.path.length + 1);
    const ourSeq = this.naming.sequenceOf(oursName) ?? Number.MAX_SAFE_INTEGER;
    const children = await childrenOrNone(this.zk, this.path);
    const near: Array<{ name: string; seq: number }> = [];
    let found = false;
    let lower = 0;
    for (const name of children) {
      if (name === oursName) {
        found = true;
        continue;
      }
      const seq = this.naming.sequenceOf(name);
      if (seq === undefined || seq > ourSeq || (seq === ourSeq && name > oursName)) continue;
      if (this.waitsFor !== undefined && !this.waitsFor(name)) continue; // lower, but not one we wait for
      lower++;
      if (near.length === this.limit && before(name, seq, near[0])) continue;
      let i = near.length; // insertion into the small ascending window
      while (i > 0 && before(name, seq, near[i - 1])) i--;
      near.splice(i, 0, { name, seq });
      if (near.length > this.limit) near.shift();
    }
    this.listed = found;
    this.known = found ? near.map((c) => c.name) : [];
    this.complete = found && lower === near.length;
    this.floor = found && !this.complete ? near[0] : null;
    return found ? lower : -1;
  }

  /** A truncated listing whose window the leader hint may prove complete. */
  private get hintMayHelp(): boolean {
    return this.useHint && this.listed && !this.complete && this.floor !== null;
  }

  /** The candidate name in the election znode's data, when a leader of ours wrote it there. */
  private async readHint(): Promise<string | null> {
    let data: Uint8Array | null;
    try {
      ({ data } = await this.zk.getData(this.path));
    } catch (e) {
      if (isZooKeeperError(e, ErrorCode.NONODE)) return null;
      throw e;
    }
    const text = data ? decoder.decode(data) : "";
    return text.startsWith(HINT_PREFIX) ? text.slice(HINT_PREFIX.length) : null;
  }

  /**
   * A named leader not below the window of the listing (`floor`, unchanged since the read began) proves the
   * window complete: every candidate below the leader is gone for good, and the rest were in the window.
   */
  private applyHint(floor: { name: string; seq: number } | null, name: string | null): void {
    if (floor === null || name === null || floor !== this.floor || this.complete) return;
    const seq = this.naming.sequenceOf(name);
    if (seq !== undefined && !before(name, seq, floor)) this.complete = true;
  }

  /** Names `ours` as the leader in the election znode's data (best effort: a failure only costs a later listing). */
  markLeader(ours: string): void {
    if (!this.useHint) return;
    const name = ours.slice(this.path.length + 1);
    void this.zk.setData(this.path, `${HINT_PREFIX}${name}`).catch(() => {});
  }

  /** A known candidate turned out gone (its deletion event, or NONODE): the walk moves past it. */
  gone(path: string): void {
    const i = this.known.lastIndexOf(path.slice(this.path.length + 1));
    if (i >= 0) this.known.splice(i, 1);
  }

  /**
   * Checks every known lower candidate at once (one round trip, no watches) and forgets those gone; reads the
   * leader hint in the same round trip when the window may be incomplete.
   */
  async prune(): Promise<void> {
    const names = [...this.known];
    const floor = this.floor;
    const hint = this.hintMayHelp ? this.readHint().catch(() => null) : null; // best effort: never unhandled
    const alive = await Promise.all(names.map((n) => this.zk.exists(`${this.path}/${n}`)));
    const gone = new Set(names.filter((_, i) => alive[i] === null));
    this.known = this.known.filter((n) => !gone.has(n));
    if (hint !== null) this.applyHint(floor, await hint);
  }
}

function before(name: string, seq: number, c: { name: string; seq: number }): boolean {
  return seq < c.seq || (seq === c.seq && name < c.name);
}
