// The simulated clock and scheduler. Until the client takes an injected Clock (issue 17 item 2), the
// sim installs this clock in place of the global setTimeout/clearTimeout/performance.now/Date.now/
// Math.random for the duration of one seed (test code only; restored afterwards). Every event has
// an owner ("actor"): timers inherit the actor that was running when they were set, so pausing a
// client process holds its deliveries and timers and releases them when the pause ends.
import { rng } from "../support/prng.ts";
const real = { setTimeout, clearTimeout, setImmediate, perfNow: performance.now.bind(performance), dateNow: Date.now, random: Math.random };

const timersFirst = process.env.SIM_PAUSE_ORDER === "timers-first";


interface Ev {
  at: number;
  seq: number;
  actor: string;
  fn: () => void;
  cancelled: boolean;
  io: boolean;
}

export class Sched {
  now = 0;
  actor = "driver";
  readonly random: () => number;
  private seq = 0;
  private q: Ev[] = [];
  private readonly paused = new Map<string, Ev[]>();
  readonly errors: unknown[] = [];
  steps = 0;
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

  at(ms: number, actor: string, fn: () => void, io = false): Ev {
    const ev: Ev = { at: this.now + Math.max(0, ms), seq: this.seq++, actor, fn, cancelled: false, io };
    const held = this.paused.get(actor);
    if (held) held.push(ev);
    else this.insert(ev);
    return ev;
  }

  private insert(ev: Ev): void {
    let i = this.q.length;
    while (i > 0 && (this.q[i - 1]!.at > ev.at || (this.q[i - 1]!.at === ev.at && this.q[i - 1]!.seq > ev.seq))) i--;
    this.q.splice(i, 0, ev);
  }

  pause(actor: string): void {
    if (this.paused.has(actor)) return;
    const held: Ev[] = [];
    this.q = this.q.filter((e) => (e.actor === actor ? (held.push(e), false) : true));
    this.paused.set(actor, held);
  }

  resume(actor: string): void {
    const held = this.paused.get(actor);
    if (!held) return;
    this.paused.delete(actor);
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
      this.insert(e);
    }
  }

  isPaused(actor: string): boolean {
    return this.paused.has(actor);
  }

  /** Runs events until `until` (simulated ms), draining promise jobs after each. */
  async run(until: number): Promise<void> {
    while (this.q.length > 0 && this.q[0]!.at <= until) {
      const ev = this.q.shift()!;
      if (ev.cancelled) continue;
      this.now = Math.max(this.now, ev.at);
      this.actor = ev.actor;
      this.steps++;
      try {
        ev.fn();
      } catch (e) {
        this.errors.push(e);
      }
      await new Promise<void>((r) => real.setImmediate(r));
      this.actor = "driver";
    }
    this.now = Math.max(this.now, until);
  }

  /** Replaces the global clock, timers and Math.random; returns the restore function. */
  install(): () => void {
    const g = globalThis as unknown as Record<string, unknown>;
    const saved = { st: g.setTimeout, ct: g.clearTimeout, si: g.setInterval, ci: g.clearInterval };
    const make = (fn: (...a: unknown[]) => void, ms: unknown, args: unknown[]): object => {
      const ev = this.at(Number(ms) || 0, this.actor, () => fn(...args));
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
    return () => {
      g.setTimeout = saved.st;
      g.clearTimeout = saved.ct;
      g.setInterval = saved.si;
      performance.now = real.perfNow;
      Date.now = real.dateNow;
      Math.random = real.random;
    };
  }
}
