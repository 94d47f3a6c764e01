#!/usr/bin/env node
// Fails on a cited repository path that does not exist, and on an import cycle in src/. Scans the tracked text files of the code and the
// docs for repository-relative paths (`src/...`, `test/...`, `docs/...`, `bench/...`, `scripts/...`,
// `examples/...`, `fixtures/...`, `.ci/...`) that name a file (an extension) or a folder (a trailing slash),
// wherever they stand (backticks, markdown links, comments, strings), and lists each one that is not in the
// tree. A path that only exists at run time goes in GENERATED, with the reason. Plain Node, no dependencies:
// `node scripts/check-paths.mjs` from anywhere in the repository (npm test runs it as the "paths" step).
// The import graph of src/ is every relative import and export ... from, type-only ones included, every bare
// import and every import() of a literal path: a cycle in it (a group of modules that reach each other) fails the check unless
// it lies within a KNOWN_CYCLES entry.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

/** Where cited paths are looked for: tracked files under these folders, and these files. */
export const SCANNED = ["src/", "test/", "bench/", "examples/", "scripts/", "docs/", "fixtures/", ".ci/", "README.md", "CONTRIBUTING.md", "CHANGELOG.md"];

/** Text files worth reading (the rest are data: recorded frames, results, images). Files without an extension are read too (.ci/run). */
const TEXT = /\.(?:[cm]?[jt]s|md|sh|py|java|ya?ml|txt|cfg|conf)$|(?:^|\/)[^./]+$/;

/**
 * Cited paths that do not exist in a checkout, each with the reason: made at run time, or a path of another
 * tree (`in`: only in that file). A cite equal to or below `path` passes.
 */
export const GENERATED = [
  { path: "docs/api/" }, // `npm run docs` writes it (typedoc's output, git-ignored)
  { path: "bench/.build/" }, // bench/lib/peer-deps.ts: the peer clients and the compiled runners (git-ignored)
  { path: "src/public-api.ts", in: "test/package/consumer-types.test.ts" }, // the consumer project's src/, in a temp dir
  { path: "src/commonjs.cts", in: "test/package/consumer-types.test.ts" }, // ditto
];

const SELF = "scripts/check-paths.mjs";
const ROOTS = "src|test|bench|docs|scripts|examples|fixtures|\\.ci";
// A root folder, then one or more path segments; not preceded by a path character (so `../src/x.ts`,
// `a/src/x.ts` and URLs are not repository-relative cites) nor followed by one (`*`, `<`, `$` end a path:
// a glob or a template names no single file).
const CITE = new RegExp(`(?<![\\w./@-])(?:${ROOTS})(?:/[\\w@+-][\\w.@+-]*)+/?`, "g");

/** The repository-relative paths `text` cites: the ones naming a file (an extension) or a folder (trailing slash). */
export function citedPaths(text) {
  const found = [];
  for (const m of text.matchAll(CITE)) {
    const next = text[m.index + m[0].length];
    if (next === "*" || next === "<" || next === "$" || next === "{") continue; // a pattern, not a path
    const path = m[0].replace(/\.+$/, ""); // the full stop of a sentence
    if (path.endsWith("/") || /[^./]\.[A-Za-z0-9]{1,6}$/.test(path)) found.push(path);
  }
  return found;
}

/** Each cited path of the scanned files under `root` that is neither in the tree nor GENERATED: [{ file, line, path }]. */
export function missingPaths(root, files) {
  const missing = [];
  for (const file of files) {
    const at = join(root, file);
    if (!existsSync(at)) continue; // deleted in the work tree, not yet in the index
    readFileSync(at, "utf8").split("\n").forEach((line, i) => {
      for (const path of citedPaths(line)) {
        // (This file names every GENERATED path, in its list.)
        if (GENERATED.some((g) => (g.in === undefined || g.in === file || file === SELF) && (path === g.path || path.startsWith(g.path)))) continue;
        if (!existsSync(join(root, path))) missing.push({ file, line: i + 1, path });
      }
    });
  }
  return missing;
}

/**
 * Import cycles not broken yet, each with why (none today: every cycle fails the check). A cycle passes while its
 * modules all lie within one entry (so an entry may shrink as it is broken, never grow); remove the entry once it is gone.
 */
export const KNOWN_CYCLES = [];

// import/export ... from "./x", a bare import "./x", import("./x").
const IMPORT = /(?:^|[\n;])\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.{1,2}\/[^"']+)["']|(?:^|[\n;])\s*import\s*["'](\.{1,2}\/[^"']+)["']|\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;

/** The import cycles among `files` (repository-relative .ts paths): each a sorted list of the modules that reach each other. */
export function importCycles(root, files) {
  const graph = new Map();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, "");
    const deps = new Set();
    for (const m of text.matchAll(IMPORT)) deps.add(posix.join(posix.dirname(file), m[1] ?? m[2] ?? m[3]));
    graph.set(file, [...deps].filter((d) => d !== file));
  }
  // Tarjan's strongly connected components; every one with more than a module is a cycle.
  const index = new Map(), low = new Map(), stack = [], onStack = new Set(), cycles = [];
  const visit = (v) => {
    index.set(v, index.size);
    low.set(v, index.get(v));
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const group = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** The cycles of `cycles` that no KNOWN_CYCLES entry covers. */
export function newCycles(cycles, known = KNOWN_CYCLES) {
  return cycles.filter((c) => !known.some((k) => c.every((m) => k.includes(m))));
}

/** The tracked text files under SCANNED. */
export function scannedFiles(root) {
  const out = execFileSync("git", ["ls-files", "-z", "--", ...SCANNED], { cwd: root, encoding: "utf8", maxBuffer: 64 << 20 });
  return out.split("\0").filter((f) => f && TEXT.test(f));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = execFileSync("git", ["rev-parse", "--show-toplevel"], { encoding: "utf8" }).trim();
  const files = scannedFiles(root);
  const missing = missingPaths(root, files);
  for (const m of missing) console.error(`${m.file}:${m.line}: cites ${m.path}, which does not exist`);
  const sources = files.filter((f) => f.startsWith("src/") && f.endsWith(".ts"));
  const cycles = newCycles(importCycles(root, sources));
  for (const c of cycles) console.error(`import cycle: ${c.join(", ")}`);
  if (missing.length > 0) console.error(`[check-paths] ${missing.length} cited path(s) missing (a path made at run time goes in GENERATED, scripts/check-paths.mjs)`);
  if (cycles.length > 0) console.error(`[check-paths] ${cycles.length} import cycle(s) in src/ (break them with a small interface module)`);
  if (missing.length > 0 || cycles.length > 0) process.exit(1);
  console.log(`[check-paths] ${files.length} files: every cited path exists; ${sources.length} modules of src/: no import cycle${KNOWN_CYCLES.length > 0 ? " beyond KNOWN_CYCLES" : ""}`);
}
