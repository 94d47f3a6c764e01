// Server lines besides the system's 3.8.0: ZK_SERVER=3.4 | 3.9.3 | 3.9 (unset or 3.8: Debian bookworm's
// package, as before). Other lines come from Debian's archive through scripts/fetch-zk-lines.sh (private
// apt configuration, `apt-get download`, `dpkg-deb -x` into a cache), fetched on first use; the script
// holds a flock, so parallel test files wait for one fetch instead of fetching side by side.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export type ServerLine = "3.4" | "3.8" | "3.9.3" | "3.9";
export const SERVER_LINES: readonly ServerLine[] = ["3.4", "3.8", "3.9.3", "3.9"];
/** Where each fetched line comes from (3.8 is the system's package). */
export const LINE_SUITES: Record<ServerLine, string> = { "3.4": "bullseye", "3.8": "bookworm", "3.9.3": "trixie", "3.9": "sid" };

/** The line ZK_SERVER names; throws on a name the harness does not know (never a silent default). */
export function requestedLine(env: string | undefined = process.env.ZK_SERVER): ServerLine {
  const name = env?.trim() || "3.8";
  if (name === "3.8.0") return "3.8";
  if ((SERVER_LINES as readonly string[]).includes(name)) return name as ServerLine;
  throw new Error(`ZK_SERVER=${name} is not a server line the harness knows (${SERVER_LINES.join(", ")})`);
}

export function linesCache(): string {
  return join(process.env.ZK_LINES_CACHE || join(homedir(), ".cache", "zookeeper-ts"), "debian");
}

/** The folder of a fetched line (or of Curator 5.7.1: "curator-5.7.1"). */
export function lineDir(name: string): string {
  return join(linesCache(), "lines", name);
}

const FETCH_SCRIPT = fileURLToPath(new URL("../../../scripts/fetch-zk-lines.sh", (import.meta as { url: string }).url));

/** Upstream version ("3.4.13") of a fetched line, read from its Debian version; undefined before the fetch. */
export function fetchedVersion(name: string): string | undefined {
  const file = join(lineDir(name), "version");
  if (!existsSync(join(lineDir(name), "READY")) || !existsSync(file)) return undefined;
  return /^(?:\d+:)?(\d+(?:\.\d+)*)/.exec(readFileSync(file, "utf8").trim())?.[1];
}

/** Version of the system's ZooKeeper package (its versioned jar in /usr/share/java), if installed. */
export function systemVersion(dir = "/usr/share/java"): string | undefined {
  try {
    for (const f of readdirSync(dir)) {
      const m = /^zookeeper-(\d+\.\d+\.\d+)\.jar$/.exec(f);
      if (m) return m[1];
    }
  } catch {
    // no such dir
  }
  return undefined;
}

const fetching = new Map<string, Promise<string>>();

/** Fetches a line once (cached on disk; the script says so in one line and logs apt to a file). */
export function fetchLine(name: string): Promise<string> {
  const dir = lineDir(name);
  if (existsSync(join(dir, "READY"))) return Promise.resolve(dir);
  let p = fetching.get(name);
  if (!p) {
    p = new Promise<string>((resolve, reject) => {
      // stdout (the script's one line) goes to our stderr, so reporters' output stays clean.
      const child = spawn("bash", [FETCH_SCRIPT, name], { stdio: ["ignore", process.stderr, process.stderr] });
      child.on("error", reject);
      child.on("exit", (code) =>
        code === 0 && existsSync(join(dir, "READY"))
          ? resolve(dir)
          : reject(new Error(`fetching ZooKeeper line ${name} from Debian's archive failed (exit ${code}); see ${join(linesCache(), "fetch.log")}`)));
    });
    p.catch(() => fetching.delete(name));
    fetching.set(name, p);
  }
  return p;
}

/** Classpath and JVM flags of a fetched line: every extracted jar, explicitly; nothing from /usr/share/java. */
export async function lineParts(line: ServerLine): Promise<{ classpath: string[]; jvmArgs: string[]; source: string }> {
  const dir = await fetchLine(line);
  const classpath = readFileSync(join(dir, "classpath"), "utf8").split("\n").filter(Boolean);
  const log4j = join(dir, "log4j.properties");
  const jvmArgs = existsSync(log4j)
    ? [`-Dlog4j.configuration=file:${log4j}`]
    : ["-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
      "-Dzookeeper.jmx.log4j.disable=true"]; // log4j 1.2 is on the path (a package dependency) but not the logger
  return { classpath, jvmArgs, source: `ZooKeeper ${fetchedVersion(line)} (Debian ${LINE_SUITES[line]}, ${dir})` };
}
