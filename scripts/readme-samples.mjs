#!/usr/bin/env node
// README samples that work as written. Every ```ts block of README.md is written to tmp/readme-samples/,
// type-checked against the BUILT package (`zookeeper-ts` resolves through package.json exports to dist/*.d.ts,
// with no path mapping to the sources) together with the type test test/types/public-api.ts, and then every
// block not marked ```ts no-run is transpiled to plain JavaScript and run with `node` against ZK_CONNECT
// (each `127.0.0.1:2181` in a sample becomes that address). A sample must end by itself, within 60 s.
// Usage: node scripts/readme-samples.mjs [--no-run]   (needs `npm run build` first; ZK_CONNECT to run)
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "tmp/readme-samples");
const lines = readFileSync(join(root, "README.md"), "utf8").split("\n");

/** The ```ts blocks: start line, flags after the language, code. Only fences at the start of a line count. */
const blocks = [];
let heading = "top";
for (let i = 0; i < lines.length; i++) {
  const h = /^#+\s+(.*)$/.exec(lines[i]);
  if (h) heading = h[1];
  const open = /^```ts(?:\s+(.*))?$/.exec(lines[i].trimEnd());
  if (!open) continue;
  const start = i + 1;
  const body = [];
  for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
  const flags = (open[1] ?? "").split(/\s+/).filter(Boolean);
  const unknown = flags.filter((f) => f !== "no-run");
  if (unknown.length) throw new Error(`README.md:${start}: unknown flag(s) ${unknown.join(", ")} (only "no-run")`);
  blocks.push({ line: start, heading, run: !flags.includes("no-run"), code: body.join("\n") + "\n" });
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40);
for (const [n, b] of blocks.entries()) {
  b.file = join(out, `${String(n + 1).padStart(2, "0")}-${slug(b.heading)}.ts`);
  // A leading `export {}` makes each sample its own module even if it imports nothing (top-level await).
  writeFileSync(b.file, `// README.md line ${b.line} (${b.heading})\nexport {};\n${b.code}`);
}
console.log(`[readme] ${blocks.length} ts blocks in README.md (${blocks.filter((b) => b.run).length} to run, ${blocks.filter((b) => !b.run).length} no-run)`);

// Type-check against the built package: the root tsconfig's options, without its paths to src/.
writeFileSync(join(out, "tsconfig.json"), JSON.stringify({
  extends: "../../tsconfig.json",
  compilerOptions: { paths: {}, noEmit: true, noUnusedLocals: false },
  include: ["./*.ts", "../../test/types/*.ts"],
}, null, 2));
const tsc = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(out, "tsconfig.json")], { cwd: root, encoding: "utf8" });
process.stdout.write(tsc.stdout + tsc.stderr);
const failures = [];
if (tsc.status !== 0) failures.push("type check of the README samples and the type test against the built package");
else console.log(`[readme] type check ok: ${blocks.length} samples + test/types/public-api.ts against dist/*.d.ts`);

if (!process.argv.includes("--no-run")) {
  const target = process.env.ZK_CONNECT;
  if (!target) throw new Error("ZK_CONNECT is not set: the samples run against a test server");
  const host = target.split(",")[0].split("/")[0];
  for (const b of blocks.filter((x) => x.run)) {
    const js = ts.transpileModule(readFileSync(b.file, "utf8").replaceAll("127.0.0.1:2181", host), {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true },
    }).outputText;
    const file = b.file.replace(/\.ts$/, ".mjs");
    writeFileSync(file, js);
    const t = Date.now();
    const r = spawnSync(process.execPath, [file], { cwd: root, encoding: "utf8", timeout: 60_000, env: process.env });
    const secs = ((Date.now() - t) / 1000).toFixed(1);
    const ok = r.status === 0;
    console.log(`[readme] ${ok ? "ran" : "FAILED"} README.md:${b.line} (${b.heading}) with node ${process.version} in ${secs} s${r.signal ? ` (killed: ${r.signal}, did not end)` : ""}`);
    const text = (r.stdout + r.stderr).trim();
    if (text) console.log(text.split("\n").map((l) => `    ${l}`).join("\n"));
    if (!ok) failures.push(`README.md:${b.line} (${relative(root, file)})`);
  }
}
for (const f of failures) console.error(`[readme] failed: ${f}`);
console.log(failures.length ? `[readme] ${failures.length} failure(s)` : "[readme] all samples ok");
process.exit(failures.length ? 1 : 0);
