// Requests made while no connection is up: held in order until the next connection is primed, but
// each for at most `waitMs`, after which it fails CONNECTIONLOSS rather than wait forever.
import { ErrorCode } from "../../protocol/constants.ts";
import { type Clock, type TimerHandle, systemClock } from "../clock.ts";
import { Fifo } from "../wire/fifo.ts";
import type { Pending } from "../wire/call-record.ts";

interface Waiting {
  p: Pending;
  timer: TimerHandle | null;
  unlisten?: () => void;
}

export class WaitQueue {
  private readonly items = new Fifo<Waiting>();
  private readonly clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.clock = clock;
  }

  get length(): number {
    return this.items.length;
  }

  push(p: Pending, waitMs: number): void {
    const w: Waiting = { p, timer: null };
    const signal = p.call.signal;
    w.timer = this.clock.setTimeout(() => {
      w.timer = null;
      w.unlisten?.();
      if (this.remove(w)) p.onFail(ErrorCode.CONNECTIONLOSS, `not connected for ${waitMs} ms`, false);
    }, waitMs);
    // An aborted caller has rejected already: drop the request unsent (its promise is settled).
    if (signal) {
      const onAbort = (): void => {
        if (this.remove(w) && w.timer) this.clock.clearTimeout(w.timer);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      w.unlisten = () => signal.removeEventListener("abort", onAbort);
    }
    this.items.push(w);
  }

  /** Hands every waiting request to `send`, oldest first. */
  release(send: (p: Pending) => void): void {
    for (const w of this.items.drain()) {
      if (w.timer) this.clock.clearTimeout(w.timer);
      w.unlisten?.();
      send(w.p);
    }
  }

  failAll(code: number, reason: string): void {
    if (this.items.length === 0) return;
    for (const w of this.items.drain()) {
      if (w.timer) this.clock.clearTimeout(w.timer);
      w.unlisten?.();
      w.p.onFail(code, reason, false);
    }
  }

  private remove(target: Waiting): boolean {
    let found = false;
    for (const w of this.items.drain()) {
      if (w === target) found = true;
      else this.items.push(w);
    }
    return found;
  }
}
