// removeWatches / removeAllWatches: drop watchers locally, tell each one (DataWatchRemoved,
// ChildWatchRemoved, PersistentWatchRemoved), and ask the server to drop its watch only when no
// other local watcher still needs that server table for the path (the server keeps one watch per
// connection and path, not one per watcher).
import { ErrorCode, EventType, KeeperState, WatcherType } from "../protocol/constants.ts";
import { Ops } from "../protocol/ops.ts";
import type { Caller } from "./caller.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import { watchedEvent } from "./events.ts";
import { type ServerFeatures, unsupported } from "./session/features.ts";
import type { WatchedEvent, Watcher } from "./types.ts";
import type { WatchKind, WatchRegistry } from "./watches/watches.ts";

export interface RemovalContext {
  calls: Caller;
  deliver(watchers: readonly Watcher[], event: WatchedEvent): void;
  features: ServerFeatures;
  signal: AbortSignal | undefined;
}

export async function removeWatchers(ctx: RemovalContext, op: string, path: string, type: number, watcher: Watcher | undefined): Promise<void> {
  const serverPath = ctx.calls.server(path);
  const watches = ctx.calls.watches;
  const kinds = kindsFor(op, path, type);
  // Refused before anything changes locally: 3.4 has no removeWatches (it would drop the link).
  const why = unsupported(ctx.features, NEEDS);
  if (why !== null) throw new ZooKeeperError(ErrorCode.UNIMPLEMENTED, why.replace("removeWatches", op), { op, path });
  const removed: [Watcher, EventType][] = [];
  const gone = new Set<WatchKind>();
  for (const kind of kinds) {
    for (const w of watches.remove(kind, serverPath, watcher)) {
      removed.push([w, kind === "child" ? EventType.ChildWatchRemoved : kind === "data" || kind === "exist" ? EventType.DataWatchRemoved : EventType.PersistentWatchRemoved]);
      gone.add(kind);
    }
  }
  if (removed.length === 0) throw new ZooKeeperError(ErrorCode.NOWATCHER, "no such watcher is registered", { op, path });
  for (const [w, evType] of removed) ctx.deliver([w], watchedEvent(evType, KeeperState.SyncConnected, path, undefined));
  const v39 = ctx.features.persistentRemovalTypes;
  const types = v39 ? typesFor39(watches, serverPath, gone) : typesBefore39(watches, serverPath, gone);
  // Before 3.9 one Data/Any request stands for a persistent watch too.
  const persistentGone = gone.has("persistent") || gone.has("persistentRecursive");
  await Promise.all(types.map((t) => removeOnServer(ctx, op, path, t, v39 ? t === WatcherType.Persistent || t === WatcherType.PersistentRecursive : persistentGone)));
}

const NEEDS = { features: ["removeWatches"], what: "removeWatches" } as const;

/** 3.9 keeps each watch mode apart: one removal per mode no local watcher needs any more. */
function typesFor39(watches: WatchRegistry, serverPath: string, gone: Set<WatchKind>): number[] {
  const out: number[] = [];
  if ((gone.has("data") || gone.has("exist")) && !watches.has("data", serverPath) && !watches.has("exist", serverPath)) out.push(WatcherType.Data);
  if (gone.has("child") && !watches.has("child", serverPath)) out.push(WatcherType.Children);
  if (gone.has("persistent") && !watches.has("persistent", serverPath)) out.push(WatcherType.Persistent);
  if (gone.has("persistentRecursive") && !watches.has("persistentRecursive", serverPath)) out.push(WatcherType.PersistentRecursive);
  return out;
}

/** 3.5-3.8 know only Data/Children/Any: a persistent watch sits in the data (and child) table. */
function typesBefore39(watches: WatchRegistry, serverPath: string, gone: Set<WatchKind>): number[] {
  const dataTable = gone.has("data") || gone.has("exist") || gone.has("persistent") || gone.has("persistentRecursive");
  const childTable = gone.has("child") || gone.has("persistent");
  const dropData = dataTable && !watches.needsServerTable("data", serverPath);
  const dropChild = childTable && !watches.needsServerTable("child", serverPath);
  if (!dropData && !dropChild) return [];
  return [dropData && dropChild ? WatcherType.Any : dropData ? WatcherType.Data : WatcherType.Children];
}

async function removeOnServer(ctx: RemovalContext, op: string, path: string, type: number, persistent: boolean): Promise<void> {
  try {
    await ctx.calls.call(Ops.removeWatches, { path, type }, { op, path, needs: NEEDS, signal: ctx.signal, untraced: true });
  } catch (e) {
    if (!(e instanceof ZooKeeperError && e.code === ErrorCode.NOWATCHER)) throw e;
    // A one-shot watch may have fired (and so left the server) while this request was under way.
    // A persistent watch never fires away: the server not holding it is a fault the caller must see.
    if (persistent) {
      throw new ZooKeeperError(ErrorCode.NOWATCHER, "the server held no such persistent watch (removed locally)", { op, path });
    }
  }
}

function kindsFor(op: string, path: string, type: number): WatchKind[] {
  switch (type) {
    case WatcherType.Children:
      return ["child"];
    case WatcherType.Data:
      return ["data", "exist"];
    case WatcherType.Any:
      return ["data", "exist", "child", "persistent", "persistentRecursive"];
    case WatcherType.Persistent:
      return ["persistent"];
    case WatcherType.PersistentRecursive:
      return ["persistentRecursive"];
    default:
      throw badArguments(`type must be a WatcherType, got ${String(type)}`, op, path);
  }
}
