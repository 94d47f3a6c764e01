// The clients compared, each launched as its own process with the same CLI:
// <runner> <connectString> <workload> [key=value ...] → one JSON line on stdout.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export interface Peer {
  id: string; // column/row label
  peer: string; // library
  runtime: string;
  cmd: string;
  args: string[];
  /** Variants of our own client on other runtimes: compared with zookeeper-ts on Node. */
  variantOf?: string;
}

const ROOT = resolve(import.meta.dirname, "..", "..");
const RUNNERS = join(ROOT, "bench", "runners");
const BIN = join(ROOT, "node_modules", ".bin");
const JAVA_CP = ["/usr/share/java/zookeeper.jar", "/usr/share/java/slf4j-nop.jar"];

/** Compiles bench/java/Bench.java into a temp dir; returns the class dir. */
export function compileJava(): string {
  const out = mkdtempSync(join(tmpdir(), "zk-bench-java-"));
  execFileSync("javac", ["-d", out, "-cp", JAVA_CP[0], join(ROOT, "bench", "java", "Bench.java")], { stdio: "inherit" });
  return out;
}

const node = (file: string): { cmd: string; args: string[] } => ({ cmd: process.execPath, args: ["--import", "tsx", join(RUNNERS, file)] });

export function allPeers(javaClasses: string | undefined): Peer[] {
  const peers: Peer[] = [
    { id: "zookeeper-ts", peer: "zookeeper-ts", runtime: "node", ...node("zookeeper-ts.ts") },
    { id: "node-zookeeper-client", peer: "node-zookeeper-client", runtime: "node", ...node("node-zookeeper-client.ts") },
    { id: "zookeeper (native)", peer: "zookeeper-native", runtime: "node", ...node("zookeeper-native.ts") },
  ];
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
