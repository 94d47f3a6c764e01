#!/usr/bin/env node
// zkts: a ZooKeeper command line for Node, Bun and Deno (the same file on all three). Parses the
// arguments, connects while the command's module loads, runs it, and exits 0 (success), 1 (a
// ZooKeeper error or another failure, on stderr) or 2 (a usage error, with the usage on stderr); 0 as
// well, quietly, when the reader of stdout went away (EPIPE).
import { VERSION, type ZooKeeper } from "../index.ts";
import { parseInvocation, type Invocation } from "./args.ts";
import { Failure, UsageError } from "./errors.ts";
import type { Run } from "./command.ts";
import { COMMANDS, report, usage, type Streams } from "./commands.ts";
import { connect, target, type Target } from "./connect.ts";
import { Output } from "./output.ts";

// The session of the running command, closed before an early exit.
let session: ZooKeeper | undefined;
let quitting = false;

/**
 * stdout was closed by its reader (`zkts ls -R / | head -1`): EPIPE, then ERR_STREAM_DESTROYED for later
 * writes. Like a Unix tool there is nothing to say about it: the session is closed and the process ends
 * quietly, with status 0 (the reader had what it wanted; a tool killed by SIGPIPE would be 141 in the
 * shell, and `set -o pipefail` pipelines would fail on every `| head`). Any other error of stdout is
 * reported in one line, status 1.
 */
function onStdoutError(e: Error & { code?: string }): void {
  if (quitting) return;
  quitting = true;
  const closed = e.code === "EPIPE" || e.code === "ERR_STREAM_DESTROYED";
  const status = closed ? 0 : 1;
  if (!closed) process.stderr.write(`zkts: stdout: ${e.message}\n`);
  setTimeout(() => process.exit(status), 2000).unref();
  void (session?.close() ?? Promise.resolve()).catch(() => {}).finally(() => process.exit(status));
}

async function run(argv: readonly string[], io: Streams): Promise<number> {
  let inv: Invocation;
  let t: Target;
  try {
    inv = parseInvocation(argv);
    if (inv.globals.help) {
      io.stdout.write(`${usage()}\n`);
      return 0;
    }
    if (inv.globals.version) {
      io.stdout.write(`zkts ${VERSION}\n`);
      return 0;
    }
    t = target(inv.globals);
    const sessionTimeout = inv.args.values["session-timeout"]; // elect, lock (checked by parseCommand)
    if (typeof sessionTimeout === "string") t.options.sessionTimeout = Number(sessionTimeout);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr.write(`zkts: ${e.message}\n${usage()}\n`);
    return 2;
  }
  const out = new Output(inv.globals.json === true, io.stdout, io.stderr);
  const command = inv.command;
  let zk: ZooKeeper;
  let mod: Record<string, Run> | undefined;
  try {
    // The command's module loads while the session is being established.
    [zk, mod] = await Promise.all([connect(t), command ? COMMANDS[command].load() : undefined]);
    session = zk;
  } catch (e) {
    return report(out, e, io.stderr, command);
  }
  const ac = new AbortController();
  const onInterrupt = (): void => ac.abort(new Failure("interrupted"));
  try {
    if (!command) {
      const { shell } = await import("./shell.ts");
      return await shell({ zk, json: out.json, io, server: t.server });
    }
    process.on("SIGINT", onInterrupt);
    return (await mod![command]({ zk, out, signal: ac.signal, connect: () => connect(t) }, inv.args)) ?? 0;
  } catch (e) {
    return report(out, e, io.stderr, command);
  } finally {
    process.off("SIGINT", onInterrupt);
    await zk.close().catch(() => {});
  }
}

// Node reports a closed pipe as an 'error' event, Bun and Deno may throw it from write(); nothing is
// written, on either stream, once the process is quitting (a command still running meets the closed session).
const stdout: Streams["stdout"] = {
  write(chunk) {
    if (quitting) return false;
    try {
      return process.stdout.write(chunk);
    } catch (e) {
      onStdoutError(e as Error);
      return false;
    }
  },
};
const stderr: Streams["stderr"] = { write: (chunk) => !quitting && process.stderr.write(chunk) };
process.stdout.on("error", onStdoutError);
process.stderr.on("error", () => {}); // a closed stderr (`2>&1 | head`): nowhere left to say anything
void run(process.argv.slice(2), { stdout, stderr })
  .catch((e: unknown) => {
    process.stderr.write(`zkts: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  })
  .then((status) => {
    process.exitCode = status;
    // Everything is closed; should a runtime keep a stray handle alive, do not hang on it.
    setTimeout(() => process.exit(status), 2000).unref();
  });
