// Formats every result of one run as ONE table, plus the issue-6 target checks computed from it.
import type { RunnerResult } from "./child.ts";

export interface Row {
  workload: string; // label
  key: string;
  client: string; // peer id
  variantOf?: string;
  result?: RunnerResult;
  error?: string;
}

const OURS = "zookeeper-ts";
const f = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : "-");
const int = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString("en-US") : "-");
const ratio = (a: number, b: number, mark = ""): string => (Number.isFinite(a / b) && b > 0 ? `${(a / b).toFixed(2)}x${mark}` : "-");

export function renderTable(rows: Row[]): string {
  const head = ["workload", "client", "ops/s", "p50 ms", "p99 ms", "CPU s/10k ops", "ops/s ratio", "p50 ratio", "CPU ratio"];
  const body: string[][] = [];
  for (const r of rows) {
    const ours = rows.find((x) => x.key === r.key && x.client === OURS)?.result;
    if (!r.result) {
      body.push([r.workload, r.client, `FAILED: ${(r.error ?? "").split("\n")[0].slice(0, 90)}`, "", "", "", "", "", ""]);
      continue;
    }
    const x = r.result;
    let rs = ["", "", ""];
    if (ours && r.client !== OURS) {
      // Peers: ours ÷ peer. Our client on Bun/Deno or traced: that variant ÷ plain on Node (marked *).
      rs = r.variantOf
        ? [ratio(x.opsPerSec, ours.opsPerSec, "*"), ratio(x.p50Ms, ours.p50Ms, "*"), ratio(x.cpuPer10k, ours.cpuPer10k, "*")]
        : [ratio(ours.opsPerSec, x.opsPerSec), ratio(ours.p50Ms, x.p50Ms), ratio(ours.cpuPer10k, x.cpuPer10k)];
    }
    body.push([r.workload, r.client, int(x.opsPerSec), f(x.p50Ms, 3), f(x.p99Ms, 3), f(x.cpuPer10k, 3), ...rs]);
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  const out = [line(head), widths.map((w) => "-".repeat(w)).join("  ")];
  let last = "";
  for (const b of body) {
    out.push(line(b[0] === last ? ["", ...b.slice(1)] : b));
    last = b[0];
  }
  out.push("ratios: zookeeper-ts on Node ÷ that peer (ops/s > 1 = we are faster; p50 and CPU < 1 = we are lower); on the raw rows: ÷ the wire limit;");
  out.push("        * rows: zookeeper-ts on that runtime, or with a subscriber / the OpenTelemetry bridge, ÷ zookeeper-ts on Node;");
  out.push("        CPU = user + sys of the client process.");
  return out.join("\n");
}

/**
 * The issue-14 targets, per workload: zookeeper-ts at least the best peer's ops/s (and p50 at 1 outstanding
 * and for watch latency), and its client CPU per op within 1.15x of raw (the wire limit).
 */
export function renderTargets(rows: Row[]): string {
  const lines: string[] = ["targets (issue 14): ops/s >= best peer; p50 <= best peer (get-1, watch-latency); CPU/op <= 1.15x raw"];
  for (const key of [...new Set(rows.map((r) => r.key))]) {
    const ours = rows.find((r) => r.key === key && r.client === OURS)?.result;
    if (!ours) continue;
    const peers = rows.filter((r) => r.key === key && r.client !== OURS && r.client !== "raw" && !r.variantOf && r.result);
    const raw = rows.find((r) => r.key === key && r.client === "raw")?.result;
    const out: string[] = [];
    if (peers.length) {
      const best = peers.reduce((a, b) => (b.result!.opsPerSec > a.result!.opsPerSec ? b : a));
      const q = ours.opsPerSec / best.result!.opsPerSec;
      out.push(`${q >= 1 ? "MET" : "MISSED"} ops/s ${q.toFixed(2)}x best peer (${best.client})`);
      if (key === "get-1" || key === "watch-latency") {
        const low = peers.reduce((a, b) => (b.result!.p50Ms < a.result!.p50Ms ? b : a));
        const l = ours.p50Ms / low.result!.p50Ms;
        out.push(`${l <= 1 ? "MET" : "MISSED"} p50 ${l.toFixed(2)}x lowest (${low.client})`);
      }
    }
    if (raw) {
      const c = ours.cpuPer10k / raw.cpuPer10k;
      out.push(`${c <= 1.15 ? "MET" : "MISSED"} CPU/op ${c.toFixed(2)}x raw; ops/s ${(ours.opsPerSec / raw.opsPerSec).toFixed(2)}x raw`);
    }
    lines.push(`  ${key.padEnd(14)} ${out.join("; ")}`);
  }
  return lines.join("\n");
}
