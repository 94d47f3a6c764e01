// While connected to a read-only server, look for a read-write one with the `isro` four-letter word
// (Java client: backoff from 100 ms doubling to 60 s) and report it so the session can move there.
import type { HostPort } from "../../protocol/connect-string.ts";
import { type Clock, type TimerHandle, systemClock } from "../clock.ts";

export interface ReadOnlyProbeOptions {
  hosts: readonly HostPort[];
  current: HostPort;
  fourLetter: (host: HostPort, cmd: string) => Promise<string>;
  /** Still worth probing (the session is read-only on `current`). */
  active(): boolean;
  onFound(host: HostPort): void;
  clock?: Clock;
}

export class ReadOnlyProbe {
  private timer: TimerHandle | null = null;
  private stopped = false;
  private backoff = 100;
  private readonly o: ReadOnlyProbeOptions;
  private readonly clock: Clock;

  constructor(o: ReadOnlyProbeOptions) {
    this.o = o;
    this.clock = o.clock ?? systemClock;
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.tick(), this.backoff);
    this.backoff = Math.min(this.backoff * 2, 60_000);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    for (const h of this.o.hosts) {
      if (this.stopped || !this.o.active()) return;
      if (h.host === this.o.current.host && h.port === this.o.current.port) continue;
      const answer = await this.o.fourLetter(h, "isro").catch(() => "");
      if (answer === "rw" && !this.stopped && this.o.active()) {
        this.stop();
        this.o.onFound(h);
        return;
      }
    }
    this.arm();
  }
}
