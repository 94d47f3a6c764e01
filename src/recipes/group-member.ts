// Group membership (docs/recipes.md "GroupMember"; reference: `npm run docs`): each member is the ephemeral znode `path/<id>` holding its data.
// While someone listens for "change", a persistent watch on the group path (re-registered by the client
// after a reconnect) turns joins and leaves into "change" events with the whole list, sorted by id;
// bursts are coalesced (20 ms of quiet, at most 500 ms), and only new members' data is read. Where the
// server has no persistent watches (3.4), a one-shot children watch, re-armed by every read, does it.
// Every member watches its own znode (to rejoin when someone deletes it); nothing else without a listener.
import { type TypedEmitter, TypedEventEmitter } from "../client/emitter.ts";
import type { SessionState, TimerHandle, WatchedEvent, Watcher, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, emitIsolated, isZooKeeperError } from "../client/index.ts";
import { AddWatchMode, CreateMode, ErrorCode, EventType, WatcherType } from "../protocol/constants.ts";
import { MemberIdTakenError } from "./errors.ts";
import { deleteNode } from "./reconnects.ts";
import { reportError } from "./reporting.ts";
import { Serial } from "./serial.ts";

const QUIET_MS = 20; // a burst of joins and leaves is read once it has been quiet this long...
const MAX_MS = 500; // ...or this long after its first change at most

/** A member of a group as read from the server. */
export interface Member {
  /** The member's id (its znode name). */
  id: string;
  /** The data the member joined with. */
  data: Uint8Array | null;
}

/** Options of a GroupMember. */
export interface GroupMemberOptions {
  /** This member's id: the znode's name under the group path (no "/"). */
  id: string;
  /** Stored in the member's znode. */
  data?: Uint8Array | string | null;
}

/** Events of a GroupMember. */
export interface GroupMemberEvents {
  /** The membership changed: the whole list, sorted by id. */
  change: [members: Member[]];
  /** A background refresh failed for another reason than a lost link; it is retried. */
  error: [error: Error];
}

/**
 * Group membership: each member is the ephemeral znode `path/<id>` holding its data; every member sees the
 * whole list on each change. Errors are ZooKeeperErrors: BADARGUMENTS for bad constructor arguments,
 * MemberIdTakenError (NODEEXISTS) when another live session holds the id, and what the client rejects with. Server 3.6+ (persistent watch).
 */
export class GroupMember extends TypedEventEmitter<GroupMemberEvents> {
  /** The group's znode path. */
  readonly path: string;
  /** This member's id. */
  readonly id: string;
  private readonly zk: ZooKeeper;
  private readonly data: Uint8Array | string | null;
  private readonly serial = new Serial();
  private joined = false;
  private watching = false;
  private oneShot = false; // children watch re-armed on every refresh (no persistent watches)
  private refreshQueued = false;
  private known: Map<string, Uint8Array | null> | null = null; // the members of the last "change", with their data
  private coalesce: TimerHandle | null = null;
  private pendingSince: number | null = null;

  /** Prepares a member; nothing is sent before `join()`. Throws BADARGUMENTS for an invalid path or id. */
  constructor(zk: ZooKeeper, path: string, options: GroupMemberOptions) {
    super();
    if (typeof path !== "string" || !path.startsWith("/") || path.length < 2 || path.endsWith("/")) {
      throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "the group path must be an absolute znode path", { op: "GroupMember", path: String(path) });
    }
    if (!options || typeof options.id !== "string" || options.id === "" || options.id.includes("/")) {
      throw new ZooKeeperError(ErrorCode.BADARGUMENTS, "options.id must be a non-empty znode name", { op: "GroupMember", path });
    }
    this.zk = zk;
    this.path = path;
    this.id = options.id;
    this.data = options.data ?? null;
    // The group watch is kept only while someone listens for "change".
    const self = this as unknown as TypedEmitter<{ newListener: [event: string | symbol]; removeListener: [event: string | symbol] }>;
    self.on("newListener", (event: string | symbol) => {
      if (event === "change" && this.joined && !this.watching) void this.serial.run(() => this.watchGroup()).then(() => this.refresh(), () => this.refresh());
    });
    self.on("removeListener", (event: string | symbol) => {
      if (event === "change" && this.listenerCount("change") === 0) void this.serial.run(() => this.unwatchGroup());
    });
  }

  /** This member's znode. */
  get memberPath(): string {
    return `${this.path}/${this.id}`;
  }

  /** Creates our ephemeral znode (the group path as a container when missing) and starts watching the group. */
  async join(): Promise<void> {
    await this.serial.run(async () => {
      if (this.joined) return;
      this.joined = true;
      this.zk.on("state", this.onState);
      let created = false;
      try {
        await this.ensureMember();
        created = true;
        this.oneShot = !this.zk.serverFeatures.persistentWatches;
        await this.watchGroup();
      } catch (e) {
        this.joined = false;
        this.zk.off("state", this.onState);
        // A join that fails leaves nothing behind: our znode goes with it.
        if (created) await deleteNode(this.zk, this.memberPath).catch(() => {});
        throw e;
      }
    });
    this.refresh();
  }

  /** Deletes our znode and stops watching the group. */
  async leave(): Promise<void> {
    await this.serial.run(async () => {
      if (!this.joined) return;
      this.joined = false;
      this.zk.off("state", this.onState);
      if (this.coalesce !== null) this.zk.clock.clearTimeout(this.coalesce);
      this.coalesce = null;
      this.pendingSince = null;
      this.known = null;
      await this.unwatchGroup(true);
      await deleteNode(this.zk, this.memberPath);
    });
  }

  /** `await using` support: the same as `leave()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.leave();
  }

  /** The current members, sorted by id. */
  members(): Promise<Member[]> {
    return this.readMembers(undefined);
  }

  private async readMembers(watcher: Watcher | undefined): Promise<Member[]> {
    let children: string[];
    try {
      children = await this.zk.getChildren(this.path, watcher);
    } catch (e) {
      if (isZooKeeperError(e, ErrorCode.NONODE)) return [];
      throw e;
    }
    const read = await Promise.all(
      children.map(async (id) => {
        try {
          return { id, data: (await this.zk.getData(`${this.path}/${id}`)).data };
        } catch (e) {
          if (isZooKeeperError(e, ErrorCode.NONODE)) return null; // left meanwhile
          throw e;
        }
      }),
    );
    return read.filter((m): m is Member => m !== null).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Our znode exists and is this session's: create it, or accept it when a lost reply had created it. */
  private async ensureMember(): Promise<void> {
    try {
      await this.zk.create(this.memberPath, this.data, { mode: CreateMode.EPHEMERAL, createParents: true }); // parents as containers
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.NODEEXISTS)) throw e;
      const stat = await this.zk.exists(this.memberPath);
      if (stat !== null && stat.ephemeralOwner !== this.zk.sessionId) {
        throw new MemberIdTakenError(this.memberPath, this.id);
      }
      if (stat === null) await this.ensureMember(); // gone again meanwhile
    }
  }

  /** Registers the persistent group watch when someone listens for "change" (in the Serial). */
  private async watchGroup(): Promise<void> {
    if (!this.joined || this.watching || this.listenerCount("change") === 0) return;
    if (!this.oneShot) await this.zk.addWatch(this.path, AddWatchMode.PERSISTENT, this.onGroup);
    this.watching = true; // one-shot: the next read of the group arms it
  }

  /** Drops the group watch once nobody listens (or on leave), and the list kept for change detection. */
  private async unwatchGroup(leaving = false): Promise<void> {
    if (!this.watching || (!leaving && this.listenerCount("change") > 0)) return;
    this.watching = false;
    this.known = null;
    if (!this.oneShot) await this.zk.removeWatches(this.path, this.onGroup, WatcherType.Any).catch(() => {});
  }

  private readonly onGroup: Watcher = (event: WatchedEvent) => {
    if (event.type === EventType.None || !this.watching) return;
    // Coalesce: read once the burst has been quiet QUIET_MS, or MAX_MS after its first change.
    const now = this.zk.clock.now();
    this.pendingSince ??= now;
    if (this.coalesce !== null) this.zk.clock.clearTimeout(this.coalesce);
    this.coalesce = this.zk.clock.setTimeout(() => {
      this.coalesce = null;
      this.pendingSince = null;
      this.refresh();
    }, Math.max(0, Math.min(QUIET_MS, this.pendingSince + MAX_MS - now)));
  };

  private readonly onSelf: Watcher = (event: WatchedEvent) => {
    if (event.type !== EventType.None) this.refresh(); // deleted by someone: rejoin; anything else: re-arm
  };

  private readonly onState = (state: SessionState): void => {
    if (state === "connected") this.refresh(); // changes while disconnected, and a rejoin if our znode went
  };

  /** Rejoins if our znode vanished; while listened to, re-reads the group and emits on a real change. */
  private refresh(): void {
    if (this.refreshQueued || !this.joined) return;
    this.refreshQueued = true;
    void this.serial
      .run(async () => {
        this.refreshQueued = false;
        if (!this.joined) return;
        if ((await this.zk.exists(this.memberPath, this.onSelf)) === null) {
          await this.ensureMember(); // deleted by someone, or reaped with its container while the session lived
          await this.zk.exists(this.memberPath, this.onSelf);
        }
        if (!this.watching) return;
        let children: string[];
        try {
          children = await this.zk.getChildren(this.path, this.oneShot ? this.onGroup : undefined); // re-arms a one-shot watch
        } catch (e) {
          if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
          children = [];
        }
        const before = this.known;
        const next = new Map<string, Uint8Array | null>();
        const fresh = children.filter((id) => !before?.has(id));
        for (const id of children) if (before?.has(id)) next.set(id, before.get(id)!);
        const read = await Promise.all(fresh.map((id) => this.zk.getData(`${this.path}/${id}`).then((r) => r.data, (e: unknown) => (isZooKeeperError(e, ErrorCode.NONODE) ? undefined : Promise.reject(e)))));
        fresh.forEach((id, i) => read[i] !== undefined && next.set(id, read[i]));
        const added = fresh.some((id) => next.has(id));
        if (!this.watching || (before !== null && before.size === next.size && !added)) return;
        this.known = next;
        const members = [...next].map(([id, data]) => ({ id, data })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        emitIsolated(this.zk, this, "GroupMember", "change", members);
      })
      .catch((e) => {
        if (isZooKeeperError(e, ErrorCode.CONNECTIONLOSS) || isZooKeeperError(e, ErrorCode.SESSIONEXPIRED)) return; // "connected" refreshes again
        reportError(this.zk, this, "GroupMember", e);
      });
  }
}
