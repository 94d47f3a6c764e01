// A linearizability checker for recorded histories (the Wing & Gong search with Lowe's memoization, as
// Porcupine does it), and an exclusion check for lock / leader holds.
//
// A history is a list of operations, each with the client that made it, its key, its invoke and complete
// times on ONE monotonic clock (ms), its outcome and its input/output:
// - "ok": it took effect exactly once, somewhere between invoke and complete, and returned `output`.
// - "fail": a definite answer that it did NOT take effect (a server error such as BADVERSION or NONODE,
//   or a request never written to any link). It is left out of the search. A definite failure is also a
//   claim about the state (a BADVERSION says the version differed at that moment); that claim is not
//   checked here: only "did not apply" is.
// - "unknown": it may or may not have taken effect, at any instant after invoke (its complete time is
//   taken as +Infinity whatever was recorded); its output is unknown. A read-only operation with an unknown
//   outcome says nothing and is dropped.
//
// Keys are independent (each one is its own object), so the history is partitioned by key and each key
// searched alone. Within a key, operations are entries on a time line (calls at invoke, returns at
// complete; a call and a return at the same instant count as concurrent). The search linearizes, at each
// step, one operation whose call comes before the first pending return, applying it to the model; a
// return reached with its operation still pending means the current order cannot be completed, so it
// backtracks. A (linearized set, model state) pair already explored is never explored again. The search
// ends "linearizable" once every ok operation is placed (unknown ones left over are the ones that never
// took effect), "violation" when it has to backtrack past the first step, and "unknown-bound" when it has
// explored `maxStates` pairs or run for `maxMs` (a bound, never a hang).
import { overlaps, type Interval } from "./chaos-history.ts";

/** What the client learnt of an operation's fate. */
export type Outcome = "ok" | "fail" | "unknown";

/** One operation of a history. */
export interface Operation<I, O> {
  /** The client (process) that made it, for messages. */
  client: string;
  /** The object it acts on; keys are checked independently. */
  key: string;
  /** When it was invoked (ms, monotonic clock shared by the whole history). */
  invoke: number;
  /** When it completed (ms); ignored for an unknown outcome (taken as +Infinity). */
  complete: number;
  outcome: Outcome;
  input: I;
  /** The result of an ok operation. */
  output?: O;
  /** Where it ran (e.g. the server that answered), for messages. */
  at?: string;
}

/** A sequential specification of one key. */
export interface Model<S, I, O> {
  /** The state of `key` before the history. */
  init(key: string): S;
  /** The state after `input` applied to `state` with result `output`, or undefined when that is impossible.
   * `output` is undefined for an unknown outcome: any result is acceptable. */
  step(state: S, input: I, output: O | undefined): S | undefined;
  /** A string equal for equal states (the memo key). */
  hash(state: S): string;
  /** True when the operation cannot change the state (such an op with an unknown outcome is dropped). */
  readOnly(input: I): boolean;
  /** One operation, for messages. */
  show(input: I, output: O | undefined): string;
  /** Optional, for speed: a label per operation of one key's history (as searched); two unknown operations
   * with the same label must have the same effect on every state for the rest of the history, so only the
   * first pending one is tried at each step. */
  interchangeable?(ops: readonly Operation<I, O>[]): (string | undefined)[];
}

export type Verdict = "linearizable" | "violation" | "unknown-bound";

/** The result for one key. */
export interface KeyResult {
  key: string;
  /** Operations searched (fail and unknown read-only ones are not). */
  ops: number;
  verdict: Verdict;
  /** (linearized set, state) pairs explored. */
  states: number;
  /** For a violation: what could not be ordered, in a few lines. */
  explanation?: string;
}

/** The result for a whole history. */
export interface CheckResult {
  /** violation if any key has one, else unknown-bound if any key hit the bound, else linearizable. */
  verdict: Verdict;
  keys: KeyResult[];
  /** One line per key that is not linearizable, followed by its explanation; "" when all are. */
  message: string;
}

export interface CheckOptions {
  /** Stop a key's search with unknown-bound after this many explored states (default 2,000,000). */
  maxStates?: number;
  /** Stop a key's search with unknown-bound after this many ms (default 20,000). */
  maxMs?: number;
}

/** Checks every key of `history` against `model`. */
export function checkLinearizable<S, I, O>(history: readonly Operation<I, O>[], model: Model<S, I, O>, opts: CheckOptions = {}): CheckResult {
  const byKey = new Map<string, Operation<I, O>[]>();
  for (const op of history) {
    if (!(op.invoke <= op.complete) && op.outcome !== "unknown") throw new Error(`operation completes before it is invoked: ${JSON.stringify(op)}`);
    if (op.outcome === "ok" && op.output === undefined) throw new Error(`an ok operation without output: ${JSON.stringify(op)}`);
    let ops = byKey.get(op.key);
    if (!ops) byKey.set(op.key, (ops = []));
    ops.push(op);
  }
  const keys = [...byKey.keys()].sort().map((key) => checkKey(key, byKey.get(key)!, model, opts));
  const verdict: Verdict = keys.some((k) => k.verdict === "violation") ? "violation" : keys.some((k) => k.verdict === "unknown-bound") ? "unknown-bound" : "linearizable";
  const message = keys
    .filter((k) => k.verdict !== "linearizable")
    .map((k) => `key ${k.key}: ${k.verdict} (${k.ops} ops, ${k.states} states explored)${k.explanation ? `\n${k.explanation}` : ""}`)
    .join("\n");
  return { verdict, keys, message };
}

// A call or return on the time line, in a doubly linked list the search lifts entries out of.
interface Entry {
  id: number; // index into the key's ops
  call: boolean;
  time: number;
  match: Entry | null; // a call's return
  prev: Entry | null;
  next: Entry | null;
}

function lift(call: Entry): void {
  call.prev!.next = call.next;
  if (call.next) call.next.prev = call.prev;
  const ret = call.match!;
  ret.prev!.next = ret.next;
  if (ret.next) ret.next.prev = ret.prev;
}

function unlift(call: Entry): void {
  const ret = call.match!;
  ret.prev!.next = ret;
  if (ret.next) ret.next.prev = ret;
  call.prev!.next = call;
  if (call.next) call.next.prev = call;
}

function checkKey<S, I, O>(key: string, all: readonly Operation<I, O>[], model: Model<S, I, O>, opts: CheckOptions): KeyResult {
  const maxStates = opts.maxStates ?? 2_000_000;
  const deadline = performance.now() + (opts.maxMs ?? 20_000);
  const ops = all.filter((op) => op.outcome === "ok" || (op.outcome === "unknown" && !model.readOnly(op.input)));
  const n = ops.length;
  const definite = ops.map((op) => op.outcome === "ok");
  const head: Entry = { id: -1, call: false, time: -Infinity, match: null, prev: null, next: null };
  const entries: Entry[] = [];
  ops.forEach((op, id) => {
    const ret: Entry = { id, call: false, time: op.outcome === "ok" ? op.complete : Infinity, match: null, prev: null, next: null };
    const call: Entry = { id, call: true, time: op.invoke, match: ret, prev: null, next: null };
    entries.push(call, ret);
  });
  // By time; at the same instant calls first, so touching operations count as concurrent.
  entries.sort((a, b) => a.time - b.time || (a.call === b.call ? 0 : a.call ? -1 : 1));
  let last = head;
  for (const e of entries) {
    last.next = e;
    e.prev = last;
    last = e;
  }

  // Zobrist hashing of the linearized set; the cache keeps the exact sets behind each hash.
  const words = Math.ceil(n / 32) || 1;
  const bits = new Uint32Array(words);
  const zobrist = Array.from({ length: n }, (_, i) => [mix(i * 2 + 1), mix(i * 2 + 2)] as const);
  let h1 = 0;
  let h2 = 0;
  const cache = new Map<string, Uint32Array[]>();
  let states = 0;
  const seen = (stateHash: string): boolean => {
    const k = `${h1}:${h2}:${stateHash}`;
    const list = cache.get(k);
    if (list?.some((b) => b.every((w, i) => w === bits[i]))) return true;
    if (list) list.push(bits.slice());
    else cache.set(k, [bits.slice()]);
    states++;
    return false;
  };
  const toggle = (id: number): void => {
    bits[id >>> 5] ^= 1 << (id & 31);
    h1 ^= zobrist[id][0];
    h2 ^= zobrist[id][1];
  };

  // The candidates at a step: every pending call before the first pending return. A read-only one that
  // fits the state now is placed now, alone: every operation that precedes it in real time is placed
  // already, and a read moved earlier changes no state any other operation sees, so if any order completes
  // the history, one with this read here does. Otherwise definite operations are tried first (the likely
  // order); of unknown operations the model calls interchangeable, only the first pending one is tried
  // (any other would lead to the same futures).
  const label = model.interchangeable?.(ops) ?? [];
  const readOnly = ops.map((op) => model.readOnly(op.input));
  const candidates = (s: S): Entry[] => {
    const first: Entry[] = [];
    const then: Entry[] = [];
    const classes = new Set<string>();
    for (let e = head.next; e !== null && e.call; e = e.next) {
      if (definite[e.id] && readOnly[e.id] && model.step(s, ops[e.id].input, ops[e.id].output) !== undefined) return [e];
      if (definite[e.id]) first.push(e);
      else {
        const c = label[e.id];
        if (c !== undefined) {
          if (classes.has(c)) continue;
          classes.add(c);
        }
        then.push(e);
      }
    }
    return first.concat(then);
  };

  interface Frame {
    cands: Entry[];
    next: number;
  }
  const stack: { frame: Frame; entry: Entry; state: S }[] = [];
  let state = model.init(key);
  let remaining = definite.filter(Boolean).length;
  let frame: Frame = { cands: candidates(state), next: 0 };
  let deepest = -1;
  let stuck: { on: number; placed: number[]; open: number[] } | null = null;
  for (let iter = 0; ; iter++) {
    if (remaining === 0) return { key, ops: n, verdict: "linearizable", states };
    if ((iter & 1023) === 0 && (states > maxStates || performance.now() > deadline)) return { key, ops: n, verdict: "unknown-bound", states };
    if (frame.next < frame.cands.length) {
      const entry = frame.cands[frame.next++];
      const op = ops[entry.id];
      const next = model.step(state, op.input, op.outcome === "ok" ? op.output : undefined);
      if (next === undefined) continue;
      toggle(entry.id);
      if (seen(model.hash(next))) {
        toggle(entry.id);
        continue;
      }
      stack.push({ frame, entry, state });
      state = next;
      if (definite[entry.id]) remaining--;
      lift(entry);
      frame = { cands: candidates(state), next: 0 };
      continue;
    }
    // No candidate fits: the first pending return cannot be reached in this order.
    if (stack.length >= deepest) {
      deepest = stack.length;
      const open: number[] = [];
      let ret = head.next;
      for (; ret !== null && ret.call; ret = ret.next) open.push(ret.id);
      if (ret !== null) stuck = { on: ret.id, placed: stack.map((s) => s.entry.id), open };
    }
    const top = stack.pop();
    if (top === undefined) return { key, ops: n, verdict: "violation", states, explanation: explain(ops, model, stuck) };
    state = top.state;
    toggle(top.entry.id);
    if (definite[top.entry.id]) remaining++;
    unlift(top.entry);
    frame = top.frame;
  }
}

function explain<S, I, O>(ops: readonly Operation<I, O>[], model: Model<S, I, O>, stuck: { on: number; placed: number[]; open: number[] } | null): string {
  if (stuck === null) return "  no operation could be placed first";
  const line = (id: number): string => {
    const op = ops[id];
    const end = op.outcome === "unknown" ? "∞" : op.complete.toFixed(3);
    return `${op.client}${op.at ? `@${op.at}` : ""} ${model.show(op.input, op.outcome === "ok" ? op.output : undefined)} [${op.invoke.toFixed(3)}, ${end}] ${op.outcome}`;
  };
  const tail = stuck.placed.slice(-6);
  const open = stuck.open.filter((id) => id !== stuck.on);
  return [
    `  longest order found: ${stuck.placed.length} of ${ops.length} operations; no order places next:`,
    `    ${line(stuck.on)}`,
    `  last placed (oldest first)${stuck.placed.length > tail.length ? `, ${stuck.placed.length - tail.length} before them` : ""}:`,
    ...tail.map((id) => `    ${line(id)}`),
    open.length ? `  pending then (none of them fits next either)${open.length > 8 ? `, first 8 of ${open.length}` : ""}:` : "  nothing else pending then",
    ...open.slice(0, 8).map((id) => `    ${line(id)}`),
  ].join("\n");
}

// A 32-bit integer hash (splitmix-like finalizer), for the Zobrist table.
function mix(x: number): number {
  let z = (x * 0x9e3779b9) >>> 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
  return (z ^ (z >>> 16)) >>> 0;
}

// ---- The register model: one ZooKeeper znode's data and data version ----

/** A znode's data and dataVersion. */
export interface Znode {
  value: string;
  version: number;
}

/** getData (after sync, for a linearizable read), unversioned setData, setData with an expected version. */
export type RegisterInput = { f: "read" } | { f: "write"; value: string } | { f: "cas"; expected: number; value: string };
/** A read's data and version; a write's or cas's new version (the Stat setData returns). */
export type RegisterOutput = Znode | { version: number };

/** The znode register: every key starts as `init(key)` (default: value "" at version 0). */
export function registerModel(init: (key: string) => Znode = () => ({ value: "", version: 0 })): Model<Znode, RegisterInput, RegisterOutput> {
  return {
    init,
    step(s, input, output) {
      switch (input.f) {
        case "read": {
          if (output === undefined) return s;
          return "value" in output && output.value === s.value && output.version === s.version ? s : undefined;
        }
        case "write": {
          const next = { value: input.value, version: s.version + 1 };
          return output === undefined || output.version === next.version ? next : undefined;
        }
        case "cas": {
          // An ok cas matched; an unknown one that did not match was refused (no change).
          if (s.version !== input.expected) return output === undefined ? s : undefined;
          const next = { value: input.value, version: s.version + 1 };
          return output === undefined || output.version === next.version ? next : undefined;
        }
      }
    },
    hash: (s) => `${s.version}:${s.value}`,
    // Unknown writes (and cas with the same expected version) whose value no ok read returned differ only
    // in that value, which nothing observes: any later read of it fails alike.
    interchangeable(ops) {
      const read = new Set(ops.flatMap((op) => (op.outcome === "ok" && op.input.f === "read" && op.output && "value" in op.output ? [op.output.value] : [])));
      return ops.map((op) => {
        if (op.outcome !== "unknown" || op.input.f === "read" || read.has(op.input.value)) return undefined;
        return op.input.f === "write" ? "unread write" : `unread cas v${op.input.expected}`;
      });
    },
    readOnly: (input) => input.f === "read",
    show(input, output) {
      const args = input.f === "read" ? "" : input.f === "write" ? JSON.stringify(input.value) : `v${input.expected} -> ${JSON.stringify(input.value)}`;
      const res = output === undefined ? "?" : "value" in output ? `${JSON.stringify(output.value)}@v${output.version}` : `v${output.version}`;
      return `${input.f}(${args}) -> ${res}`;
    },
  };
}

// ---- Locks and leadership: exclusion and fencing ----

/** One hold of a lock (or a leadership), as its holder logged it. */
export interface Hold {
  holder: string;
  /** When the holder learnt it holds (ms, the history's clock). */
  acquired: number;
  /** When it started to let go, or lost it; +Infinity when it never did within the history. */
  released: number;
  /** The fencing token it was given (e.g. its node's czxid or sequence number). */
  token: number | bigint;
}

/** At most one holder at any instant, and fencing tokens strictly increasing in acquisition order.
 * Returns the violations, one line each (empty when there is none). */
export function checkExclusive(holds: readonly Hold[]): string[] {
  const finite = holds.flatMap((h) => [h.acquired, h.released]).filter(Number.isFinite);
  const endOfTime = Math.max(0, ...finite) + 1;
  const ns = (t: number): bigint => BigInt(Math.round(t * 1e6));
  const intervals: Interval[] = holds.map((h) => ({
    id: h.holder,
    start: ns(h.acquired),
    end: ns(Number.isFinite(h.released) ? h.released : endOfTime),
    how: Number.isFinite(h.released) ? "release" : "never released",
  }));
  const out = overlaps(intervals).map((v) => v.what);
  const order = [...holds].sort((a, b) => a.acquired - b.acquired);
  for (let i = 1; i < order.length; i++) {
    const [a, b] = [order[i - 1], order[i]];
    if (!(b.token > a.token)) out.push(`fencing token went from ${a.token} (${a.holder} at ${a.acquired.toFixed(3)}) to ${b.token} (${b.holder} at ${b.acquired.toFixed(3)})`);
  }
  return out;
}
