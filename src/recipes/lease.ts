// How long a holder may trust its session, and a job run under that trust.
import type { TimerHandle, ZooKeeper } from "../client/index.ts";
import { TERMINAL } from "./reconnects.ts";

/**
 * How long the holder of a lock or a leadership may trust its session (`zk.heardWithin`): until "disconnected",
 * while connected and a request the server answered was sent within the read timeout (2/3 of the session
 * timeout); until "expired", while the session lives and within 90% of the session timeout. A process
 * resuming from a pause reads false before any timer or socket callback has run.
 */
export class Lease {
  private readonly zk: ZooKeeper;
  private readonly until: "disconnected" | "expired";
  private timer: TimerHandle | null = null;

  constructor(zk: ZooKeeper, until: "disconnected" | "expired") {
    this.zk = zk;
    this.until = until;
  }

  get valid(): boolean {
    if (this.until === "disconnected") return this.zk.state === "connected" && this.zk.heardWithin(this.ms);
    return !TERMINAL.has(this.zk.state) && this.zk.heardWithin(this.ms);
  }

  private get ms(): number {
    return this.until === "disconnected" ? this.zk.readTimeout : this.zk.negotiatedTimeout * 0.9;
  }

  /** Calls `lapsed` when the lease may have run out (on zk.clock); `arm(null)` disarms. */
  arm(lapsed: (() => void) | null): void {
    if (this.timer !== null) this.zk.clock.clearTimeout(this.timer);
    this.timer = lapsed === null ? null : this.zk.clock.setTimeout(lapsed, this.zk.leaseRemaining(this.ms));
  }
}

/** Runs `fn` with a signal that aborts at the first loss `subscribe` reports, or at once when `held()` is already false. */
export async function runHeld<T>(
  fn: (signal: AbortSignal) => Promise<T> | T,
  what: string,
  held: () => boolean,
  subscribe: (lost: (reason: string) => void) => () => void,
): Promise<T> {
  const ac = new AbortController();
  const lost = (reason: string): void => ac.abort(new Error(`${what}: ${reason}`, { cause: reason }));
  const unsubscribe = subscribe(lost);
  try {
    if (!held()) lost("disconnected");
    return await fn(ac.signal);
  } finally {
    unsubscribe();
  }
}
