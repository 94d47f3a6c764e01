// Finds a local ZooKeeper to run: $ZOOKEEPER_HOME, else Debian's package, else (as root with apt-get)
// installs Debian's `zookeeper` package. Throws an error naming every way to provide a server.
import { existsSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { lineParts, linesCache, requestedLine, type ServerLine } from "./zk-lines.ts";

export interface LocalInstall {
  java: string;
  classpath: string[];
  jvmArgs: string[];
  source: string;
}

const DEBIAN = "/usr/share/java";
// TLS on the client port needs these Netty jars that Debian's zookeeper.jar manifest omits.
const DEBIAN_EXTRAS = ["netty-codec.jar", "netty-resolver.jar", "netty-transport-native-unix-common.jar"];

export const HOW_TO_GET_A_SERVER =
  "No ZooKeeper server available. Provide one of: (a) ZK_CONNECT=host:port (shared server only); " +
  "(b) a running Docker engine (image zookeeper:3.8.0 via testcontainers); " +
  "(c) ZOOKEEPER_HOME pointing at a ZooKeeper 3.8 install (jars in $ZOOKEEPER_HOME/lib or the dir itself) and a `java` on PATH or JAVA_HOME; " +
  "(d) Debian's package: `apt-get install -y zookeeper` (/usr/share/java/zookeeper.jar), which this harness runs itself when it is root with apt-get.";

function findJava(): string | undefined {
  const home = process.env.JAVA_HOME;
  if (home && existsSync(join(home, "bin", "java"))) return join(home, "bin", "java");
  for (const dir of (process.env.PATH ?? "").split(":")) {
    if (dir && existsSync(join(dir, "java"))) return join(dir, "java");
  }
  return undefined;
}

function hasZkJar(dir: string): boolean {
  try {
    return readdirSync(dir).some((f) => /^zookeeper(-\d[\w.-]*)?\.jar$/.test(f));
  } catch {
    return false;
  }
}

function fromHome(home: string): Omit<LocalInstall, "java"> | undefined {
  if (existsSync(join(home, "zookeeper.jar")) && existsSync(join(home, "slf4j-api.jar"))) return fromDebian(home);
  const lib = join(home, "lib");
  const dirs = [lib, home].filter(hasZkJar);
  if (dirs.length === 0) return undefined;
  // Apache tarballs ship every dependency (and a logger) in lib/; conf/ holds logback.xml.
  const classpath = [...dirs.map((d) => join(d, "*")), join(home, "conf")];
  const logback = join(home, "conf", "logback.xml");
  const jvmArgs = existsSync(logback) ? [`-Dlogback.configurationFile=${logback}`] : [];
  return { classpath, jvmArgs, source: `ZOOKEEPER_HOME=${home}` };
}

function fromDebian(dir = DEBIAN): Omit<LocalInstall, "java"> | undefined {
  if (!existsSync(join(dir, "zookeeper.jar"))) return undefined;
  const logger = ["slf4j-simple.jar", "slf4j-nop.jar"].find((j) => existsSync(join(dir, j)));
  const jars = ["zookeeper.jar", ...DEBIAN_EXTRAS, ...(logger ? [logger] : [])];
  const classpath = jars.filter((j) => existsSync(join(dir, j))).map((j) => join(dir, j));
  const jvmArgs = ["-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"];
  return { classpath, jvmArgs, source: `Debian package (${dir})` };
}

// Quiet: one line says what happens and where apt's output goes.
function aptInstall(): Promise<void> {
  mkdirSync(linesCache(), { recursive: true });
  const log = join(linesCache(), "apt-install.log");
  process.stderr.write(`[zk-harness] no ZooKeeper found: installing Debian's zookeeper package (apt-get, as root; output in ${log})\n`);
  const script = "apt-get update && apt-get -o DPkg::Lock::Timeout=300 install -y zookeeper";
  const out = openSync(log, "a");
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script], { stdio: ["ignore", out, out], env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`apt-get install zookeeper failed (exit ${code}); see ${log}`))));
  });
}

function canApt(): boolean {
  return process.getuid?.() === 0 && existsSync("/usr/bin/apt-get");
}

/** One lookup; `home` is $ZOOKEEPER_HOME, `mayApt` allows installing Debian's package. */
export async function findInstall(home: string | undefined, mayApt: boolean): Promise<LocalInstall> {
  let parts = home ? fromHome(home) : fromDebian();
  if (home && !parts) throw new Error(`ZOOKEEPER_HOME=${home} holds no zookeeper jar. ${HOW_TO_GET_A_SERVER}`);
  if (!parts && mayApt && canApt()) {
    await aptInstall();
    parts = fromDebian();
  }
  const java = findJava();
  if (!parts || !java) throw new Error(`${HOW_TO_GET_A_SERVER}${parts ? " (ZooKeeper found, but no java)" : ""}`);
  return { java, ...parts };
}

/** A line fetched from Debian's archive (ZK_SERVER=3.4|3.9.3|3.9); see zk-lines.ts. */
export async function lineInstall(line: Exclude<ServerLine, "3.8">): Promise<LocalInstall> {
  const java = findJava();
  if (!java) throw new Error(`ZooKeeper ${line} needs a \`java\` on PATH or JAVA_HOME`);
  return { java, ...(await lineParts(line)) };
}

const found = new Map<ServerLine, Promise<LocalInstall>>();

/** Memoised per line (default: ZK_SERVER, else 3.8): the first call may run apt-get; later calls reuse it. */
export function localInstall(line: ServerLine = requestedLine()): Promise<LocalInstall> {
  let p = found.get(line);
  if (!p) {
    p = line === "3.8" ? findInstall(process.env.ZOOKEEPER_HOME || undefined, true) : lineInstall(line);
    p.catch(() => found.delete(line));
    found.set(line, p);
  }
  return p;
}
