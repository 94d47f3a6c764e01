// The end of a test server's server.log, for failure messages.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function serverLogTail(dir: string, lines = 40): string {
  try {
    return readFileSync(join(dir, "server.log"), "utf8").split("\n").slice(-lines - 1).join("\n");
  } catch {
    return "(no server.log)";
  }
}
