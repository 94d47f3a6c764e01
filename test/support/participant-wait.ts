// Waiting helpers for recipe tests: an event with a deadline, a condition polled until true.
import type { EventEmitter } from "node:events";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The next `event` of `emitter` (its arguments), or a rejection naming what did not happen. */
export function nextEvent<T extends unknown[] = unknown[]>(emitter: EventEmitter, event: string, timeoutMs: number, what = event): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onEvent = (...args: unknown[]): void => {
      clearTimeout(timer);
      resolve(args as T);
    };
    const timer = setTimeout(() => {
      emitter.off(event, onEvent);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
    }, timeoutMs);
    emitter.once(event, onEvent);
  });
}

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

export { sleep };
