// A test server's server.log for failure messages: its end, or the lines of a time window.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function serverLogTail(dir: string, lines = 40): string {
  try {
    return readFileSync(join(dir, "server.log"), "utf8").split("\n").slice(-lines - 1).join("\n");
  } catch {
    return "(no server.log)";
  }
}

/**
 * The lines of `dir`'s server.log stamped within [fromMs, toMs] (epoch ms), at most `max`: the server's own log
 * (its HH:mm:ss.SSS stamps, local time, as the JVM writes them) and the JVM's GC lines when it runs with
 * `-Xlog:gc:stdout:utctime`. A window past midnight or a log without stamps gives fewer lines, never wrong ones.
 */
export function serverLogBetween(dir: string, fromMs: number, toMs: number, max = 60): string[] {
  let text: string;
  try {
    text = readFileSync(join(dir, "server.log"), "utf8");
  } catch {
    return [];
  }
  const day = new Date(fromMs);
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const at = stampOf(line, day);
    if (at === null || at < fromMs || at > toMs) continue;
    if (out.length === max) return [...out, "…"];
    out.push(line);
  }
  return out;
}

function stampOf(line: string, day: Date): number | null {
  const utc = /^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\+0000\]/.exec(line);
  if (utc) return Date.parse(`${utc[1]}Z`);
  const local = /^(\d\d):(\d\d):(\d\d)\.(\d{3}) /.exec(line);
  if (!local) return null;
  const d = new Date(day);
  d.setHours(Number(local[1]), Number(local[2]), Number(local[3]), Number(local[4]));
  return d.getTime();
}
