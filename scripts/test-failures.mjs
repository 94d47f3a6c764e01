// The names of failed tests, and the first line of each one's error where the runner gives it, for
// scripts/test-all.mjs to print again after its summary table: a CI log is often read from its end only.
import { readFileSync } from "node:fs";
import { relative } from "node:path";

const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");
// The gist of a failure: its first non-empty lines (an assertion's diff follows a bare "AssertionError:" line),
// indented under the test's name, so the summary at the end of a run says what failed without the scrollback.
const firstLine = (m, max = 12) => {
  const lines = String(m ?? "").split("\n").map((l) => l.trimEnd()).filter((l) => l.trim() !== "");
  const kept = lines.slice(0, max).map((l) => l.slice(0, 300));
  if (lines.length > max) kept.push(`… (${lines.length - max} more lines above, in the run's output)`);
  return kept.join("\n      ").trim();
};
const unescape = (s) => s.replace(/&gt;/g, ">").replace(/&lt;/g, "<").replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, "&");

/** vitest's JSON report (`root` makes file names relative); its text output `out` when the report is missing. */
export function vitestFailures(jsonFile, out, root = process.cwd()) {
  let r;
  try {
    r = JSON.parse(readFileSync(jsonFile, "utf8"));
  } catch {
    return textFailures(out);
  }
  const found = [];
  for (const f of r.testResults ?? []) {
    const file = relative(root, f.name ?? "");
    const failed = (f.assertionResults ?? []).filter((a) => a.status === "failed");
    for (const a of failed) found.push(`${file} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`);
    if (f.status === "failed" && failed.length === 0) found.push(`${file}: ${firstLine(f.message)}`);
  }
  return found;
}

/**
 * From a runner's text output: Bun prints a failed test's error, then `(fail) name [ms]` (and, with more than
 * one, lists them again after `N tests failed:`); vitest prints `FAIL  file > name` with the error below.
 */
export function textFailures(out) {
  const lines = stripAnsi(out ?? "").split("\n");
  const repeat = lines.findIndex((l) => /^\d+ tests? failed:$/.test(l.trim()));
  const end = repeat === -1 ? lines.length : repeat;
  const found = [];
  let file = "";
  for (let i = 0; i < end; i++) {
    const header = /^(\S+\.test\.[cm]?[jt]s):$/.exec(lines[i]); // Bun's line before each file's results
    if (header) file = `${header[1]} > `;
    const bun = /^\(fail\) (.*)$/.exec(lines[i]);
    if (bun) {
      const error = lines.slice(Math.max(0, i - 60), i).reverse().find((l) => /^(error|\w*Error)\b/.test(l.trim()));
      found.push(`${file}${bun[1]}${error ? `: ${error.trim()}` : ""}`);
      continue;
    }
    const vt = /^\s*FAIL\s+(\S.*)$/.exec(lines[i]);
    if (vt) found.push(`${vt[1].trim()}: ${firstLine(lines.slice(i + 1, i + 6).join("\n"))}`);
  }
  return [...new Set(found)];
}

/** Deno's JUnit report: the failed leaves (a describe block fails with its step), with their first line. */
export function denoFailures(junitFile) {
  let xml;
  try {
    xml = readFileSync(junitFile, "utf8");
  } catch {
    return [];
  }
  const cases = [...xml.matchAll(/<testcase name="([^"]*)"[^>]*?(\/>|>([\s\S]*?)<\/testcase>)/g)].map((m) => ({
    name: unescape(m[1]),
    failure: /<failure[^>]*message="([^"]*)"/.exec(m[3] ?? "")?.[1],
  }));
  const names = cases.map((c) => c.name);
  return cases
    .filter((c) => c.failure !== undefined && !names.some((n) => n.startsWith(`${c.name} > `)))
    .map((c) => `${c.name}: ${firstLine(unescape(c.failure))}`);
}
