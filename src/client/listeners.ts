// The one listener-error policy of the client and the recipes (docs/client.md "Listener errors"): every listener
// runs on its own, so one that throws neither stops the others nor the emitter's bookkeeping, and what it
// threw is never dropped: the client logs it at error level and emits it as "listenerError"; with neither
// a logger nor a "listenerError" listener, it goes to console.error.
import type { Logger } from "./types.ts";
import { microtask } from "./wire/microtask.ts";

/** A listener (or watcher) threw: what the client's `"listenerError"` event carries. */
export interface ListenerError {
  /** Whose listener threw: "ZooKeeper" (a `"state"` listener or a watcher), or the recipe's class name. */
  source: string;
  /** The event the listener was called for: "state", "watcher", "elected", "revoked", "lost", "change", ... */
  event: string;
  /** What the listener threw. */
  error: unknown;
}

/** Where listener errors are reported: a `ZooKeeper` client (`zk.reportListenerError`). */
export interface ListenerErrorSink {
  /** Reports one listener error by the client's policy. */
  reportListenerError(info: ListenerError): void;
}

/**
 * What `emitIsolated` needs of an emitter: its listeners of an event (a node:events EventEmitter, a `ZooKeeper`,
 * a recipe, or any `TypedEmitter`).
 */
export interface ListenerSource {
  /** The listeners of `event` as registered, in call order. */
  rawListeners(event: string): readonly unknown[];
}

/**
 * Emits `event` on `emitter` (a recipe's, or any EventEmitter built on a client) calling each listener on
 * its own: one that throws is reported to `sink` (the client: logged, and its `"listenerError"` event) and
 * the following listeners still run. Returns whether there was a listener, as `emit` does.
 */
export function emitIsolated(sink: ListenerErrorSink, emitter: ListenerSource, source: string, event: string, ...args: unknown[]): boolean {
  const listeners = emitter.rawListeners(event);
  for (const listener of listeners) {
    try {
      (listener as (...a: unknown[]) => unknown).apply(emitter, args);
    } catch (error) {
      sink.reportListenerError({ source, event, error });
    }
  }
  return listeners.length > 0;
}

/**
 * Runs watchers after the current reply's callbacks, each on its own; one that throws is reported as "watcher".
 * `list` becomes the delivery's own: the caller must not change it afterwards.
 */
export function deliverIsolated<E>(sink: ListenerErrorSink, list: readonly ((event: E) => void)[], event: E): void {
  if (list.length === 0) return;
  // In the same queue as the replies' promise reactions: the order of events and replies holds.
  microtask(() => {
    for (const w of list) {
      try {
        w(event);
      } catch (error) {
        sink.reportListenerError({ source: "ZooKeeper", event: "watcher", error });
      }
    }
  });
}

/** The client's side of the policy: log (when a logger was given), then `"listenerError"`, else console.error. */
export function reportListenerError(client: ListenerSource, logger: Logger | null, info: ListenerError): void {
  const line = describe(info);
  logger?.error(line, info.error);
  const listeners = client.rawListeners("listenerError");
  for (const listener of listeners) {
    try {
      (listener as (i: ListenerError) => unknown).call(client, info);
    } catch (e) {
      // Not reported again (that could loop): logged, or printed when there is no logger.
      (logger ?? globalConsole()).error(`zookeeper: a "listenerError" listener threw: ${message(e)}`, e);
    }
  }
  if (logger === null && listeners.length === 0) globalConsole().error(line, info.error);
}

function describe(info: ListenerError): string {
  const who = info.event === "watcher" ? "a watcher" : `a ${JSON.stringify(info.event)} listener`;
  const of = info.source === "ZooKeeper" ? "" : ` of ${info.source}`;
  return `zookeeper: ${who}${of} threw: ${message(info.error)}`;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The runtime's console, read when used (so a test that patches `console.error` sees the call); typed here because Deno type-checks without the DOM console. */
function globalConsole(): { error(...args: unknown[]): void } {
  return (globalThis as unknown as { console: { error(...args: unknown[]): void } }).console;
}
