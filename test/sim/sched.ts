// The simulated clock and scheduler. Until the client takes an injected Clock (issue 17 item 2), the
// sim installs this clock in place of the global setTimeout/clearTimeout/performance.now/Date.now/
// Math.random for the duration of one seed (test code only; restored afterwards). Every event has
// an owner ("actor"): timers inherit the actor that was running when they were set, so pausing a
// client process holds its deliveries and timers and releases them when the pause ends.
//
// Speed: the queue is a binary heap on (at, seq), and the events of one simulated instant run as a
// batch of process.nextTick steps instead of one event-loop turn (setImmediate) each. Between two
// events every promise job still runs, as in Node (which drains microtasks after each callback):
// a step queues a microtask that queues the next nextTick step, and Node runs nextTick callbacks
// only once the microtask queue is empty. The loop yields to the real event loop (setImmediate)
// when simulated time advances, so unhandled rejections are still reported per instant.
import { rng } from "../support/prng.ts";
const real = { setTimeout, clearTimeout, setImmediate, perfNow: performance.now.bind(performance), dateNow: Date.now, random: Math.random };

const timersFirst = process.env.SIM_PAUSE_ORDER === "timers-first";

interface Ev {
  at: number;
  seq: number;
  actor: string;
  /** The callback; one that returns false ran none of the actor's code (a read on a socket already closed). */
  fn: () => unknown;
  cancelled: boolean;
  io: boolean;
}

const before = (a: Ev, b: Ev): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export class Sched {
  now = 0;
  actor = "driver";
  readonly random: () => number;
  private seq = 0;
  /** Min-heap on (at, seq). Cancelled events stay until they reach the top. */
  private q: Ev[] = [];
  private readonly paused = new Map<string, Ev[]>();
  private readonly resumed = new Map<string, number>();
  /** Actors resumed from a pause that have not run a callback since: they cannot have acted yet. */
  private readonly waking = new Set<string>();
  readonly errors: unknown[] = [];
  steps = 0;
  /** Called after every event, once its promise jobs have run (the driver's invariant checks). */
  afterStep: (() => void) | null = null;
  /** The client's Clock seam (recipes still read the globals, which install() replaces). */
  readonly clock = {
    now: (): number => this.now,
    setTimeout: (fn: () => void, ms: number): unknown => this.at(ms, this.actor, fn),
    clearTimeout: (h: unknown): void => {
      if (h) (h as Ev).cancelled = true;
    },
  };

  constructor(seed: number) {
    this.random = rng(seed);
  }

  at(ms: number, actor: string, fn: () => unknown, io = false): Ev {
    const ev: Ev = { at: this.now + Math.max(0, ms), seq: this.seq++, actor, fn, cancelled: false, io };
    const held = this.paused.get(actor);
    if (held) held.push(ev);
    else this.push(ev);
    return ev;
  }

  private push(ev: Ev): void {
    const q = this.q;
    let i = q.length;
    q.push(ev);
    while (i > 0) {
      const up = (i - 1) >> 1;
      const parent = q[up]!;
      if (!before(ev, parent)) break;
      q[i] = parent;
      i = up;
    }
    q[i] = ev;
  }

  private pop(): Ev {
    const q = this.q;
    const top = q[0]!;
    const last = q.pop()!;
    const n = q.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && before(q[r]!, q[l]!) ? r : l;
        if (!before(q[c]!, last)) break;
        q[i] = q[c]!;
        i = c;
      }
      q[i] = last;
    }
    return top;
  }

  pause(actor: string): void {
    if (this.paused.has(actor)) return;
    const held: Ev[] = [];
    const rest: Ev[] = [];
    for (const e of this.q) (e.actor === actor ? held : rest).push(e);
    held.sort((a, b) => (before(a, b) ? -1 : 1));
    this.q = [];
    for (const e of rest) this.push(e);
    this.paused.set(actor, held);
  }

  resume(actor: string): void {
    const held = this.paused.get(actor);
    if (!held) return;
    this.paused.delete(actor);
    this.resumed.set(actor, this.now);
    this.waking.add(actor);
    // A resumed process is woken by its readable sockets: the I/O that piled up during the pause is
    // read before its overdue timers run (Node's loop returns from epoll into the poll phase).
    const due = (e: Ev): boolean => e.at <= this.now;
    // SIM_PAUSE_ORDER=timers-first models a loop blocked inside a timer callback instead: the other
    // overdue timers run before the poll phase reads the sockets.
    const ioFirst = !timersFirst;
    const order = [...held.filter((e) => due(e) && e.io === ioFirst), ...held.filter((e) => due(e) && e.io !== ioFirst), ...held.filter((e) => !due(e))];
    for (const e of order) {
      if (e.at < this.now) {
        e.at = this.now;
        e.seq = this.seq++;
      }
      this.push(e);
    }
  }

  isPaused(actor: string): boolean {
    return this.paused.has(actor);
  }

  /** Resumed from a pause, and none of its callbacks has run since: nothing it believes can have been acted on. */
  isWaking(actor: string): boolean {
    return this.waking.has(actor);
  }

  /** True in the simulated instant at which the actor was resumed (its piled-up callbacks run now). */
  justResumed(actor: string): boolean {
    return this.resumed.get(actor) === this.now;
  }

  /** Runs events until `until` (simulated ms); every promise job runs between two events. */
  run(until: number): Promise<void> {
    return new Promise<void>((resolve) => {
      let instant = -1;
      const step = (): void => {
        this.actor = "driver";
        if (instant >= 0 && this.afterStep) this.afterStep();
        const q = this.q;
        while (q.length > 0 && q[0]!.cancelled) this.pop();
        if (q.length === 0 || q[0]!.at > until) {
          this.now = Math.max(this.now, until);
          real.setImmediate(resolve);
          return;
        }
        // A new simulated instant: let the real event loop turn once first.
        if (instant >= 0 && q[0]!.at !== instant) {
          instant = -1;
          real.setImmediate(step);
          return;
        }
        const ev = this.pop();
        instant = ev.at;
        if (ev.at > this.now) this.now = ev.at;
        this.actor = ev.actor;
        this.steps++;
        try {
          if (ev.fn() !== false) this.waking.delete(ev.actor);
        } catch (e) {
          this.errors.push(e);
        }
        queueMicrotask(next);
      };
      const next = (): void => void process.nextTick(step);
      process.nextTick(step);
    });
  }

  /** Replaces the global clock, timers and Math.random; returns the restore function. */
  install(): () => void {
    const g = globalThis as unknown as Record<string, unknown>;
    const saved = { st: g.setTimeout, ct: g.clearTimeout, si: g.setInterval, ci: g.clearInterval, limit: Error.stackTraceLimit };
    const make = (fn: (...a: unknown[]) => void, ms: unknown, args: unknown[]): object => {
      const ev = this.at(Number(ms) || 0, this.actor, args.length === 0 ? (fn as () => void) : () => fn(...args));
      return { ev, unref() { return this; }, ref() { return this; }, hasRef: () => true, [Symbol.toPrimitive]: () => ev.seq };
    };
    g.setTimeout = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => make(fn, ms, args);
    g.clearTimeout = (h: unknown) => {
      const ev = (h as { ev?: Ev } | null)?.ev;
      if (ev) ev.cancelled = true;
    };
    g.setInterval = () => {
      throw new Error("sim: setInterval is not simulated");
    };
    performance.now = () => this.now;
    Date.now = () => 1_700_000_000_000 + Math.floor(this.now);
    Math.random = this.random;
    // Nothing in a seed reads a stack; capturing them was a tenth of the time (ZooKeeperError, Fail).
    Error.stackTraceLimit = 0;
    return () => {
      g.setTimeout = saved.st;
      g.clearTimeout = saved.ct;
      g.setInterval = saved.si;
      performance.now = real.perfNow;
      Date.now = real.dateNow;
      Math.random = real.random;
      Error.stackTraceLimit = saved.limit;
    };
  }
}
