// The README's speed table from one `npm run bench -- --json FILE` run:
//   node --import tsx bench/markdown.ts FILE
// Ratios are zookeeper-ts ÷ that client (ops/s above 1 = faster; CPU per op below 1 = cheaper).
import { readFileSync } from "node:fs";
import type { Row } from "./lib/table.ts";

const rows = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Row[];
const PEERS = ["node-zookeeper-client", "zookeeper (native)", "kazoo", "java"];
const NAMES = ["node-zookeeper-client", "native `zookeeper`", "kazoo", "Java"];
const int = (x: number): string => Math.round(x).toLocaleString("en-US");
const q = (a: number | undefined, b: number | undefined): string => (a !== undefined && b !== undefined && b > 0 ? (a / b).toFixed(2) : "—");

const out = [
  `| workload | zookeeper-ts ops/s (p50 ms) | ops/s ratio vs ${NAMES.join(" / ")} | client CPU/op ratio, same peers | vs raw (wire limit): ops/s / CPU per op |`,
  "|---|---|---|---|---|",
];
for (const key of [...new Set(rows.map((r) => r.key))]) {
  const get = (client: string) => rows.find((r) => r.key === key && r.client === client)?.result;
  const ours = get("zookeeper-ts");
  if (!ours) continue;
  const label = rows.find((r) => r.key === key)!.workload.replace(/^\([a-z]\) /, "");
  const peers = PEERS.map(get);
  const raw = get("raw");
  out.push(
    `| ${label} | ${int(ours.opsPerSec)} (${ours.p50Ms.toFixed(3)}) | ${peers.map((p) => q(ours.opsPerSec, p?.opsPerSec)).join(" / ")} | ${peers.map((p) => q(p?.cpuPer10k === undefined ? undefined : ours.cpuPer10k, p?.cpuPer10k)).join(" / ")} | ${q(ours.opsPerSec, raw?.opsPerSec)} / ${q(ours.cpuPer10k, raw?.cpuPer10k)} |`,
  );
}
process.stdout.write(out.join("\n") + "\n");
