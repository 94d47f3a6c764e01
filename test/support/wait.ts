// Waiting for facts, not time: the one place tests wait. `until` polls a condition with a deadline,
// `nextEvent` takes an emitter's next event with a deadline, `never` asserts that something does
// not happen during a quiet period (the only wait that must be about time: say how long and why).
import type { EventEmitter } from "node:events";

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Lets real time pass: how long a fault lasts, the pace of a workload, a server's polling step. Never a
 * wait for a fact (that is `until` or `nextEvent`) nor a wait for nothing to happen (that is `never`).
 */
export const hold = pause;

/** Polls `check` until it holds; the error names what never happened. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000, stepMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await pause(stepMs);
  }
}

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

/** Resolves after `quietMs` if `happened` never held meanwhile; rejects naming `what` as soon as it does. */
export async function never(what: string, happened: () => boolean | Promise<boolean>, quietMs: number, stepMs = 10): Promise<void> {
  const end = performance.now() + quietMs;
  do {
    if (await happened()) throw new Error(`${what} happened within ${quietMs} ms`);
    await pause(stepMs);
  } while (performance.now() < end);
  if (await happened()) throw new Error(`${what} happened within ${quietMs} ms`);
}

/** Resolves once `client.state` reads `state`, waking on its "state" events (a ZooKeeper client); rejects after `timeoutMs`. */
export async function untilState(client: EventEmitter & { readonly state: string }, state: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (client.state !== state) {
    const left = deadline - performance.now();
    if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for the state ${state} (it is ${client.state})`);
    await nextEvent(client, "state", left, `the state ${state} (it is ${client.state})`);
  }
}
