// scripts/check-paths.mjs (the "paths" step of npm test): which repository paths a text cites, the import
// cycles it finds, and the script failing on a planted cite of a missing file and on a planted import cycle
// in a throwaway git repository, then passing once the file exists and the cycle is broken. Cited roots are written as "~" here and swapped in at run time, so that this file cites
// nothing missing itself.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { spawnSync, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const script = fileURLToPath(new URL("../../scripts/check-paths.mjs", import.meta.url));
interface CheckPaths {
  citedPaths(text: string): string[];
  importCycles(root: string, files: string[]): string[][];
  newCycles(cycles: string[][], known: string[][]): string[][];
}
const { citedPaths, importCycles, newCycles } = (await import(new URL("../../scripts/check-paths.mjs", import.meta.url).href)) as CheckPaths;
/** `text` with each "~/" standing for "src/" and "~T/" for "test/". */
const src = (text: string): string => text.replaceAll("~T/", "test/").replaceAll("~/", "src/");
const cited = (text: string): string[] => citedPaths(src(text));

function runScript(cwd: string): { status: number | null; out: string } {
  // Deno runs a script through `deno run`; Node and Bun take it as it is.
  const args = "Deno" in globalThis ? ["run", "-A", script] : [script];
  const r = spawnSync(process.execPath, args, { cwd, encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("check-paths", () => {
  it("finds files and folders cited in backticks, links, comments and strings, without a sentence's full stop", () => {
    assert.deepEqual(cited("see `~/client/caller.ts`, [the guide](~T/sim/README.md) and ~T/support/."), ["src/client/caller.ts", "test/sim/README.md", "test/support/"]);
    assert.deepEqual(cited('// as in ~T/unit/wait.test.ts: import("~/index.ts")'), ["test/unit/wait.test.ts", "src/index.ts"]);
    assert.deepEqual(cited("bench/README.md#profiling and docs/client.md's table"), ["bench/README.md", "docs/client.md"]);
  });

  it("leaves out what names no single repository file: folders without a slash, globs, templates, relative and foreign paths", () => {
    assert.deepEqual(cited("~T/unit and ~/client"), []);
    assert.deepEqual(cited("~T/**/*.test.ts, ~T/integration/*.test.ts, ~T/compat-results/<line>.json, ~T/${name}.ts"), []);
    assert.deepEqual(cited('import "../~/index.ts"; ./~/index.ts; https://github.com/apache/zookeeper/blob/master/zookeeper-server/~/main/A.java'), []);
    assert.deepEqual(cited("mysrc/x.ts, node_modules/typescript/lib/typescript.js, .ci/run"), []);
  });

  it("finds import cycles through type-only, re-export and dynamic imports, and passes the known ones while they shrink", () => {
    const repo = mkdtempSync(join(tmpdir(), "zk-check-cycles-"));
    try {
      mkdirSync(join(repo, "src", "d"), { recursive: true });
      const files = Object.fromEntries(
        Object.entries({
          "~/a.ts": 'import type { B } from "./d/b.ts";\nexport interface A { b?: B }\n',
          "~/d/b.ts": 'export * from "../c.ts";\nexport interface B { n: number }\n',
          "~/c.ts": 'export const load = () => import("./a.ts");\n// import { x } from "./e.ts" (a comment is no edge)\n',
          "~/e.ts": 'import { load } from "./c.ts";\nexport const x = load;\n',
        }).map(([f, text]) => [src(f), text]),
      );
      for (const [f, text] of Object.entries(files)) writeFileSync(join(repo, f), text);
      const cycles = importCycles(repo, Object.keys(files));
      const abd = ["~/a.ts", "~/c.ts", "~/d/b.ts"].map(src);
      assert.deepEqual(cycles, [abd]);
      assert.deepEqual(newCycles(cycles, [[...abd, src("~/e.ts")]]), []);
      assert.deepEqual(newCycles(cycles, [["~/a.ts", "~/d/b.ts"].map(src)]), cycles);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });

  it("fails on a planted cite of a missing file, naming file, line and path, and passes once it exists", () => {
    const repo = mkdtempSync(join(tmpdir(), "zk-check-paths-"));
    try {
      const git = (...a: string[]): string => execFileSync("git", a, { cwd: repo, encoding: "utf8" });
      git("init", "-q");
      mkdirSync(join(repo, "src"));
      mkdirSync(join(repo, "docs"));
      writeFileSync(join(repo, "src", "a.ts"), src("// The codec.\n// Frames as in ~/frame.ts (see docs/).\nexport {};\n"));
      writeFileSync(join(repo, "docs", "guide.md"), src("Start at `~/a.ts`.\n"));
      git("add", ".");
      const failed = runScript(repo);
      assert.equal(failed.status, 1, failed.out);
      assert.match(failed.out, /src\/a\.ts:2: cites src\/frame\.ts, which does not exist/);
      assert.match(failed.out, /1 cited path\(s\) missing/);

      writeFileSync(join(repo, "src", "frame.ts"), "export {};\n");
      git("add", ".");
      const passed = runScript(repo);
      assert.equal(passed.status, 0, passed.out);
      assert.match(passed.out, /3 files: every cited path exists/);

      writeFileSync(join(repo, "src", "frame.ts"), 'import "./a.ts";\nexport {};\n');
      writeFileSync(join(repo, "src", "a.ts"), 'import type {} from "./frame.ts";\nexport {};\n');
      const cyclic = runScript(repo);
      assert.equal(cyclic.status, 1, cyclic.out);
      assert.match(cyclic.out, /import cycle: src\/a\.ts, src\/frame\.ts/);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
