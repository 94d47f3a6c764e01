// The clients compared, each launched as its own process with the same CLI:
// <runner> <connectString> <workload> [key=value ...] → one JSON line on stdout.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export interface Peer {
  id: string; // column/row label
  peer: string; // library
  runtime: string;
  cmd: string;
  args: string[];
  /** Variants of our own client (other runtimes, tracing on): compared with zookeeper-ts on Node. */
  variantOf?: string;
  /** Runs only these workloads (by key); every workload when absent. */
  only?: string[];
}

/** The workloads the traced variants run (issue 32): pipelined reads and a storm of watch events. */
export const TRACED_WORKLOADS = ["get-100", "watch-storm"];

const ROOT = resolve(import.meta.dirname, "..", "..");
const RUNNERS = join(ROOT, "bench", "runners");
const BIN = join(ROOT, "node_modules", ".bin");
const BUILD = join(ROOT, "bench", ".build");
const BUILT_RUNNERS = join(BUILD, "js", "bench", "runners");
const JAVA_CP = ["/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-nop.jar"];

/** Compiles bench/java/Bench.java into bench/.build/java; returns the class dir. */
export function compileJava(): string {
  const out = join(BUILD, "java");
  mkdirSync(out, { recursive: true });
  execFileSync("javac", ["-d", out, "-cp", JAVA_CP[0], join(ROOT, "bench", "java", "Bench.java")], { stdio: "inherit" });
  return out;
}

/**
 * Compiles src and the runners with tsc into bench/.build/js, so every Node runner (ours and the
 * peers' adapters) runs plain JavaScript, as users run our dist/ — no loader hooks or added helpers.
 */
export function compileRunners(): void {
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "bench", "tsconfig.json")], { stdio: "inherit" });
  } catch (e) {
    // tsc still emits on type errors (work in progress elsewhere in src); only missing output is fatal.
    if (!existsSync(join(BUILT_RUNNERS, "zookeeper-ts.js"))) throw e;
    process.stderr.write("bench: tsc reported type errors (above); running the emitted JavaScript anyway\n");
  }
  writeFileSync(join(BUILD, "js", "package.json"), JSON.stringify({ type: "module" }) + "\n");
}

const node = (file: string): { cmd: string; args: string[] } => ({ cmd: process.execPath, args: [join(BUILT_RUNNERS, file.replace(/\.ts$/, ".js"))] });

export function allPeers(javaClasses: string | undefined): Peer[] {
  const peers: Peer[] = [
    { id: "zookeeper-ts", peer: "zookeeper-ts", runtime: "node", ...node("zookeeper-ts.ts") },
    // Traced (bench/runners/tracing.ts): a plain zookeeper-ts:request subscriber, and the OpenTelemetry bridge.
    { id: "zookeeper-ts+subscriber", peer: "zookeeper-ts", runtime: "node", ...node("zookeeper-ts-subscriber.ts"), variantOf: "zookeeper-ts", only: TRACED_WORKLOADS },
    { id: "zookeeper-ts+otel", peer: "zookeeper-ts", runtime: "node", ...node("zookeeper-ts-otel.ts"), variantOf: "zookeeper-ts", only: TRACED_WORKLOADS },
    { id: "node-zookeeper-client", peer: "node-zookeeper-client", runtime: "node", ...node("node-zookeeper-client.ts") },
    { id: "zookeeper (native)", peer: "zookeeper-native", runtime: "node", ...node("zookeeper-native.ts") },
    // The wire limit: a minimal hand-written client on the same socket (bench/runners/raw.ts).
    { id: "raw", peer: "raw", runtime: "node", ...node("raw.ts") },
  ];
  // kazoo (Python, Debian's python3-kazoo) through its async API, when the system Python has it.
  const python = "/usr/bin/python3";
  if (existsSync(python) && spawnSync(python, ["-c", "import kazoo"]).status === 0) {
    peers.push({ id: "kazoo", peer: "kazoo", runtime: "python", cmd: python, args: [join(RUNNERS, "kazoo_runner.py")] });
  }
  if (javaClasses) {
    peers.push({ id: "java", peer: "java", runtime: "java", cmd: "java", args: ["-cp", [javaClasses, ...JAVA_CP].join(":"), "Bench"] });
  }
  const bun = join(BIN, "bun");
  if (existsSync(bun)) peers.push({ id: "zookeeper-ts@bun", peer: "zookeeper-ts", runtime: "bun", cmd: bun, args: [join(RUNNERS, "zookeeper-ts.ts")], variantOf: "zookeeper-ts" });
  const deno = join(BIN, "deno");
  if (existsSync(deno)) {
    peers.push({ id: "zookeeper-ts@deno", peer: "zookeeper-ts", runtime: "deno", cmd: deno, args: ["run", "-A", "--quiet", join(RUNNERS, "zookeeper-ts.ts")], variantOf: "zookeeper-ts" });
  }
  return peers;
}
