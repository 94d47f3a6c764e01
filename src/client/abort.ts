// Per-call cancellation: `{ signal }` on every operation. An abort rejects the call at once with the
// signal's reason; a request still waiting for a connection is never sent, and a watcher the call was
// to register is not registered when the (late) reply arrives. A request already on the wire may still
// apply on the server: an abort only stops us waiting for its answer.
import { setMaxListeners } from "node:events";
import { badArguments } from "./errors.ts";
import type { CallOptions } from "./types.ts";

/** The signal of `options`, validated (BADARGUMENTS for anything but an AbortSignal); throws its reason when aborted. */
export function signalOf(op: string, path: string | undefined, options: CallOptions | undefined): AbortSignal | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== "object") throw badArguments("options must be an object", op, path);
  const s = options.signal;
  if (s === undefined) return undefined;
  if (typeof AbortSignal === "undefined" || !(s instanceof AbortSignal)) throw badArguments("signal must be an AbortSignal", op, path);
  s.throwIfAborted();
  return s;
}

/** Races a promise that cannot itself be cancelled (e.g. a local step) against `signal`. */
export function raceSignal<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => (signal.removeEventListener("abort", onAbort), resolve(v)),
      (e: unknown) => (signal.removeEventListener("abort", onAbort), reject(e)),
    );
  });
}

/**
 * Runs a composite operation (one call of the API made of many requests, some of them concurrent) under a
 * signal of its own that follows `signal`: the caller's signal gets one abort listener, removed when `fn`
 * settles, instead of one per request in flight (Node warns past 10 on one signal). The requests' own
 * listeners go on the composite's signal, which has no such limit; each is removed as its request settles.
 */
export async function compositeSignal<T>(signal: AbortSignal | undefined, fn: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!signal) return fn(undefined);
  signal.throwIfAborted();
  const inner = new AbortController();
  setMaxListeners(0, inner.signal);
  const onAbort = (): void => inner.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await fn(inner.signal);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
