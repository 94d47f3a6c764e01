// Builds dist/esm (ESM + .d.ts) and dist/cjs (CommonJS + .d.ts) from src with tsc.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";

const tsc = (...args) => execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", ...args], { stdio: "inherit" });
rmSync("dist", { recursive: true, force: true });
tsc("-p", "tsconfig.build.json");
// verbatimModuleSyntax forbids CommonJS output from ESM syntax, so it is switched off for that build only.
tsc("-p", "tsconfig.build.json", "--module", "commonjs", "--moduleResolution", "node10", "--verbatimModuleSyntax", "false", "--outDir", "dist/cjs");
writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs" }) + "\n");
