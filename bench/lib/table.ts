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
      // Peers: ours ÷ peer. Our client on Bun/Deno: that runtime ÷ Node (marked *).
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
  out.push("ratios: zookeeper-ts on Node ÷ that peer (ops/s > 1 = we are faster; p50 and CPU < 1 = we are lower);");
  out.push("        * rows: zookeeper-ts on that runtime ÷ zookeeper-ts on Node. CPU = user + sys of the client process.");
  return out.join("\n");
}

export function renderTargets(rows: Row[]): string {
  const get = (key: string, client: string): RunnerResult | undefined => rows.find((r) => r.key === key && r.client === client)?.result;
  const ours1000 = get("get-1000", OURS);
  const nzc = get("get-1000", "node-zookeeper-client");
  const nat = get("get-1000", "zookeeper (native)");
  const ours1 = get("get-1", OURS);
  const peers1 = rows.filter((r) => r.key === "get-1" && r.client !== OURS && !r.variantOf && r.result).map((r) => r.result!);
  const lines: string[] = ["targets (issue 6):"];
  const check = (name: string, value: number, ok: boolean, goal: string): void => {
    lines.push(`  ${ok ? "MET   " : "MISSED"} ${name}: ${Number.isFinite(value) ? value.toFixed(2) : "-"} (${goal})`);
  };
  if (ours1000 && nzc) check("get@1000 ops/s vs node-zookeeper-client", ours1000.opsPerSec / nzc.opsPerSec, ours1000.opsPerSec / nzc.opsPerSec >= 1.5, ">= 1.5x");
  if (ours1000 && nat) check("get@1000 ops/s vs native zookeeper", ours1000.opsPerSec / nat.opsPerSec, ours1000.opsPerSec / nat.opsPerSec >= 1.0, ">= 1.0x");
  if (ours1000 && nzc) check("get@1000 CPU per op vs node-zookeeper-client", ours1000.cpuPer10k / nzc.cpuPer10k, ours1000.cpuPer10k / nzc.cpuPer10k <= 0.5, "<= 0.5x");
  if (ours1 && peers1.length) {
    const best = Math.min(...peers1.map((p) => p.p50Ms));
    check("get@1 p50 latency vs best peer", ours1.p50Ms / best, ours1.p50Ms <= best * 1.1, "<= 1.10x");
  }
  return lines.join("\n");
}
