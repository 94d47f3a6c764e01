// The model's watch tables (ZooKeeper's WatchManager, per connection): one-shot data/exists and child
// watches, persistent watches (held on the data and the child side, as DataTree.addWatch does, so a
// 3.8 removal of one type takes one side), persistent-recursive watches (data side only); triggering
// (one event per connection and change), SetWatches catch-up on reconnect, removeWatches/checkWatches.
import { EventType, OpCode, type SetWatches2 } from "../../src/protocol/index.ts";
import type { ServerLine } from "./model.ts";

type Table<C> = Map<string, Set<C>>;
export type Notify<C> = (c: C, type: number, path: string, zxid: bigint) => void;
export type WatchKind = "data" | "child" | "persistent" | "recursive";

export const parentOf = (p: string): string => (p.lastIndexOf("/") === 0 ? "/" : p.slice(0, p.lastIndexOf("/")));

export class Watches<C> {
  private readonly data: Table<C> = new Map();
  private readonly child: Table<C> = new Map();
  private readonly persData: Table<C> = new Map();
  private readonly persChild: Table<C> = new Map();
  private readonly rec: Table<C> = new Map();
  private readonly line: ServerLine;

  constructor(line: ServerLine) {
    this.line = line;
  }

  add(kind: WatchKind, path: string, c: C): void {
    if (kind === "data") put(this.data, path, c);
    else if (kind === "child") put(this.child, path, c);
    else if (kind === "recursive") put(this.rec, path, c);
    else {
      put(this.persData, path, c);
      put(this.persChild, path, c);
    }
  }

  /** A connection's watches go with it (the session's survive only in the client, for SetWatches). */
  drop(c: C): void {
    for (const t of [this.data, this.child, this.persData, this.persChild, this.rec]) for (const s of t.values()) s.delete(c);
  }

  /** WatchManager.triggerWatch: one event per connection; one-shot watches go, persistent ones stay. */
  trigger(path: string, type: number, zxid: bigint, notify: Notify<C>): void {
    const hit = new Set<C>();
    const take = (t: Table<C>, p: string, oneShot: boolean): void => {
      const s = t.get(p);
      if (!s) return;
      for (const c of s) hit.add(c);
      if (oneShot) t.delete(p);
    };
    if (type === EventType.NodeChildrenChanged) {
      take(this.child, path, true);
      take(this.persChild, path, false);
    } else {
      take(this.data, path, true);
      take(this.persData, path, false);
      for (let p = path; ; p = parentOf(p)) {
        take(this.rec, p, false);
        if (p === "/") break;
      }
      if (type === EventType.NodeDeleted) {
        take(this.child, path, true);
        take(this.persChild, path, false);
      }
    }
    for (const c of hit) notify(c, type, path, this.line === "3.9" ? zxid : -1n);
  }

  /** SetWatches on a new connection: what changed after relativeZxid fires now (zxid -1), the rest is set. */
  setWatches(c: C, sw: SetWatches2, node: (p: string) => { mzxid: bigint; pzxid: bigint } | undefined, notify: Notify<C>): void {
    const rel = sw.relativeZxid;
    for (const p of sw.dataWatches) {
      const n = node(p);
      if (!n) notify(c, EventType.NodeDeleted, p, -1n);
      else if (n.mzxid > rel) notify(c, EventType.NodeDataChanged, p, -1n);
      else put(this.data, p, c);
    }
    for (const p of sw.existWatches) {
      if (node(p)) notify(c, EventType.NodeCreated, p, -1n);
      else put(this.data, p, c);
    }
    for (const p of sw.childWatches) {
      const n = node(p);
      if (!n) notify(c, EventType.NodeDeleted, p, -1n);
      else if (n.pzxid > rel) notify(c, EventType.NodeChildrenChanged, p, -1n);
      else put(this.child, p, c);
    }
    for (const p of sw.persistentWatches) this.add("persistent", p, c);
    for (const p of sw.persistentRecursiveWatches) this.add("recursive", p, c);
  }

  /**
   * removeWatches (remove = true) or checkWatches: true if the connection had a watch of that type.
   * WatcherType 1 Children, 2 Data, 3 Any; 4 Persistent and 5 PersistentRecursive only on 3.9 (earlier
   * lines do not know them: null, the caller answers MARSHALLINGERROR). Before 3.9 a persistent watch
   * is on both sides and Data/Children take their side; on 3.9 they take only one-shot watches.
   */
  remove(c: C, path: string, type: number, remove: boolean): boolean | null {
    const v39 = this.line === "3.9";
    let tables: Array<Table<C>>;
    if (type === 1) tables = v39 ? [this.child] : [this.child, this.persChild];
    else if (type === 2) tables = v39 ? [this.data] : [this.data, this.persData, this.rec];
    else if (type === 3) tables = [this.data, this.child, this.persData, this.persChild, this.rec];
    else if (v39 && type === 4) tables = [this.persData, this.persChild];
    else if (v39 && type === 5) tables = [this.rec];
    else return null;
    let found = false;
    for (const t of tables) {
      const s = t.get(path);
      if (!s?.has(c)) continue;
      found = true;
      if (remove) s.delete(c);
    }
    return found;
  }
}

function put<C>(t: Table<C>, path: string, c: C): void {
  let s = t.get(path);
  if (!s) t.set(path, (s = new Set()));
  s.add(c);
}

export const REMOVE_OPS: readonly number[] = [OpCode.removeWatches, OpCode.checkWatches];
