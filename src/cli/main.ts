#!/usr/bin/env node
// zkts: a ZooKeeper command line for Node, Bun and Deno (the same file on all three). Parses the
// arguments, connects while the command's module loads, runs it, and exits 0 (success), 1 (a
// ZooKeeper error or another failure, on stderr) or 2 (a usage error, with the usage on stderr).
import type { ZooKeeper } from "../index.ts";
import { parseInvocation, type Invocation } from "./args.ts";
import { Failure, UsageError } from "./errors.ts";
import { COMMANDS, report, usage, type Run, type Streams } from "./commands.ts";
import { connect, target, type Target } from "./connect.ts";
import { Output } from "./output.ts";

async function run(argv: readonly string[], io: Streams): Promise<number> {
  let inv: Invocation;
  let t: Target;
  try {
    inv = parseInvocation(argv);
    if (inv.globals.help) {
      io.stdout.write(`${usage()}\n`);
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

void run(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr })
  .catch((e: unknown) => {
    process.stderr.write(`zkts: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 1;
  })
  .then((status) => {
    process.exitCode = status;
    // Everything is closed; should a runtime keep a stray handle alive, do not hang on it.
    setTimeout(() => process.exit(status), 2000).unref();
  });
