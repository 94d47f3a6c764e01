// Small helpers shared by the hostile-network tests (test/integration/hostile-*) and the load tests.
import process from "node:process";
import type { Logger } from "../../src/index.ts";

export { hold, until } from "../support/wait.ts";

/** A logger that keeps every line, so tests can assert on the reasons the client gives. */
export interface CapturingLogger extends Logger {
  lines: string[];
}

export function capturingLogger(): CapturingLogger {
  const lines: string[] = [];
  const put = (level: string) => (message: string, ...args: unknown[]) => {
    lines.push(`${level} ${message}${args.length ? ` ${args.map(String).join(" ")}` : ""}`);
  };
  return { lines, debug: put("debug"), info: put("info"), warn: put("warn"), error: put("error") };
}

/** Records unhandled rejections from the moment it is called until stop(). */
export function trackUnhandled(): { reasons: unknown[]; stop(): void } {
  const reasons: unknown[] = [];
  const onRejection = (r: unknown): void => {
    reasons.push(r);
  };
  process.on("unhandledRejection", onRejection);
  return { reasons, stop: () => process.off("unhandledRejection", onRejection) };
}

/** Settles a promise into a value or its error, with how long it took. */
export async function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T; ms: number } | { ok: false; error: unknown; ms: number }> {
  const t0 = performance.now();
  try {
    const value = await p;
    return { ok: true, value, ms: performance.now() - t0 };
  } catch (error) {
    return { ok: false, error, ms: performance.now() - t0 };
  }
}

/** Resolves with the promise's outcome or "pending" when it has not settled within ms. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | "pending"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const pending = new Promise<"pending">((r) => (timer = setTimeout(() => r("pending"), ms)));
  try {
    return await Promise.race([p, pending]);
  } finally {
    clearTimeout(timer);
  }
}

const MB = 1024 * 1024;

/** RSS and heap now, in MB, printed with a label and returned for the report. */
export function memory(label: string): { rssMB: number; heapMB: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const m = process.memoryUsage();
  const out = { rssMB: Math.round((m.rss / MB) * 10) / 10, heapMB: Math.round((m.heapUsed / MB) * 10) / 10 };
  process.stdout.write(`[memory] ${label}: rss ${out.rssMB} MB, heapUsed ${out.heapMB} MB\n`);
  return out;
}

/** How to run a TypeScript file in a child process under the runtime running this test. */
export function childCommand(file: string, args: string[]): [string, string[]] {
  if ("Bun" in globalThis) return [process.execPath, [file, ...args]];
  if ("Deno" in globalThis) return [process.execPath, ["run", "-A", file, ...args]];
  return [process.execPath, ["--import", "tsx", file, ...args]];
}
