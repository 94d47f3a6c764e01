// Client-side watch tables (server paths as keys). Watches are added when their reply arrives, in
// the receive path, so no notification can slip between the reply and the registration. Notifications
// are turned into the set of watchers to call, each at most once per event.
import { EventType } from "../../protocol/constants.ts";
import type { Watcher } from "../types.ts";

export type WatchKind = "data" | "exist" | "child" | "persistent" | "persistentRecursive";

const WATCH_KINDS: readonly WatchKind[] = ["data", "exist", "child", "persistent", "persistentRecursive"];

/**
 * A path's watchers in one table: the watcher itself while it is the only one (nearly always: one watch per
 * read), a Set from the second on. A storm of 10,000 one-shot watches then keeps no Set per path alive.
 */
type Entry = Watcher | Set<Watcher>;

const isOne = (e: Entry): e is Watcher => typeof e === "function";

export class WatchRegistry {
  /** A kind's table is made by its first watch: most sessions use one kind or none. */
  private readonly tables: Record<WatchKind, Map<string, Entry> | null> = { data: null, exist: null, child: null, persistent: null, persistentRecursive: null };

  add(kind: WatchKind, path: string, watcher: Watcher): void {
    const table = (this.tables[kind] ??= new Map());
    const e = table.get(path);
    if (e === undefined) table.set(path, watcher);
    else if (!isOne(e)) e.add(watcher);
    else if (e !== watcher) table.set(path, new Set([e, watcher]));
  }

  has(kind: WatchKind, path: string, watcher?: Watcher): boolean {
    const e = this.tables[kind]?.get(path);
    if (e === undefined) return false;
    return watcher === undefined || (isOne(e) ? e === watcher : e.has(watcher));
  }

  /** Removes one watcher (or all of the path's when omitted); returns the removed watchers. */
  remove(kind: WatchKind, path: string, watcher?: Watcher): Watcher[] {
    const table = this.tables[kind];
    const e = table?.get(path);
    if (table === null || e === undefined) return [];
    if (watcher === undefined) {
      table.delete(path);
      return isOne(e) ? [e] : [...e];
    }
    if (isOne(e)) {
      if (e !== watcher) return [];
      table.delete(path);
      return [watcher];
    }
    if (!e.delete(watcher)) return [];
    if (e.size === 0) table.delete(path);
    return [watcher];
  }

  /** Paths with at least one watcher of `kind`. */
  paths(kind: WatchKind): string[] {
    const table = this.tables[kind];
    return table ? [...table.keys()] : [];
  }

  /** No watch of any kind (every new session's first connection: nothing to re-register). */
  get isEmpty(): boolean {
    // Each table by its name: a loop over WATCH_KINDS reads this.tables[kind] by computed key (megamorphic).
    const t = this.tables;
    return !(t.data?.size || t.exist?.size || t.child?.size || t.persistent?.size || t.persistentRecursive?.size);
  }

  get size(): number {
    let n = 0;
    for (const kind of WATCH_KINDS) for (const e of this.tables[kind]?.values() ?? []) n += isOne(e) ? 1 : e.size;
    return n;
  }

  /** Every distinct watcher, for session-wide events (expiry, close). */
  all(): Watcher[] {
    const out = new Set<Watcher>();
    for (const kind of WATCH_KINDS) for (const e of this.tables[kind]?.values() ?? []) addTo(out, e);
    return out.size === 0 ? [] : [...out];
  }

  clear(): void {
    for (const kind of WATCH_KINDS) this.tables[kind]?.clear();
  }

  /**
   * The watchers a server notification triggers. One-shot watches are removed; persistent ones stay.
   * Persistent-recursive watches on the path or any ancestor fire for every type except
   * NodeChildrenChanged (the server never sends that to them).
   */
  trigger(type: number, path: string): Watcher[] {
    // Usually one entry contributes (a one-shot data watch): its watchers are distinct already. Only when
    // several do can one watcher be in two of them, and only then is the result deduplicated.
    const found: Entry[] = [];
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
    const persistent = t.persistent?.get(path);
    if (persistent) found.push(persistent);
    const recursive = t.persistentRecursive;
    if (type !== EventType.NodeChildrenChanged && recursive !== null && recursive.size > 0) {
      let p = path;
      for (;;) {
        const e = recursive.get(p);
        if (e) found.push(e);
        if (p === "/") break;
        const i = p.lastIndexOf("/");
        p = i <= 0 ? "/" : p.slice(0, i);
      }
    }
    if (found.length === 0) return [];
    if (found.length === 1) {
      const e = found[0]!;
      return isOne(e) ? [e] : [...e];
    }
    const out = new Set<Watcher>();
    for (const e of found) addTo(out, e);
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
function take(table: Map<string, Entry> | null, path: string, found: Entry[]): void {
  const e = table?.get(path);
  if (table === null || e === undefined) return;
  table.delete(path);
  found.push(e);
}

function addTo(out: Set<Watcher>, e: Entry): void {
  if (isOne(e)) out.add(e);
  else for (const w of e) out.add(w);
}
