// Median table of several `npm run bench -- --json FILE` runs:
//   node --import tsx bench/median.ts run1.json run2.json run3.json
import { readFileSync } from "node:fs";
import { medianRows } from "./lib/median.ts";
import { renderTable, renderTargets, type Row } from "./lib/table.ts";

const files = process.argv.slice(2);
if (files.length === 0) {
  process.stderr.write("usage: bench/median.ts run1.json [run2.json ...]\n");
  process.exit(2);
}
const rows = medianRows(files.map((f) => JSON.parse(readFileSync(f, "utf8")) as Row[]));
process.stdout.write(`medians of ${files.length} run(s)\n${renderTable(rows)}\n\n${renderTargets(rows)}\n`);
