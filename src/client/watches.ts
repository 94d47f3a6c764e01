// Client-side watch tables (server paths as keys). Watches are added when their reply arrives, in
// the receive path, so no notification can slip between the reply and the registration. Notifications
// are turned into the set of watchers to call, each at most once per event.
import { EventType } from "../protocol/constants.ts";
import type { Watcher } from "./types.ts";

export type WatchKind = "data" | "exist" | "child" | "persistent" | "persistentRecursive";

export const WATCH_KINDS: readonly WatchKind[] = ["data", "exist", "child", "persistent", "persistentRecursive"];

export class WatchRegistry {
  private readonly tables: Record<WatchKind, Map<string, Set<Watcher>>> = {
    data: new Map(),
    exist: new Map(),
    child: new Map(),
    persistent: new Map(),
    persistentRecursive: new Map(),
  };

  add(kind: WatchKind, path: string, watcher: Watcher): void {
    const table = this.tables[kind];
    let set = table.get(path);
    if (!set) table.set(path, (set = new Set()));
    set.add(watcher);
  }

  has(kind: WatchKind, path: string, watcher?: Watcher): boolean {
    const set = this.tables[kind].get(path);
    return set !== undefined && (watcher === undefined || set.has(watcher));
  }

  /** Removes one watcher (or all of the path's when omitted); returns the removed watchers. */
  remove(kind: WatchKind, path: string, watcher?: Watcher): Watcher[] {
    const table = this.tables[kind];
    const set = table.get(path);
    if (!set) return [];
    if (watcher === undefined) {
      table.delete(path);
      return [...set];
    }
    if (!set.delete(watcher)) return [];
    if (set.size === 0) table.delete(path);
    return [watcher];
  }

  /** Paths with at least one watcher of `kind`. */
  paths(kind: WatchKind): string[] {
    return [...this.tables[kind].keys()];
  }

  get size(): number {
    let n = 0;
    for (const kind of WATCH_KINDS) for (const set of this.tables[kind].values()) n += set.size;
    return n;
  }

  /** Every distinct watcher, for session-wide events (expiry, close). */
  all(): Set<Watcher> {
    const out = new Set<Watcher>();
    for (const kind of WATCH_KINDS) for (const set of this.tables[kind].values()) for (const w of set) out.add(w);
    return out;
  }

  clear(): void {
    for (const kind of WATCH_KINDS) this.tables[kind].clear();
  }

  /**
   * The watchers a server notification triggers. One-shot watches are removed; persistent ones stay.
   * Persistent-recursive watches on the path or any ancestor fire for every type except
   * NodeChildrenChanged (the server never sends that to them).
   */
  trigger(type: number, path: string): Watcher[] {
    // Usually one set contributes (a one-shot data watch): its watchers are distinct already. Only when
    // several do can one watcher be in two of them, and only then is the result deduplicated.
    const found: Set<Watcher>[] = [];
    const t = this.tables;
    switch (type) {
      case EventType.NodeCreated:
      case EventType.NodeDataChanged:
        take(t.data, path, found);
        take(t.exist, path, found);
        break;
      case EventType.NodeDeleted:
        take(t.data, path, found);
        take(t.exist, path, found);
        take(t.child, path, found);
        break;
      case EventType.NodeChildrenChanged:
        take(t.child, path, found);
        break;
    }
    const persistent = t.persistent.get(path);
    if (persistent) found.push(persistent);
    if (type !== EventType.NodeChildrenChanged && t.persistentRecursive.size > 0) {
      let p = path;
      for (;;) {
        const set = t.persistentRecursive.get(p);
        if (set) found.push(set);
        if (p === "/") break;
        const i = p.lastIndexOf("/");
        p = i <= 0 ? "/" : p.slice(0, i);
      }
    }
    if (found.length === 0) return [];
    if (found.length === 1) return [...found[0]!];
    const out = new Set<Watcher>();
    for (const set of found) for (const w of set) out.add(w);
    return [...out];
  }

  /** Whether any watcher still needs the server's data table (resp. child table) for this path. */
  needsServerTable(table: "data" | "child", path: string): boolean {
    if (this.has("persistent", path)) return true;
    if (table === "child") return this.has("child", path);
    return this.has("data", path) || this.has("exist", path) || this.has("persistentRecursive", path);
  }
}

/** A one-shot table's watchers for `path`, taken out of it. */
function take(table: Map<string, Set<Watcher>>, path: string, found: Set<Watcher>[]): void {
  const set = table.get(path);
  if (set === undefined) return;
  table.delete(path);
  found.push(set);
}
