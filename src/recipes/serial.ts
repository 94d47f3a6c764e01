// One job at a time (checks, resigns and closes never interleave), and promises waiting for an outcome.
import type { Clock, TimerHandle } from "../client/index.ts";

/** Runs jobs one after another, so checks, resigns and closes never interleave. */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    this.tail = result.catch(() => {});
    return result;
  }
}

/** Promises waiting for an outcome (e.g. leadership), each with an optional abort signal and timeout. */
export class Waiters {
  private readonly set = new Set<{ resolve(): void; reject(e: unknown): void }>();
  private readonly clock: Clock;

  /** Timeouts run on `clock` (the client's, `zk.clock`). */
  constructor(clock: Clock) {
    this.clock = clock;
  }

  wait(signal: AbortSignal | undefined, timeoutMs: number | undefined, timeoutError: () => Error): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      let timer: TimerHandle | undefined;
      const done = (): void => {
        this.set.delete(waiter);
        if (timer !== undefined) this.clock.clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
      };
      const waiter = {
        resolve: () => (done(), resolve()),
        reject: (e: unknown) => (done(), reject(e)),
      };
      const onAbort = (): void => waiter.reject(signal!.reason);
      this.set.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (timeoutMs !== undefined) timer = this.clock.setTimeout(() => waiter.reject(timeoutError()), timeoutMs);
    });
  }

  resolveAll(): void {
    for (const w of [...this.set]) w.resolve();
  }

  rejectAll(error: unknown): void {
    for (const w of [...this.set]) w.reject(error);
  }
}
