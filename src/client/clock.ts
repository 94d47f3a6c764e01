// The client's only source of time: every timer and every reading of "now" in the session, the
// connection and their helpers goes through a Clock, so tests (and the simulation) can run the
// client's own timing (read timeout, pings, client-side expiry, stall detection) on virtual time.
// The default is the runtime's timers and performance.now().
import { clearImmediate, setImmediate } from "node:timers";

/** An opaque timer handle, given back to clearTimeout. */
export type TimerHandle = unknown;

/** Timers and "now" for the client's own timing (ConnectOptions.clock; default `systemClock`). */
export interface Clock {
  /** Milliseconds on a monotonic scale (performance.now() by default). */
  now(): number;
  /** Calls `fn` once, `ms` milliseconds from now on this clock. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer of this clock's setTimeout (a handle already fired or cleared is ignored). */
  clearTimeout(handle: TimerHandle): void;
  /**
   * Wall time, ms since the epoch, read at each use. Only Kerberos reads it (its timestamps must be within the
   * KDC's clock skew), so a step of the system clock (NTP, a VM resumed) is seen by the next login. `systemClock`
   * reads Date.now(); a clock without it gets Date.now() once, then its own progress (virtual time moves the wall
   * with it). A test clock sets it to play a skewed or stepped host.
   */
  wallTime?(): number;
}

// Read once: Node's globalThis.performance is an accessor, a getter call on every reading of the clock otherwise.
const perf = globalThis.performance;

/** The default Clock: performance.now(), the global setTimeout/clearTimeout, and Date.now() as wall time. */
export const systemClock: Clock = {
  now: () => perf.now(),
  wallTime: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Runs `fn` on a later turn of the event loop, after the promise jobs of this one: the runtime's setImmediate
 * under `systemClock`, a 0 ms timer of any other clock (whose time then decides). Not a 0 ms timer under
 * systemClock: Node keeps a list of timers per duration, made when the first is set and dropped when the last
 * goes, so a timer set and cleared once per session makes and drops a list each time.
 */
export function nextTurn(clock: Clock, fn: () => void): TimerHandle {
  return clock === systemClock ? setImmediate(fn) : clock.setTimeout(fn, 0);
}

/** Cancels what nextTurn(clock, …) scheduled (a handle that already ran is ignored). */
export function cancelTurn(clock: Clock, handle: TimerHandle): void {
  if (clock === systemClock) clearImmediate(handle as ReturnType<typeof setImmediate>);
  else clock.clearTimeout(handle);
}

/**
 * `clock` whose timers call `onLate` first when they fire more than `lateMs` after they were due: the
 * process was not running on time (SIGSTOP, a long GC, a blocked loop).
 */
export function lateAware(clock: Clock, onLate: () => void, lateMs = 100): Clock {
  return clock.wallTime ? new LateAwareWallClock(clock, onLate, lateMs) : new LateAwareClock(clock, onLate, lateMs);
}

/** lateAware's clock: one object per session, its methods shared (a closure per method was four per session). */
class LateAwareClock implements Clock {
  protected readonly clock: Clock;
  private readonly onLate: () => void;
  private readonly lateMs: number;

  constructor(clock: Clock, onLate: () => void, lateMs: number) {
    this.clock = clock;
    this.onLate = onLate;
    this.lateMs = lateMs;
  }

  now(): number {
    return this.clock.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const clock = this.clock;
    const due = clock.now() + ms;
    return clock.setTimeout(() => {
      if (clock.now() - due > this.lateMs) this.onLate();
      fn();
    }, ms);
  }

  clearTimeout(handle: TimerHandle): void {
    this.clock.clearTimeout(handle);
  }
}

/** lateAware's clock over a clock that has wallTime(): the same, with the method (a class of its own, not a closure per session). */
class LateAwareWallClock extends LateAwareClock {
  wallTime(): number {
    return this.clock.wallTime!();
  }
}

/** Waits `ms` on `clock`; resolves early when `signal` aborts (or has). */
export function sleepOn(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const wake = (): void => {
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", wake);
      resolve();
    };
    const timer = clock.setTimeout(wake, ms);
    if (signal.aborted) wake();
    else signal.addEventListener("abort", wake);
  });
}

/**
 * Wall time (ms since the epoch) in whole ms: the clock's wallTime() at each use, or, for a clock without one,
 * Date.now() once, then the clock's monotonic progress (Kerberos timestamps need the wall clock; the client's
 * own timing keeps to `clock`).
 */
export function wallTime(clock: Pick<Clock, "now" | "wallTime">): () => number {
  if (clock.wallTime) return () => Math.floor(clock.wallTime!());
  const base = Date.now();
  const start = clock.now();
  return () => Math.floor(base + (clock.now() - start));
}
