#!/usr/bin/env node
// `deno publish --dry-run` for jsr.json: type-checks the public API from the TypeScript sources and fails
// on slow types; any warning in its output counts as a failure too.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const r = spawnSync(join(root, "node_modules/.bin/deno"), ["publish", "--dry-run", "--allow-dirty", "--no-check=remote"], {
  cwd: root,
  encoding: "utf8",
  env: { ...process.env, NO_COLOR: "1" },
});
const out = `${r.stdout}${r.stderr}`;
process.stdout.write(out);
const warned = /warning|slow type/i.test(out.replace(/Checking for slow types in the public API\.\.\./g, ""));
if (r.status !== 0 || warned || !/Dry run complete/.test(out)) {
  console.error(`[jsr] deno publish --dry-run failed (exit ${r.status}${warned ? ", with warnings" : ""})`);
  process.exit(1);
}
console.log("[jsr] dry run clean: no warnings, no slow types");
