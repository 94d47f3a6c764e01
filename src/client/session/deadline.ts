// A session's connect deadlines, on one timer: connect()'s (start() + connectTimeout, until connect() settles)
// and the running attempt's (its dial's, then its handshake's). The timer is armed for the earlier of the two
// and, when it fires, arms itself again for what is left, so that moving a deadline later costs no timer work.
// While an attempt runs it waits at most the connection's tick at once: the two then share one list of the
// runtime's timers (Node keeps a list per duration, made and dropped as its first timer comes and its last goes).
// When connect()'s deadline passes, its expiry runs first (the session ends with its message), then the
// attempt's (the dial or handshake gives up with the session).
import type { Clock, TimerHandle } from "../clock.ts";
import type { DialDeadline, Expiring } from "../transport/transport.ts";

const nothing: Expiring = { deadlinePassed() {} };

/** Whose connect deadline it is: told when connect()'s deadline passes (the session: no closure made per session). */
export interface DeadlineOwner {
  connectTimedOut(): void;
}

export class ConnectDeadline implements DialDeadline {
  private readonly clock: Clock;
  private readonly owner: DeadlineOwner;
  /** connect()'s deadline; +Infinity before start() and once connect() has settled. */
  private connectAt = Number.POSITIVE_INFINITY;
  /** The running attempt's deadline (+Infinity when none runs), what is told when it passes, and the ms it was given. */
  private attemptAt = Number.POSITIVE_INFINITY;
  private onExpiry: Expiring = nothing;
  private attemptMs = 0;
  /** The longest the timer waits at once: the attempt's connection's tick while an attempt runs. */
  private step = Number.POSITIVE_INFINITY;
  private timer: TimerHandle | null = null;
  /** When the armed timer fires (+Infinity when none is armed). */
  private firesAt = Number.POSITIVE_INFINITY;

  constructor(clock: Clock, owner: DeadlineOwner) {
    this.clock = clock;
    this.owner = owner;
  }

  /**
   * connect() starts at clock time `now`: its deadline is `ms` later. The timer is armed by the first attempt (or by watch()),
   * so that a session that connects at its first try sets one timer for both deadlines.
   */
  start(ms: number, now: number): void {
    this.connectAt = now + ms;
  }

  /** connect()'s deadline is watched from now on, before any attempt's (a SASL login's KDC exchange comes first). */
  watch(): void {
    this.arm();
  }

  /** connect() has settled: its deadline is done (an attempt still running keeps its own). */
  settled(): void {
    this.connectAt = Number.POSITIVE_INFINITY;
    if (this.attemptAt === Number.POSITIVE_INFINITY) this.disarm();
  }

  /** An attempt starts: its dial may take `ms`; the timer waits at most `step` at once until the attempt ends. */
  attempt(ms: number, step: number): void {
    const now = this.clock.now();
    this.attemptAt = now + ms;
    this.attemptMs = ms;
    this.onExpiry = nothing;
    this.step = step;
    this.arm(now);
  }

  /** What is told when the attempt's deadline passes, without moving it (dialWithin sets the dial's). */
  expireWith(onExpiry: Expiring): void {
    this.onExpiry = onExpiry;
  }

  /** The attempt's deadline is `ms` from now (the handshake's), and `onExpiry` is told then. */
  move(ms: number, onExpiry: Expiring): void {
    this.attemptAt = this.clock.now() + ms;
    this.attemptMs = ms;
    this.onExpiry = onExpiry;
    if (this.timer === null || this.firesAt > this.attemptAt) this.arm();
  }

  /** The attempt is over (failed, stopped, or its handshake done): connect()'s deadline alone is left to watch. */
  endAttempt(): void {
    this.attemptAt = Number.POSITIVE_INFINITY;
    this.onExpiry = nothing;
    this.step = Number.POSITIVE_INFINITY;
    // A timer armed for the attempt fires early for connect()'s deadline, and arms itself again for what is left.
    if (this.connectAt === Number.POSITIVE_INFINITY) this.disarm();
    else if (this.timer === null) this.arm();
  }

  private disarm(): void {
    if (this.timer === null) return;
    this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.firesAt = Number.POSITIVE_INFINITY;
  }

  /** The timer fires by the earlier deadline: kept when it already does, cleared when nothing is left to watch. */
  private arm(now?: number): void {
    const due = Math.min(this.connectAt, this.attemptAt);
    if (this.timer !== null) {
      if (this.firesAt <= due && due !== Number.POSITIVE_INFINITY) return;
      this.disarm();
    }
    if (due === Number.POSITIVE_INFINITY) return;
    const at = now ?? this.clock.now();
    const wait = Math.max(0, Math.min(due - at, this.step));
    this.firesAt = at + wait;
    this.timer = this.clock.setTimeout(this.check, wait);
  }

  private readonly check = (): void => {
    this.timer = null;
    this.firesAt = Number.POSITIVE_INFINITY;
    const now = this.clock.now();
    const expiry = this.onExpiry;
    if (now >= this.connectAt) {
      this.connectAt = this.attemptAt = Number.POSITIVE_INFINITY;
      this.onExpiry = nothing;
      this.owner.connectTimedOut();
      expiry.deadlinePassed(this.attemptMs);
      return;
    }
    if (now >= this.attemptAt) {
      this.attemptAt = Number.POSITIVE_INFINITY;
      this.onExpiry = nothing;
      expiry.deadlinePassed(this.attemptMs);
    }
    this.arm(now);
  };
}
