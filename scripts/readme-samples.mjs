#!/usr/bin/env node
// Documentation samples that work as written. Every ```ts block of README.md and of every guide in docs/*.md is
// written to tmp/readme-samples/, type-checked against the BUILT package (`zookeeper-ts` resolves through
// package.json exports to dist/*.d.ts, with no path mapping to the sources) together with the type test
// test/types/public-api.ts, and then every block not marked ```ts no-run is transpiled to plain JavaScript and
// run with `node` against ZK_CONNECT (each `127.0.0.1:2181` in a sample becomes that address, under a chroot: the
// samples' nodes all go below one test root, t-readme-<8 hex>, made before them and deleted after); with ZK_CONNECT
// unset it brings up a throwaway server through test/support (zk-shared-main.ts) and stops it at the end. A
// sample must end by itself, within 60 s. Samples run in order: README.md first, then the guides by file name.
// A ```js block is CommonJS (the README's require() sample): it is run as a .cjs file, not type-checked.
// Usage: node scripts/readme-samples.mjs [--no-run]   (needs `npm run build` first; `npm run readme` does both)
import { spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "tmp/readme-samples");
const sources = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

/** The ```ts blocks of one file: start line, flags after the language, code. Only fences at the start of a line count. */
function blocksOf(source) {
  const lines = readFileSync(join(root, source), "utf8").split("\n");
  const found = [];
  let heading = "top";
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)(?:\s+(.*))?$/.exec(lines[i].trimEnd());
    if (!fence) {
      const h = /^#+\s+(.*)$/.exec(lines[i]);
      if (h) heading = h[1];
      continue;
    }
    const start = i + 1;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (fence[1] !== "ts" && fence[1] !== "js") continue; // another language (sh, ini, json, a plain fence): skipped
    const flags = (fence[2] ?? "").split(/\s+/).filter(Boolean);
    const unknown = flags.filter((f) => f !== "no-run");
    if (unknown.length) throw new Error(`${source}:${start}: unknown flag(s) ${unknown.join(", ")} (only "no-run")`);
    found.push({ source, line: start, heading, lang: fence[1], run: !flags.includes("no-run"), code: body.join("\n") + "\n" });
  }
  return found;
}

const blocks = sources.flatMap(blocksOf);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const slug = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 40);
for (const [n, b] of blocks.entries()) {
  b.where = `${b.source}:${b.line}`;
  b.file = join(out, `${String(n + 1).padStart(2, "0")}-${slug(b.source.replace(/\.md$/, ""))}-${slug(b.heading)}.${b.lang === "ts" ? "ts" : "cjs"}`);
  // A leading `export {}` makes each TypeScript sample its own module even if it imports nothing (top-level await).
  writeFileSync(b.file, `// ${b.where} (${b.heading})\n${b.lang === "ts" ? "export {};\n" : "\n"}${b.code}`);
}
const per = sources.map((s) => [s, blocks.filter((b) => b.source === s)]).filter(([, bs]) => bs.length);
const tsCount = blocks.filter((b) => b.lang === "ts").length;
console.log(`[readme] ${tsCount} ts blocks and ${blocks.length - tsCount} CommonJS js block(s) (${blocks.filter((b) => b.run).length} to run, ${blocks.filter((b) => !b.run).length} no-run) in ${per.map(([s, bs]) => `${s} ${bs.length}`).join(", ")}`);

// Type-check against the built package: the root tsconfig's options, without its paths to src/.
writeFileSync(join(out, "tsconfig.json"), JSON.stringify({
  extends: "../../tsconfig.json",
  compilerOptions: { paths: {}, noEmit: true, noUnusedLocals: false },
  include: ["./*.ts", "../../test/types/*.ts"],
}, null, 2));
const tsc = spawnSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(out, "tsconfig.json")], { cwd: root, encoding: "utf8" });
// tsc names the extracted files; name the document and line each came from too.
const origin = (text) => text.replace(/(tmp\/readme-samples\/[^(:\s]+\.ts)\((\d+),(\d+)\)/g, (m, f, l, c) => {
  const b = blocks.find((x) => relative(root, x.file) === f);
  return b ? `${m} [${b.source}:${b.line + Number(l) - 2}]` : m;
});
process.stdout.write(origin(tsc.stdout + tsc.stderr));
const failures = [];
if (tsc.status !== 0) failures.push("type check of the documentation samples and the type test against the built package");
else console.log(`[readme] type check ok: ${tsCount} samples + test/types/public-api.ts against dist/*.d.ts`);

/** A throwaway standalone server from test/support, for a run without ZK_CONNECT; stopped by closing its stdin. */
async function throwawayServer() {
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "test/support/servers/zk-shared-main.ts"), "--until-stdin-closes"], { cwd: root, stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const first = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the throwaway server did not start (exit ${code})`)));
  });
  const { connectString } = JSON.parse(first);
  console.log(`[readme] ZK_CONNECT is not set: throwaway server ${connectString} (test/support/servers/zk-shared-main.ts)`);
  return { connectString, stop: async () => { child.stdin.end(); await exited; } };
}

if (!process.argv.includes("--no-run")) {
  const server = process.env.ZK_CONNECT ? undefined : await throwawayServer();
  const target = process.env.ZK_CONNECT ?? server.connectString;
  // The samples use plain names (/app, /election): under a test root of the run's own, a user's nodes of those names
  // are never touched, and deleting the root leaves the server as the run found it.
  const chroot = `/t-readme-${randomUUID().slice(0, 8)}`;
  const first = target.split(",")[0].split("/")[0];
  const host = first + chroot;
  const { ZooKeeper, ErrorCode, isZooKeeperError } = await import(pathToFileURL(join(root, "dist/esm/index.js")).href);
  const onServer = async (fn) => {
    const zk = await ZooKeeper.connect(first, { sessionTimeout: 10_000 });
    try {
      await fn(zk);
    } finally {
      await zk.close();
    }
  };
  try {
    await onServer((zk) => zk.create(chroot));
    for (const b of blocks.filter((x) => x.run)) {
      const source = readFileSync(b.file, "utf8").replaceAll("127.0.0.1:2181", host);
      const js = b.lang === "ts" ? ts.transpileModule(source, {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, verbatimModuleSyntax: true },
      }).outputText : source;
      const file = b.lang === "ts" ? b.file.replace(/\.ts$/, ".mjs") : b.file;
      writeFileSync(file, js);
      const t = Date.now();
      const r = spawnSync(process.execPath, [file], { cwd: root, encoding: "utf8", timeout: 60_000, env: process.env });
      const secs = ((Date.now() - t) / 1000).toFixed(1);
      const ok = r.status === 0;
      console.log(`[readme] ${ok ? "ran" : "FAILED"} ${b.where} (${b.heading}) with node ${process.version} in ${secs} s${r.signal ? ` (killed: ${r.signal}, did not end)` : ""}`);
      const text = (r.stdout + r.stderr).trim();
      if (text) console.log(text.split("\n").map((l) => `    ${l}`).join("\n"));
      if (!ok) failures.push(`${b.where} (${relative(root, file)})`);
    }
  } finally {
    try {
      await onServer((zk) => zk.deleteRecursive(chroot).catch((e) => { if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e; }));
    } finally {
      await server?.stop();
    }
  }
}
for (const f of failures) console.error(`[readme] failed: ${f}`);
console.log(failures.length ? `[readme] ${failures.length} failure(s)` : "[readme] all samples ok");
process.exit(failures.length ? 1 : 0);
