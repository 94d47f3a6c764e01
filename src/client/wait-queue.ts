// Requests made while no connection is up: held in order until the next connection is primed, but
// each for at most `waitMs`, after which it fails CONNECTIONLOSS rather than wait forever.
import { ErrorCode } from "../protocol/constants.ts";
import type { InFlight } from "./connection.ts";
import { type Clock, type TimerHandle, systemClock } from "./clock.ts";
import { Fifo } from "./fifo.ts";

interface Waiting {
  frame: Uint8Array;
  inFlight: InFlight;
  timer: TimerHandle | null;
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

  push(frame: Uint8Array, inFlight: InFlight, waitMs: number): void {
    const w: Waiting = { frame, inFlight, timer: null };
    w.timer = this.clock.setTimeout(() => {
      w.timer = null;
      if (this.remove(w)) inFlight.onFail(ErrorCode.CONNECTIONLOSS, `not connected for ${waitMs} ms`);
    }, waitMs);
    this.items.push(w);
  }

  /** Hands every waiting request to `send`, oldest first. */
  release(send: (frame: Uint8Array, inFlight: InFlight) => void): void {
    for (const w of this.items.drain()) {
      if (w.timer) this.clock.clearTimeout(w.timer);
      send(w.frame, w.inFlight);
    }
  }

  failAll(code: number, reason: string): void {
    for (const w of this.items.drain()) {
      if (w.timer) this.clock.clearTimeout(w.timer);
      w.inFlight.onFail(code, reason);
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
