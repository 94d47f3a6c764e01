// removeWatches / removeAllWatches: drop watchers locally, tell each one (DataWatchRemoved,
// ChildWatchRemoved, PersistentWatchRemoved), and ask the server to drop its watch only when no
// other local watcher still needs that server table for the path (the server keeps one watch per
// connection and path, not one per watcher).
import { ErrorCode, EventType, KeeperState, OpCode, WatcherType } from "../protocol/constants.ts";
import { Ops } from "../protocol/ops.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import type { Request } from "./request.ts";
import type { WatchedEvent, Watcher } from "./types.ts";
import type { WatchKind, WatchRegistry } from "./watches.ts";

export interface RemovalContext {
  watches: WatchRegistry;
  deliver(watchers: Iterable<Watcher>, event: WatchedEvent): void;
  request(req: Request<void>): Promise<void>;
}

export async function removeWatchers(
  ctx: RemovalContext,
  op: string,
  path: string,
  serverPath: string,
  type: number,
  watcher: Watcher | undefined,
): Promise<void> {
  const removed: [Watcher, EventType][] = [];
  let dataTable = false;
  let childTable = false;
  for (const kind of kindsFor(op, path, type)) {
    for (const w of ctx.watches.remove(kind, serverPath, watcher)) {
      removed.push([w, kind === "child" ? EventType.ChildWatchRemoved : kind === "data" || kind === "exist" ? EventType.DataWatchRemoved : EventType.PersistentWatchRemoved]);
      if (kind !== "child") dataTable = true;
      if (kind === "child" || kind === "persistent") childTable = true;
    }
  }
  if (removed.length === 0) throw new ZooKeeperError(ErrorCode.NOWATCHER, "no such watcher is registered", { op, path });
  for (const [w, evType] of removed) ctx.deliver([w], { type: evType, state: KeeperState.SyncConnected, path });
  const dropData = dataTable && !ctx.watches.needsServerTable("data", serverPath);
  const dropChild = childTable && !ctx.watches.needsServerTable("child", serverPath);
  if (!dropData && !dropChild) return;
  // Data/Children/Any only: Persistent (4) and PersistentRecursive (5) need a 3.9 server.
  const serverType = dropData && dropChild ? WatcherType.Any : dropData ? WatcherType.Data : WatcherType.Children;
  try {
    await ctx.request({ opcode: OpCode.removeWatches, op, path, write: (w) => Ops.removeWatches.writeRequest(w, { path: serverPath, type: serverType }) });
  } catch (e) {
    // The server may have fired (and so dropped) its watch already; locally it is gone either way.
    if (!(e instanceof ZooKeeperError && e.code === ErrorCode.NOWATCHER)) throw e;
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
