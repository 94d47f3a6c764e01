// Which server line the tests run against (ZK_SERVER, see zk-lines.ts) and its exact version, known at
// collection time, plus gates for tests that cannot apply to an older server: such a test is SKIPPED
// visibly, with the reason in its name ("needs ZooKeeper ≥ 3.6; server is 3.4.13"), never left out.
//
//   itFrom("3.6", "addWatch persistent", async () => { ... });
//   describeFrom("3.5", "containers", () => { ... });
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "../bdd.ts";
import { fetchedVersion, lineDir, requestedLine, systemVersion, type ServerLine } from "./zk-lines.ts";

export type { ServerLine } from "./zk-lines.ts";

export interface LineInfo {
  line: ServerLine;
  version: string; // "3.4.13", "3.8.0", "3.9.3", "3.9.6"
  source: string; // where that version was read
}

const FETCH_SCRIPT = fileURLToPath(new URL("../../../scripts/fetch-zk-lines.sh", (import.meta as { url: string }).url));
const DOCKER_VERSION = "3.8.0"; // the image zk-docker.ts runs

let info: LineInfo | undefined;

/** The line and exact version of the server the harness provides (fetching the line first if needed). */
export function serverLine(): LineInfo {
  if (info) return info;
  const line = requestedLine();
  if (line === "3.8") {
    const v = systemVersion();
    info = v ? { line, version: v, source: "/usr/share/java" } : { line, version: DOCKER_VERSION, source: "zookeeper:3.8.0 image" };
    return info;
  }
  if (!existsSync(join(lineDir(line), "READY"))) {
    // Collection time is synchronous: fetch now (once; the script's flock serialises parallel files).
    const r = spawnSync("bash", [FETCH_SCRIPT, line], { stdio: ["ignore", 2, 2] });
    if (r.status !== 0) throw new Error(`fetching ZooKeeper line ${line} failed (exit ${r.status})`);
  }
  const version = fetchedVersion(line);
  if (!version) throw new Error(`ZooKeeper line ${line}: no version in ${lineDir(line)}`);
  info = { line, version, source: lineDir(line) };
  return info;
}

/** -1, 0, 1 comparing dotted versions numerically ("3.10" > "3.9"). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

export function serverAtLeast(min: string): boolean {
  return compareVersions(serverLine().version, min) >= 0;
}

function skipReason(min: string): string {
  return `needs ZooKeeper ≥ ${min}; server is ${serverLine().version}`;
}

type Fn = () => unknown;
interface SkipApi {
  it(name: string, fn: Fn): void;
  describe(name: string, fn: Fn): void;
}

async function loadSkip(): Promise<SkipApi> {
  if (process.env.VITEST || "Bun" in globalThis) {
    const s = { it, describe } as unknown as { it: { skip: (n: string, f: Fn) => void }; describe: { skip: (n: string, f: Fn) => void } };
    return { it: (n, f) => s.it.skip(n, f), describe: (n, f) => s.describe.skip(n, f) };
  }
  const t = await import("node:test"); // Deno runs the files through node:test (bdd.ts)
  return {
    it: (n, f) => void t.it(n, { skip: true }, f as () => void),
    describe: (n, f) => void t.describe(n, { skip: true }, f as () => void),
  };
}
const skip = await loadSkip();

/** A test that applies from server version `min` on; below it, a visibly skipped test saying why. */
export function itFrom(min: string, name: string, fn: Fn, timeoutMs?: number): void {
  if (serverAtLeast(min)) it(name, fn, timeoutMs);
  else skip.it(`${name} [${skipReason(min)}]`, fn);
}

/** A block that applies from server version `min` on; below it, skipped visibly with the reason. */
export function describeFrom(min: string, name: string, fn: Fn): void {
  if (serverAtLeast(min)) describe(name, fn);
  else skip.describe(`${name} [${skipReason(min)}]`, fn);
}
