#!/usr/bin/env node
// Packs the package as `npm publish` would (prepack builds dist/), prints the listing and size, checks that
// what a user imports is there and that no tests or fixtures ship, then runs attw (every resolution mode,
// node10 included) and `publint --strict` on that tarball, and `npm publish --dry-run` (a package.json field npm
// would correct or drop on publish, e.g. a bin path it does not take, is a finding). Exits non-zero on any finding.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = mkdtempSync(join(tmpdir(), "zk-pack-"));
const bin = (name) => join(root, "node_modules/.bin", name);
const problems = [];
try {
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dir], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  const [info] = JSON.parse(out.slice(out.indexOf("[")));
  const files = info.files.map((f) => f.path).sort();
  console.log(`[package] ${info.filename}: ${files.length} files, ${info.size} bytes packed, ${info.unpackedSize} bytes unpacked`);
  for (const f of files) console.log(`  ${f}`);
  for (const need of ["LICENSE", "README.md", "CHANGELOG.md", "package.json", "dist/esm/index.js", "dist/esm/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/esm/recipes/index.js", "dist/cjs/recipes/index.js", "recipes/package.json", "dist/esm/otel/index.js", "dist/cjs/otel/index.js", "otel/package.json"]) {
    if (!files.includes(need)) problems.push(`missing from the tarball: ${need}`);
  }
  for (const f of files) {
    if (/^(test|fixtures|bench|examples|scripts|docs)\//.test(f) || /\.test\.[cm]?[jt]s$/.test(f)) problems.push(`should not ship: ${f}`);
  }
  const tgz = join(dir, info.filename);
  const steps = [
    ["attw", [bin("attw"), tgz, "--profile", "strict", "--format", "table"]],
    ["publint", [bin("publint"), "run", "--strict", tgz]],
  ];
  for (const [name, [cmd, ...args]] of steps) {
    console.log(`\n[package] $ ${name} ${args.join(" ")}`);
    try {
      execFileSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, FORCE_COLOR: "0" } });
    } catch (e) {
      problems.push(`${name} reported problems (exit ${e.status})`);
    }
  }
  // dist/ was just built by the pack's prepack: the dry run need not build it again.
  console.log("\n[package] $ npm publish --dry-run --ignore-scripts");
  const dry = spawnSync("npm", ["publish", "--dry-run", "--ignore-scripts"], { cwd: root, encoding: "utf8", env: { ...process.env, FORCE_COLOR: "0" } });
  // Not logged in to the registry is expected here (the release workflow publishes with a token).
  const warnings = `${dry.stdout}${dry.stderr}`.split("\n").filter((l) => /^npm (warn|error)/i.test(l) && !/requires you to be logged in/.test(l));
  for (const w of warnings) console.log(w);
  if (dry.status !== 0 || warnings.length > 0) problems.push(`npm publish --dry-run: exit ${dry.status}, ${warnings.length} warning line(s)`);
  else console.log("[package] npm publish --dry-run: no warnings");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
for (const p of problems) console.error(`[package] ${p}`);
console.log(problems.length === 0 ? "[package] no findings" : `[package] ${problems.length} finding(s)`);
process.exit(problems.length === 0 ? 0 : 1);
