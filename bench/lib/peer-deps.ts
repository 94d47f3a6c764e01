// The benchmark's peer clients are not devDependencies: the native `zookeeper` package compiles the Apache
// C client and needs a C toolchain, which `npm ci` and `npm test` must not. `npm run bench` installs them
// on demand into bench/.build/node_modules (a cache kept between runs, gitignored), where the compiled
// runners in bench/.build/js find them by ordinary Node resolution.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..", "..");
/** The cache: its node_modules is on the resolution path of bench/.build/js/bench/runners/*.js. */
export const PEER_CACHE = join(ROOT, "bench", ".build");

/** The peers compared in bench/README.md, pinned; their Peer.peer ids in peers.ts. */
export const PEER_PACKAGES = [
  { peer: "node-zookeeper-client", name: "node-zookeeper-client", version: "1.1.3" },
  { peer: "zookeeper-native", name: "zookeeper", version: "7.3.0" }, // native: needs cc/g++, make, python3
] as const;

function installedVersion(name: string): string | undefined {
  const file = join(PEER_CACHE, "node_modules", name, "package.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version : undefined;
}

/**
 * Installs each missing peer into the cache, one at a time so that one that cannot build (no C toolchain)
 * does not keep the other out. Returns the Peer.peer ids that are available, and why the others are not.
 */
export function ensurePeerPackages(log: (m: string) => void): { available: Set<string>; missing: Map<string, string> } {
  mkdirSync(PEER_CACHE, { recursive: true });
  const manifest = join(PEER_CACHE, "package.json");
  // "type": "module" as the repository's own: this file is the package scope of bench/.build/js (the compiled
  // runners and prof.js), and without it Node parses every module there twice (CommonJS first), which
  // bench/prof.ts's instruction counts would include.
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "zookeeper-ts-bench-peers", private: true, type: "module", allowScripts: { zookeeper: true } }, null, 2) + "\n");
  else {
    // A cache made before "type" was written there: add it.
    const cached = JSON.parse(readFileSync(manifest, "utf8")) as Record<string, unknown>;
    if (cached.type !== "module") writeFileSync(manifest, JSON.stringify({ ...cached, type: "module" }, null, 2) + "\n");
  }
  const available = new Set<string>();
  const missing = new Map<string, string>();
  for (const p of PEER_PACKAGES) {
    if (installedVersion(p.name) === p.version) continue;
    log(`installing bench peer ${p.name}@${p.version} into ${PEER_CACHE}/node_modules (once; cached)`);
    try {
      // Saved into the cache's own package.json: a later install then keeps (does not prune) the earlier ones.
      execFileSync("npm", ["install", "--prefix", PEER_CACHE, "--save-exact", "--no-package-lock", "--no-audit", "--no-fund", `${p.name}@${p.version}`], { stdio: ["ignore", "inherit", "inherit"] });
    } catch (e) {
      missing.set(p.peer, `${p.name}@${p.version} could not be installed (${(e as Error).message.split("\n")[0]})`);
    }
  }
  for (const p of PEER_PACKAGES) {
    if (installedVersion(p.name) === p.version) available.add(p.peer);
    else if (!missing.has(p.peer)) missing.set(p.peer, `${p.name}@${p.version} is not in ${PEER_CACHE}/node_modules after npm install`);
  }
  return { available, missing };
}
