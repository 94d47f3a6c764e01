// A manual Clock for unit tests of the client's own timers: time moves only when the test says so.
// advance(ms) fires due timers in time order (letting promise continuations run between them);
// jump(ms) moves time without firing anything, like a process that was paused (SIGSTOP, long GC).
import { setImmediate } from "node:timers";
import type { Clock, TimerHandle } from "../../../src/client/clock.ts";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Lets queued promise continuations and microtasks run (not a sleep: no time passes). */
export function settle(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

export class ManualClock implements Clock {
  private t = 1000;
  private seq = 0;
  private timers = new Set<Timer>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: Timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as Timer);
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (;;) {
      let next: Timer | null = null;
      for (const x of this.timers) if (x.at <= end && (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq))) next = x;
      if (!next) break;
      this.timers.delete(next);
      this.t = Math.max(this.t, next.at);
      next.fn();
      await settle();
    }
    this.t = end;
    await settle();
  }

  /** Moves time forward without firing timers (the process did not run). */
  jump(ms: number): void {
    this.t += ms;
  }
}
