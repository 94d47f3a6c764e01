// Builds dist/esm (ESM + .d.ts) and dist/cjs (CommonJS + .d.ts) from src with tsc.
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";

const tsc = (...args) => execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", ...args], { stdio: "inherit" });
rmSync("dist", { recursive: true, force: true });
tsc("-p", "tsconfig.build.json");
// verbatimModuleSyntax forbids CommonJS output from ESM syntax, so it is switched off for that build only.
tsc("-p", "tsconfig.build.json", "--module", "commonjs", "--moduleResolution", "node10", "--verbatimModuleSyntax", "false", "--outDir", "dist/cjs");
writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs" }) + "\n");
// The public classes' `[Symbol.asyncDispose]()` names a symbol of lib esnext.disposable: every one of them imports
// client/emitter.d.ts, whose lib reference declares it in a consumer whose lib is older (src/client/emitter.ts).
for (const out of ["dist/esm", "dist/cjs"]) {
  const file = `${out}/client/emitter.d.ts`;
  writeFileSync(file, `/// <reference lib="esnext.disposable" />\n${readFileSync(file, "utf8")}`);
}
