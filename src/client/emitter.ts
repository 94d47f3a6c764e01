// The event typing of the public classes (ZooKeeper and the recipes), declared here so their .d.ts stand alone:
// at run time they are node:events EventEmitters, but their types name only this file's TypedEmitter, so a
// consumer needs neither @types/node nor a "types" entry to get typed on/once/off (issue 33). scripts/build.mjs
// puts `/// <reference lib="esnext.disposable" />` at the top of this file's .d.ts: every public class with a
// `[Symbol.asyncDispose]()` imports this file, so its symbol is declared in a consumer whose own lib predates
// explicit resource management (ES2022, say), as @types/node does (not in the source: Deno has it anyway, and
// `deno publish` refuses lib references).
import { EventEmitter } from "node:events";

/** An event map: each event's name and the arguments its listeners get, e.g. `{ state: [state: SessionState] }`. */
export type EventArgs<E> = { [K in keyof E]: unknown[] };

/**
 * The listener methods of `ZooKeeper` and of the recipes, typed by their event map `E` (e.g. `ZooKeeperEvents`):
 * the methods of node:events' EventEmitter, which they are at run time, so they also fit `events.once(zk, "state")`.
 */
export interface TypedEmitter<E extends EventArgs<E>> {
  /** Adds `listener` for `event`; it runs for every emit until removed. */
  on<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Same as `on`. */
  addListener<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Adds `listener` for the next `event` only. */
  once<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Adds `listener` for `event` before the listeners already there. */
  prependListener<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Adds `listener` for the next `event` only, before the listeners already there. */
  prependOnceListener<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Removes `listener` from `event` (the last one added, if added more than once). */
  off<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Same as `off`. */
  removeListener<K extends keyof E>(event: K, listener: (...args: E[K]) => void): this;
  /** Removes every listener of `event`, or of every event. */
  removeAllListeners(event?: keyof E): this;
  /** Calls the listeners of `event` with `args`; true when there was one. */
  emit<K extends keyof E>(event: K, ...args: E[K]): boolean;
  /** The listeners of `event`, in call order. */
  listeners<K extends keyof E>(event: K): ((...args: E[K]) => void)[];
  /** The listeners of `event` as registered (`once` wrappers included), in call order. */
  rawListeners<K extends keyof E>(event: K): ((...args: E[K]) => void)[];
  /** How many listeners `event` has (those that are `listener`, when given). */
  listenerCount<K extends keyof E>(event: K, listener?: (...args: E[K]) => void): number;
  /** The events that have listeners. */
  eventNames(): (string | symbol)[];
  /** Sets the listener count per event above which a possible leak is warned about (default 10; 0: none). */
  setMaxListeners(n: number): this;
  /** The listener count per event above which a possible leak is warned about. */
  getMaxListeners(): number;
}

/** The constructor of a `TypedEmitter`: node:events' EventEmitter, with this file's types. */
export type TypedEmitterConstructor = new <E extends EventArgs<E>>() => TypedEmitter<E>;

/** The base class of `ZooKeeper` and the recipes: node:events' EventEmitter at run time, a `TypedEmitter` in types. */
export const TypedEventEmitter: TypedEmitterConstructor = EventEmitter as unknown as TypedEmitterConstructor;
