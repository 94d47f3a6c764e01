// How the recipes report: leadership and lock changes on their diagnostics channels, background failures as "error" events.
import type { ListenerSource, ZooKeeper } from "../client/index.ts";
import { emitIsolated } from "../client/index.ts";
import * as dc from "node:diagnostics_channel";

/** What `zookeeper-ts:election` and `zookeeper-ts:lock` carry (docs/observability.md). */
interface RecipeMessage {
  path: string;
  id: string;
  event: "elected" | "revoked" | "acquired" | "lost" | "released";
  reason?: string;
  /** The fencing token, decimal. */
  token?: string;
}

const recipeChannels = { election: dc.channel("zookeeper-ts:election"), lock: dc.channel("zookeeper-ts:lock") };

/** Publishes a recipe's leadership or lock change on its diagnostics channel; `message` is built only when subscribed. */
export function publishRecipe(kind: "election" | "lock", message: () => RecipeMessage): void {
  const ch = recipeChannels[kind];
  if (ch.hasSubscribers) ch.publish(message());
}

/** A recipe's background failure, as an "error" event when someone listens (isolated like every recipe event). */
export function reportError(zk: ZooKeeper, recipe: ListenerSource & { listenerCount(event: "error"): number }, name: string, e: unknown): void {
  if (recipe.listenerCount("error") > 0) emitIsolated(zk, recipe, name, "error", e instanceof Error ? e : new Error(String(e)));
}
