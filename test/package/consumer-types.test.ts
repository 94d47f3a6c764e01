// Types that stand alone (issue 33): the packed tarball, installed offline into a fresh consumer project in a temp
// dir, type-checks with `--strict` and no skipLibCheck on TypeScript 5 (the repo's `typescript`) and 7 (its
// `typescript-7` alias), module nodenext (ESM and a CommonJS .cts) and bundler, with @types/node and WITHOUT it
// (`types: []`, nothing under node_modules/@types), and under `deno check`; the otel subpath with its optional peer
// @opentelemetry/api (linked from the repo's node_modules). The consumer files are
// test/package/consumer/*.ts and the type test test/types/public-api.ts; their `@ts-expect-error` lines must
// all be errors, so untyped events or options fail too. Node only (it drives tsc and deno as processes).
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// import.meta is cast because Deno type-checks against this repo's lib settings, which lack its url (see golden.ts).
const here = (import.meta as { url: string }).url;
const root = fileURLToPath(new URL("../..", here));
const fixtures = join(root, "test/package/consumer");
const tsc = { 5: join(root, "node_modules/typescript/bin/tsc"), 7: join(root, "node_modules/typescript-7/bin/tsc") } as const;

type Major = keyof typeof tsc;
interface Case {
  ts: Major;
  module: "nodenext" | "bundler";
  /** With @types/node (`types: ["node"]` from the repo's node_modules/@types), or with no Node types at all. */
  node: boolean;
  /** The consumer's lib; default: the target's (ES2022 and the DOM, without esnext.disposable). */
  lib?: string[];
  files: string[];
}

/** A CommonJS consumer (module nodenext resolves the package's "require" condition, dist/cjs/*.d.ts). */
const commonjs = `import { ZooKeeper, type SessionState } from "zookeeper-ts";
import { Lock } from "zookeeper-ts/recipes";
export async function cjs(): Promise<void> {
  const zk = await ZooKeeper.connect("127.0.0.1:2181", { tls: { ca: "pem", servername: "zk" } });
  zk.on("state", (s: SessionState) => console.log(s));
  // @ts-expect-error no such event
  zk.on("stat", () => {});
  new Lock(zk, "/lock").on("lost", (reason) => console.log(reason));
  await zk.close();
}
`;

const base = ["app.ts", "public-api.ts", "otel.ts"];
const cases: Case[] = ([5, 7] as const).flatMap((ts): Case[] => [
  { ts, module: "nodenext", node: false, files: [...base, "commonjs.cts"] },
  { ts, module: "bundler", node: false, files: base },
  // A Node-style project: lib ES2022 without the DOM, Node's globals from @types/node.
  { ts, module: "nodenext", node: true, lib: ["es2022"], files: [...base, "commonjs.cts", "node.ts"] },
  { ts, module: "bundler", node: true, files: [...base, "node.ts"] },
  // `await using` on the target's default lib (ES2022 has no esnext.disposable): the package's .d.ts reference that lib.
  { ts, module: "nodenext", node: false, files: ["dispose.ts"] },
]);

const label = (c: Case): string =>
  `TypeScript ${c.ts}, module ${c.module}, ${c.node ? "with @types/node" : "no @types/node"}${c.lib ? `, lib ${c.lib.join("+")}` : ""}: ${c.files.join(" ")}`;

/** Newest modification time under `dir`, ms. */
function newest(dir: string): number {
  let t = 0;
  for (const f of readdirSync(dir, { recursive: true })) {
    const s = statSync(join(dir, String(f)));
    if (s.isFile()) t = Math.max(t, s.mtimeMs);
  }
  return t;
}

let work: string;
let consumer: string;

describe("the published types stand alone (TypeScript 5 and 7, deno check)", () => {
  beforeAll(() => {
    // npm test builds before the tests run; a lone run of this file builds when dist/ is missing or older than src/.
    const stamp = join(root, "dist/cjs/package.json"); // the build's last write
    if (!existsSync(stamp) || statSync(stamp).mtimeMs < newest(join(root, "src"))) {
      execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" });
    }
    work = mkdtempSync(join(tmpdir(), "zk-consumer-"));
    const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" });
    const [info] = JSON.parse(out.slice(out.indexOf("["))) as { filename: string }[];
    consumer = join(work, "consumer");
    mkdirSync(join(consumer, "src"), { recursive: true });
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2));
    // The package itself from the tarball only: no registry.
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", join(work, info!.filename)], { cwd: consumer, stdio: "inherit" });
    for (const f of readdirSync(fixtures)) copyFileSync(join(fixtures, f), join(consumer, "src", f));
    copyFileSync(join(root, "test/types/public-api.ts"), join(consumer, "src/public-api.ts"));
    // The otel subpath's optional peer, as its users install it (the repo's copy: no registry; it has no dependencies).
    mkdirSync(join(consumer, "node_modules/@opentelemetry"), { recursive: true });
    symlinkSync(join(root, "node_modules/@opentelemetry/api"), join(consumer, "node_modules/@opentelemetry/api"), "dir");
    writeFileSync(join(consumer, "src/commonjs.cts"), commonjs);
  }, 180_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the consumer has the package from the tarball and no Node types", () => {
    assert.equal(existsSync(join(consumer, "node_modules/zookeeper-ts/dist/esm/index.d.ts")), true);
    assert.equal(existsSync(join(consumer, "node_modules/@types")), false);
    for (const major of [5, 7] as const) {
      const version = execFileSync(process.execPath, [tsc[major], "--version"], { encoding: "utf8" }).trim();
      console.log(`[consumer-types] typescript ${major}: ${version}`);
      assert.match(version, new RegExp(`^Version ${major}\\.`));
    }
  });

  it("the installed zkts (node_modules/.bin, a link into dist/esm) prints the package's version", () => {
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      assert.equal(execFileSync(join(consumer, "node_modules/.bin/zkts"), [flag], { cwd: consumer, encoding: "utf8" }), `zkts ${version}\n`);
    }
  });

  for (const [n, c] of cases.entries()) {
    it(label(c), () => {
      const config = `tsconfig.${n + 1}.json`;
      const compilerOptions = {
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        target: "es2022",
        module: c.module === "nodenext" ? "nodenext" : "esnext",
        moduleResolution: c.module,
        ...(c.lib ? { lib: c.lib } : {}),
        ...(c.node ? { types: ["node"], typeRoots: [join(root, "node_modules/@types")] } : { types: [] }),
      };
      writeFileSync(join(consumer, config), JSON.stringify({ compilerOptions, files: c.files.map((f) => `src/${f}`) }, null, 2));
      const t = performance.now();
      const r = spawnSync(process.execPath, [tsc[c.ts], "-p", config], { cwd: consumer, encoding: "utf8" });
      const text = (r.stdout + r.stderr).trim();
      console.log(`[consumer-types] ${label(c)}\n  $ tsc -p ${config} -> exit ${r.status} (${((performance.now() - t) / 1000).toFixed(1)} s)${text ? `\n${text}` : ""}`);
      assert.equal(r.status, 0, `tsc ${c.ts} (${label(c)}) failed:\n${text}`);
    }, 120_000);
  }

  // node.ts is left out: Deno resolves `node:*` types from npm:@types/node in node_modules, which this consumer lacks.
  it("deno check: app.ts, dispose.ts, otel.ts and public-api.ts", () => {
    const files = ["app.ts", "dispose.ts", "otel.ts", "public-api.ts"].map((f) => `src/${f}`);
    const t = performance.now();
    const r = spawnSync(join(root, "node_modules/.bin/deno"), ["check", ...files], { cwd: consumer, encoding: "utf8", env: { ...process.env, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" } });
    const text = (r.stdout + r.stderr).trim();
    console.log(`[consumer-types] $ deno check ${files.join(" ")} -> exit ${r.status} (${((performance.now() - t) / 1000).toFixed(1)} s)${text ? `\n${text}` : ""}`);
    assert.equal(r.status, 0, `deno check failed:\n${text}`);
  }, 120_000);
});
