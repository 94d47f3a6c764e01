// Turns a chaos run into findings (safety violations, failover latencies per action kind, herd size)
// and a printable summary table.
import { foreignWork, intervalsOf, ms, overlaps, quantiles, setOrigin, type Interval, type Violation } from "./chaos-history.ts";
import { quorumBack, timedEvents, type ActionKind, type ChaosRecord } from "./chaos-run.ts";

export interface ChaosFindings {
  violations: Violation[];
  intervals: Interval[];
  changes: number;
  actionsByKind: Record<string, number>;
  latencyMs: Record<string, number[]>; // per action kind: fault → first ELECTED after it
  slow: string[]; // failovers over their bound, with what the participants logged meanwhile
  slowWindows: { from: bigint; to: bigint }[]; // their spans (fault → next ELECTED, our clock), for the servers' logs
  worst: string[]; // the slowest failover of each kind, likewise
  herdMax: number; // most participants woken by one znode's watch
  herds: string[]; // the znodes that woke more than one, with each WATCH line's arrival
  watchedPaths: number;
  workLines: number;
  stopsChecked: number;
  table: string;
}

export function analyze(rec: ChaosRecord): ChaosFindings {
  setOrigin(rec.startNs);
  const violations: Violation[] = [];
  const intervals: Interval[] = [];
  const work: { id: string; ns: bigint }[] = [];
  const elected: bigint[] = [];
  const watchers = new Map<string, Set<string>>();
  let stopsChecked = 0;
  for (const m of rec.members) {
    const id = m.c.id;
    const events = timedEvents(m);
    const r = intervalsOf(id, events, rec.endNs);
    intervals.push(...r.intervals);
    violations.push(...r.problems);
    for (const e of events) {
      if (e.kind === "WORK") work.push({ id, ns: e.ns });
      if (e.kind === "ELECTED") elected.push(e.ns);
    }
    for (const l of m.c.p.lines) {
      if (l.kind !== "WATCH" || l.args[1] === "own") continue; // the herd is successors woken, not the owner
      const set = watchers.get(l.args[0]) ?? new Set<string>();
      set.add(id);
      watchers.set(l.args[0], set);
    }
    // A leader resumed after SIGSTOP steps down before it acts: its first line after SIGCONT.
    for (const cont of m.marks.filter((x) => x.kind === "cont")) {
      const stop = [...m.marks].reverse().find((x) => x.kind === "stop" && x.ns < cont.ns);
      const wasLeading = stop && r.intervals.some((i) => i.start < stop.ns && i.end >= stop.ns);
      if (!wasLeading) continue;
      stopsChecked++;
      const first = events.filter((e) => e.ns > cont.ns && (e.kind === "WORK" || e.kind === "REVOKED" || e.kind === "EXPIRED" || e.kind === "ELECTED")).sort((a, b) => (a.ns < b.ns ? -1 : 1))[0];
      if (first && first.kind !== "REVOKED" && first.kind !== "EXPIRED") violations.push({ what: `${id} resumed from SIGSTOP and logged ${first.kind} before REVOKED` });
    }
  }
  violations.push(...overlaps(intervals), ...foreignWork(work, intervals));
  elected.sort((a, b) => (a < b ? -1 : 1));
  const latencyMs: Record<string, number[]> = {};
  const actionsByKind: Record<string, number> = {};
  const slow: string[] = [];
  const slowWindows: { from: bigint; to: bigint }[] = [];
  const worst: Record<string, { latency: number; what: string }> = {};
  const bound = boundsMs(rec.negotiatedMs);
  for (const a of rec.actions) {
    actionsByKind[a.kind] = (actionsByKind[a.kind] ?? 0) + 1;
    const next = elected.find((e) => e > a.ns);
    if (next === undefined) continue;
    let latency = Number(next - a.ns) / 1e6;
    if (a.kind === "resign" || a.kind === "close") {
      // Split a clean hand-over at the old leader's own REVOKED stamp: before it, the command crosses
      // a pipe and waits for the child to be scheduled (the machine's time, unbounded on a loaded
      // host); after it, the client deletes its znode and the successor's watch fires and it checks
      // (the client's and the ensemble's work). The bound applies to the hand-over.
      const revoked = revokedStamp(rec, a.leader, a.ns, next);
      if (revoked !== null) {
        (latencyMs[`${a.kind}:reaction`] ??= []).push(Number(revoked - a.ns) / 1e6);
        latency = Number(next - revoked) / 1e6;
      }
    }
    if (a.kind === "server" && a.serverMode === "leader") {
      // Killing the ZK leader: the two survivors first elect a new quorum leader (the ensemble's and
      // the machine's time), and that new leader gives every session a fresh full timeout, so the old
      // leader's ephemeral goes only a session timeout after the quorum serves again. Time the
      // election from there (the survivors seen serving, or a participant connected, whichever came first);
      // the quorum's return is shown apart.
      const back = quorumBack(rec.members, a, a.ns, next);
      if (back !== null) {
        (latencyMs["server:quorum"] ??= []).push(Number(back - a.ns) / 1e6);
        latency = Number(next - back) / 1e6;
      }
    }
    (latencyMs[a.kind] ??= []).push(latency);
    if (a.kind === "server") (latencyMs[`server:${a.serverMode === "leader" ? "leader" : "follower"}`] ??= []).push(latency);
    if (latency > (worst[a.kind]?.latency ?? -1)) worst[a.kind] = { latency, what: `#${a.n} ${a.kind} of ${a.leader}: ${latency.toFixed(0)} ms; ${context(rec, a.ns, next)}` };
    // A clean hand-over that waited for another participant's session to expire (its process starved past
    // the session timeout on a loaded machine) is bounded like a crash: the wait was the server's expiry.
    const limit = (a.kind === "resign" || a.kind === "close") && expiredBetween(rec, a.ns, next) ? bound.kill : bound[a.kind];
    if (latency > limit) slowWindows.push({ from: a.ns, to: next });
    if (latency > limit) slow.push(`#${a.n} ${a.kind} of ${a.leader}${a.server ? ` (server ${a.server}, ${a.serverMode})` : ""} at ${ms(a.ns)}: next leader after ${latency.toFixed(0)} ms${a.quorumNs !== undefined ? ` (survivors serving @${ms(a.quorumNs)})` : ""}; ${context(rec, a.ns, next)}`);
  }
  const herdMax = Math.max(0, ...[...watchers.values()].map((s) => s.size));
  // Which znode woke more than one participant, and when each logged it (so a herd can be diagnosed).
  const herds = [...watchers.entries()].filter(([, ids]) => ids.size > 1).map(([path, ids]) => {
    const seen = rec.members.filter((m) => ids.has(m.c.id)).flatMap((m) => m.c.p.lines.filter((l) => l.kind === "WATCH" && l.args[0] === path).map((l) => `${m.c.id} @${ms(l.receivedNs)}`));
    return `${path}: ${seen.join(", ")}`;
  });
  const changes = elected.length - 1;
  const f = { violations, intervals, changes, actionsByKind, latencyMs, slow, slowWindows, worst: Object.values(worst).map((w) => w.what), herdMax, herds, watchedPaths: watchers.size, workLines: work.length, stopsChecked, table: "" };
  f.table = table(rec, f);
  return f;
}

/** The old leader's REVOKED stamp (our clock) in (from, to], or null. */
function revokedStamp(rec: ChaosRecord, id: string, from: bigint, to: bigint): bigint | null {
  for (const m of rec.members) {
    if (m.c.id !== id) continue;
    const e = timedEvents(m).find((x) => x.kind === "REVOKED" && x.ns > from && x.ns <= to);
    if (e) return e.ns;
  }
  return null;
}

/** Liveness bounds: 1 s for a clean hand-over; a crash waits for the server to expire the session. */
export function boundsMs(negotiatedMs: number): Record<ActionKind, number> {
  const crash = negotiatedMs + 1000;
  return { resign: 1000, close: 1000, kill: crash, stop: crash, server: crash };
}

/** Every participant's non-WORK lines stamped within [from, to], for a slow failover's message. */
function expiredBetween(rec: ChaosRecord, from: bigint, to: bigint): boolean {
  return rec.members.some((m) => m.c.p.lines.some((l) => l.kind === "EXPIRED" && l.receivedNs >= from && l.receivedNs <= to));
}

function context(rec: ChaosRecord, from: bigint, to: bigint): string {
  const out: string[] = [];
  for (const m of rec.members) {
    const ls = m.c.p.lines.filter((l) => l.kind !== "WORK" && l.kind !== "CLOCK" && l.receivedNs >= from && l.receivedNs <= to + 50_000_000n);
    if (ls.length) out.push(`${m.c.id}: ${ls.map((l) => `${l.kind} ${detail(l)}@${ms(l.receivedNs)}`).join(", ")}`);
  }
  return out.join("; ");
}

/** What a context line says besides its kind: the state, the reason, the znode (its last segment), a slow call. */
function detail(l: ChaosRecord["members"][number]["c"]["p"]["lines"][number]): string {
  const tail = (p: string | undefined): string => (p ?? "-").split("/").pop() ?? "-";
  switch (l.kind) {
    case "STATE":
      return `${l.args[0]} `;
    case "REVOKED":
      return `${l.args[2]} `;
    case "WATCH":
      return `${tail(l.args[0])}${l.args[1] === "own" ? " own" : ""} `;
    case "ZKWATCH":
      return `${l.args[2]} ${tail(l.args[3])} `;
    case "STALL":
      return `${l.args[2]} ms `;
    case "SLOW":
      return `${l.args[2]} ${tail(l.args[3])} ${l.args[4]} ms ${l.args[5]} `;
    default:
      return "";
  }
}

const KINDS: ActionKind[] = ["resign", "close", "kill", "stop", "server"];
const LABEL: Record<ActionKind, string> = {
  resign: "resign",
  close: "clean close",
  kill: "kill -9 leader",
  stop: "SIGSTOP leader",
  server: "kill -9 its server",
};

function table(rec: ChaosRecord, f: Omit<ChaosFindings, "table">): string {
  const rows = [["action", "count", "p50 ms", "p99 ms", "max ms"]];
  for (const k of KINDS) {
    if (!f.actionsByKind[k]) continue;
    const q = quantiles(f.latencyMs[k] ?? []);
    rows.push([LABEL[k], String(f.actionsByKind[k]), String(q.p50), String(q.p99), String(q.max)]);
    const react = f.latencyMs[`${k}:reaction`] ?? [];
    if (react.length) {
      const r = quantiles(react);
      rows.push([`  (command → its REVOKED)`, String(react.length), String(r.p50), String(r.p99), String(r.max)]);
    }
    if (k !== "server") continue;
    for (const role of ["leader", "follower"]) {
      const v = f.latencyMs[`server:${role}`] ?? [];
      const r = quantiles(v);
      if (v.length) rows.push([`  it was the ZK ${role}`, String(v.length), String(r.p50), String(r.p99), String(r.max)]);
    }
    const quorum = f.latencyMs["server:quorum"] ?? [];
    if (quorum.length) {
      const r = quantiles(quorum);
      rows.push([`    (ZK leader killed → quorum serves)`, String(quorum.length), String(r.p50), String(r.p99), String(r.max)]);
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
  const seconds = Number(rec.endNs - rec.startNs) / 1e9;
  return [
    `election chaos: ${f.changes} leadership changes in ${seconds.toFixed(0)} s, ${rec.members.length} participant processes (${[...new Set(rec.config.runtimes)].join("/")}), seed ${rec.config.seed}, negotiated session ${rec.negotiatedMs} ms`,
    `failover latency (fault → next ELECTED; resign/close: from the old leader's REVOKED; ZK leader killed: from the quorum serving again; those parts shown apart):`,
    ...lines.map((l) => `  ${l}`),
    ...f.slow.map((x) => `  slow: ${x}`),
    ...f.worst.map((x) => `  slowest: ${x}`),
    `herd: max participants woken per znode = ${f.herdMax} (${f.watchedPaths} znodes watched); WORK lines checked ${f.workLines}; resumed leaders checked ${f.stopsChecked}; intervals ${f.intervals.length}; violations ${f.violations.length}`,
  ].join("\n");
}
