// Runs one runner process and returns its result line. For the watch storm the runner first reports
// {"armed": dir, count}; then this side says "go" on its stdin and fires the change (onArmed).
import { spawn } from "node:child_process";
import type { Result } from "../runners/harness.ts";

/** What a runner prints (bench/runners/harness.ts `Result`); the Java runner prints the same fields. */
export type RunnerResult = Omit<Result, "params">;

export function runChild(
  cmd: string,
  args: string[],
  timeoutMs: number,
  onArmed?: (armed: { armed: string; count: number }, go: () => void) => Promise<void>,
): Promise<RunnerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let result: RunnerResult | undefined;
    let triggerError: Error | undefined;
    const timer = setTimeout(() => {
      err += `\n(timed out after ${timeoutMs} ms)`;
      child.kill("SIGKILL");
    }, timeoutMs);
    const onLine = (line: string): void => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        err += line + "\n";
        return;
      }
      if (typeof msg.armed === "string") {
        if (!onArmed) return;
        onArmed(msg as { armed: string; count: number }, () => child.stdin.write("go\n")).catch((e: Error) => {
          triggerError = e;
          child.kill("SIGKILL");
        });
      } else result = msg as unknown as RunnerResult;
    };
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      out += chunk;
      let i;
      while ((i = out.indexOf("\n")) >= 0) {
        onLine(out.slice(0, i));
        out = out.slice(i + 1);
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (c: string) => (err += c));
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (triggerError) reject(triggerError);
      else if (code === 0 && result) resolve(result);
      else reject(new Error(`${cmd} ${args.slice(-3).join(" ")} exited ${code}: ${err.trim().slice(-1500)}`));
    });
  });
}
