#!/usr/bin/env node
// `npm run test:lines`: the client, watches, session, ensemble and recipes integration files (and the
// compatibility probes, and SASL GSSAPI against a Kerberized server of the line) under Node on every
// other server generation — 3.4.13, 3.9.3 and the newest 3.9 from Debian's archive
// (scripts/fetch-zk-lines.sh) — each with its own shared server (ZK_SERVER).
// Prints one row per generation (passed/failed/skipped) and the failed tests; with --summary=FILE writes
// the rows as JSON for scripts/test-all.mjs. ZK_LINES=3.4,3.9 picks generations (default all three, then
// the Curator interop files with Curator 5.7.1: "curator-5.7.1").
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const GENERATION_FILES = [
  "test/integration/client-ops.test.ts",
  "test/integration/client-watches.test.ts",
  "test/integration/client-watch-reconnect.test.ts",
  "test/integration/client-session.test.ts",
  "test/integration/client-ensemble.test.ts",
  "test/integration/client-lines.test.ts",
  "test/integration/recipes-election.test.ts",
  "test/integration/recipes-election-faults.test.ts",
  "test/integration/recipes-group.test.ts",
  "test/integration/recipes-process.test.ts",
  "test/integration/recipes-interop.test.ts",
  "test/integration/recipes-blackhole.test.ts",
  "test/integration/compat.test.ts",
  "test/integration/secure-kerberos.test.ts", // its own KDC and Kerberized server of the line (about 20 s)
];

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);
// A run is a server line and files; "curator-5.7.1" runs the Curator interop files with trixie's Curator
// (ZK_CURATOR=5.7.1) on the default 3.8 server, the whole suite having run them with 5.4.0 already.
const CURATOR_FILES = ["test/interop/curator-latch.test.ts", "test/integration/recipes-interop.test.ts"];
const lines = (process.env.ZK_LINES || "3.4,3.9.3,3.9,curator-5.7.1").split(",").map((s) => s.trim()).filter(Boolean);
const spec = (name) => name === "curator-5.7.1"
  ? { server: "3.8", files: CURATOR_FILES, env: { ZK_CURATOR: "5.7.1" } }
  : { server: name, files: GENERATION_FILES, env: {} };
const summaryFile = process.argv.find((a) => a.startsWith("--summary="))?.slice("--summary=".length);
const work = mkdtempSync(join(tmpdir(), "zk-test-lines-"));

function run(cmd, args, env) {
  return new Promise((resolve) => {
    const started = Date.now();
    console.log(`\n[test-lines] $ ZK_SERVER=${env.ZK_SERVER} ${cmd} ${args.join(" ")}`);
    const child = spawn(cmd, args, { stdio: ["ignore", "inherit", "inherit"], env });
    child.on("error", () => resolve({ code: 127, seconds: (Date.now() - started) / 1000 }));
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), seconds: (Date.now() - started) / 1000 }));
  });
}

function startShared(env) {
  const main = join(root, "test/support/servers/zk-shared-main.ts");
  const child = spawn(process.execPath, ["--import", "tsx", main, "--until-stdin-closes"], { stdio: ["pipe", "pipe", "inherit"], env });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c) => {
      out += c;
      if (!out.includes("\n")) return;
      const stop = () => new Promise((done) => {
        if (child.exitCode !== null) return done();
        child.on("exit", () => done());
        child.stdin.end();
      });
      resolve({ connectString: JSON.parse(out.split("\n")[0]).connectString, stop });
    });
    child.on("exit", (code) => reject(new Error(`ZK_SERVER=${env.ZK_SERVER}: shared server failed to start (exit ${code})`)));
  });
}

function counts(jsonFile) {
  const r = JSON.parse(readFileSync(jsonFile, "utf8"));
  const failures = [];
  let broken = 0;
  for (const f of r.testResults ?? []) {
    const file = relative(root, f.name);
    const failedTests = (f.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failedTests) failures.push(`${file} > ${a.fullName}`);
    if (f.status === "failed" && failedTests.length === 0) {
      broken++; // an import or hook error: the file itself failed
      failures.push(`${file} (file failed: ${String(f.message ?? "").split("\n")[0].slice(0, 160)})`);
    }
  }
  return { passed: r.numPassedTests, failed: r.numFailedTests + broken, skipped: r.numPendingTests + (r.numTodoTests ?? 0), failures };
}

const label = (line) => (line.startsWith("curator-") ? `curator ${line.slice(8)}` : `zk ${line}`);
const rows = [];
for (const line of lines) {
  const started = Date.now();
  const { server, files, env: extra } = spec(line);
  const env = { ...process.env, ...extra, ZK_SERVER: server };
  delete env.ZK_CONNECT;
  let shared;
  try {
    shared = await startShared(env);
    env.ZK_CONNECT = shared.connectString;
    const json = join(work, `vitest-${line}.json`);
    if (extra.ZK_CURATOR) console.log(`[test-lines] ZK_CURATOR=${extra.ZK_CURATOR}`);
    const r = await run("npx", ["--no", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${json}`, ...files], env);
    const c = counts(json);
    rows.push({ line, label: label(line), ...c, seconds: (Date.now() - started) / 1000, ok: r.code === 0 && c.failed === 0 && c.passed > 0, code: r.code });
  } catch (err) {
    console.error(`[test-lines] ${err instanceof Error ? err.message : err}`);
    rows.push({ line, label: label(line), passed: 0, failed: 1, skipped: 0, failures: [String(err)], seconds: (Date.now() - started) / 1000, ok: false, code: 1 });
  } finally {
    await shared?.stop();
  }
}
rmSync(work, { recursive: true, force: true });

const pad = (s, n) => String(s).padEnd(n);
console.log("\n" + [pad("generation", 18), pad("passed", 8), pad("failed", 8), pad("skipped", 9), pad("seconds", 9), "status"].join(""));
for (const r of rows) {
  console.log([pad(r.label, 18), pad(r.passed, 8), pad(r.failed, 8), pad(r.skipped, 9), pad(r.seconds.toFixed(1), 9), r.ok ? "ok" : `FAIL (exit ${r.code})`].join(""));
}
for (const r of rows) for (const f of r.failures) console.log(`[test-lines] FAILED on ${r.line}: ${f}`);
if (summaryFile) writeFileSync(summaryFile, JSON.stringify(rows, null, 2));
process.exit(rows.every((r) => r.ok) ? 0 : 1);
