// Runs the zkts command (src/cli/main.ts) as a child process under the runtime running the test
// (Bun and Deno run the source; under Node it is bundled once per test process with esbuild, tsx's
// own compiler, since tsx would recompile it on every one of the many spawns), collecting stdout as bytes, stderr as text and the exit status; or
// under a pseudo-terminal (pty-drive.py, python3's pty module) for the interactive shell.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_DIR, runtimeCommand, type Runtime } from "./line-process.ts";

export const RUNTIME: Runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
const MAIN = `${REPO_DIR}src/cli/main.ts`;

let bundled: Promise<string> | undefined;

/** The command that runs zkts here: the source under Bun and Deno, a bundle of it under Node. */
async function command(): Promise<[string, string[]]> {
  if (RUNTIME !== "node") return runtimeCommand(RUNTIME, MAIN);
  bundled ??= (async () => {
    const { build } = await import("esbuild");
    const dir = mkdtempSync(join(tmpdir(), "zkts-cli-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    // Below a copy of package.json, as dist/esm/cli/main.js is below the package's: zkts --version reads it.
    copyFileSync(`${REPO_DIR}package.json`, join(dir, "package.json"));
    const outfile = join(dir, "cli", "zkts.mjs");
    await build({ entryPoints: [MAIN], bundle: true, platform: "node", format: "esm", target: "node20", outfile, logLevel: "warning" });
    return outfile;
  })();
  return [process.execPath, [await bundled]];
}

export interface CliResult {
  code: number | null;
  signal: string | null;
  stdout: Buffer;
  out: string;
  err: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (default: closed at once). */
  input?: string;
  /** Kill (SIGKILL) after this many ms: a hang fails the test instead of stalling it. */
  killAfterMs?: number;
}

export interface CliProcess {
  readonly child: ChildProcess;
  /** stdout so far. */
  out(): string;
  /** Resolves once stdout holds `text`; rejects if the process exits first. */
  waitForOutput(text: string): Promise<void>;
  /** stderr so far. */
  err(): string;
  /** Resolves once stderr holds `text` (a status line: `zkts watch: watching PATH`); rejects if the process exits first. */
  waitForErr(text: string): Promise<void>;
  readonly done: Promise<CliResult>;
}

export async function startCli(args: readonly string[], o: CliOptions = {}): Promise<CliProcess> {
  const [cmd, base] = await command();
  const child = spawn(cmd, [...base, ...args], { cwd: REPO_DIR, env: { ...process.env, ...o.env }, stdio: ["pipe", "pipe", "pipe"] });
  const chunks: Buffer[] = [];
  let err = "";
  type Waiter = { text: string; on: "out" | "err"; resolve(): void; reject(e: Error): void };
  const waiters: Waiter[] = [];
  let exited: string | null = null;
  const text = (): string => Buffer.concat(chunks).toString("utf8");
  const holds = (w: Waiter): boolean => (w.on === "out" ? text() : err).includes(w.text);
  const check = (): void => {
    for (const w of waiters.splice(0)) (holds(w) ? w.resolve : () => waiters.push(w))();
  };
  child.stdout!.on("data", (c: Buffer) => {
    chunks.push(c);
    check();
  });
  child.stderr!.on("data", (c: Buffer) => {
    err += c.toString("utf8");
    check();
  });
  child.stdin!.on("error", () => {});
  if (o.input !== undefined) child.stdin!.write(o.input);
  child.stdin!.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), o.killAfterMs ?? 30_000);
  const done = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      exited = String(code ?? signal);
      for (const w of waiters.splice(0)) w.reject(new Error(`zkts exited (${exited}) before printing ${JSON.stringify(w.text)} on std${w.on}; stderr: ${err}`));
      const stdout = Buffer.concat(chunks);
      resolve({ code, signal, stdout, out: stdout.toString("utf8"), err });
    });
  });
  const wait = (t: string, on: "out" | "err"): Promise<void> =>
    new Promise((resolve, reject) => {
      const w: Waiter = { text: t, on, resolve, reject };
      if (holds(w)) resolve();
      else if (exited !== null) reject(new Error(`zkts exited (${exited}) before printing ${JSON.stringify(t)} on std${on}; stderr: ${err}`));
      else waiters.push(w);
    });
  return { child, out: text, err: () => err, done, waitForOutput: (t) => wait(t, "out"), waitForErr: (t) => wait(t, "err") };
}

/** Kills (SIGKILL) every zkts process of `clis` still running and waits until each has exited: a file's teardown. */
export async function killClis(clis: Iterable<CliProcess>): Promise<void> {
  const all = [...clis];
  for (const c of all) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
  await Promise.all(all.map((c) => c.done));
}

/** The status lines a `zkts --json` process (elect, lock) has written on stderr so far, whole lines only, parsed. */
export function statusEvents(cli: CliProcess): Record<string, unknown>[] {
  return cli.err().split("\n").slice(0, -1).filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
}

export async function zkts(args: readonly string[], o: CliOptions = {}): Promise<CliResult> {
  return (await startCli(args, o)).done;
}

/** The command line under a pseudo-terminal: pty-drive.py relays our stdin to it and its screen to our stdout. */
export interface PtyProcess extends Omit<CliProcess, "err" | "waitForErr"> { // its stderr is on the screen
  send(keys: string): void;
  /** Resolves once the screen holds `text` after position `from` (a test reads the screen as it grows). */
  waitForScreen(text: string, from?: number, filter?: (s: string) => string): Promise<void>;
}

export async function startCliPty(args: readonly string[], env: Record<string, string | undefined> = {}, killAfterMs = 50_000): Promise<PtyProcess> {
  const [cmd, base] = await command();
  const child = spawn("python3", [`${REPO_DIR}test/support/processes/pty-drive.py`, cmd, ...base, ...args], {
    cwd: REPO_DIR, env: { ...process.env, ...env, TERM: "xterm" }, stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  let err = "";
  const waiters: { text: string; resolve(): void; reject(e: Error): void }[] = [];
  child.stdout!.on("data", (c: Buffer) => {
    screen += c.toString("utf8");
    for (const w of waiters.splice(0)) (screen.includes(w.text) ? w.resolve : () => waiters.push(w))();
  });
  child.stderr!.on("data", (c: Buffer) => (err += c.toString("utf8")));
  child.stdin!.on("error", () => {});
  const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
  const done = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      for (const w of waiters.splice(0)) w.reject(new Error(`shell exited (${code ?? signal}) before showing ${JSON.stringify(w.text)}; screen: ${JSON.stringify(screen)}; stderr: ${err}`));
      resolve({ code, signal, stdout: Buffer.from(screen), out: screen, err });
    });
  });
  return {
    child,
    out: () => screen,
    done,
    send: (keys) => void child.stdin!.write(keys),
    waitForOutput: (t) => (screen.includes(t) ? Promise.resolve() : new Promise((resolve, reject) => waiters.push({ text: t, resolve, reject }))),
    waitForScreen: (text, from = 0, filter = (s) => s) => {
      if (filter(screen).slice(from).includes(text)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const onData = (): void => {
          if (!filter(screen).slice(from).includes(text)) return;
          child.stdout!.off("data", onData);
          child.off("close", onClose);
          resolve();
        };
        const onClose = (): void => reject(new Error(`shell exited before showing ${JSON.stringify(text)}; screen: ${JSON.stringify(filter(screen))}; stderr: ${err}`));
        child.stdout!.on("data", onData);
        child.once("close", onClose);
      });
    },
  };
}
