// The interactive shell (zkts with no command, or `zkts shell`): the same commands on one session,
// with history (kept in $ZKTS_HISTORY, default ~/.zkts_history) and tab completion of command names
// and znode paths (node:readline). Ctrl-C ends a running command (watch) or clears the line; Ctrl-D,
// `quit` or `exit` leave. Reading a script from a pipe, it exits with the worst status it saw. elect and lock
// are refused (status 2): they run only as commands of their own.
import { appendFileSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { createInterface, type Interface } from "node:readline";
import type { ZooKeeper } from "../index.ts";
import { parseCommand, splitWords } from "./args.ts";
import { Failure } from "./errors.ts";
import { COMMANDS, report, usage, type Streams } from "./commands.ts";
import { Output } from "./output.ts";

interface ShellOptions {
  zk: ZooKeeper;
  json: boolean;
  io: Streams;
  server: string;
  input?: NodeJS.ReadableStream;
}

const BUILTINS = ["help", "quit", "exit"];
const HISTORY_SIZE = 1000;

function historyFile(): string {
  return process.env.ZKTS_HISTORY || join(homedir(), ".zkts_history");
}

function loadHistory(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).slice(-HISTORY_SIZE).reverse(); // readline: newest first
  } catch {
    return [];
  }
}

/** Tab completion: command names for the first word, children of the typed parent for a /path. */
function completer(zk: ZooKeeper): (line: string, cb: (err: null, result: [string[], string]) => void) => void {
  return (line, cb) => {
    const words = line.split(/\s+/);
    const last = words[words.length - 1];
    if (words.length === 1) {
      const names = [...Object.keys(COMMANDS), ...BUILTINS].filter((n) => n.startsWith(last)).sort();
      return cb(null, [names.map((n) => (names.length === 1 ? `${n} ` : n)), last]);
    }
    if (!last.startsWith("/")) return cb(null, [[], last]);
    const cut = last.lastIndexOf("/");
    const parent = cut === 0 ? "/" : last.slice(0, cut);
    const prefix = last.slice(cut + 1);
    zk.getChildren(parent).then(
      (kids) => cb(null, [kids.filter((k) => k.startsWith(prefix)).sort().map((k) => (parent === "/" ? `/${k}` : `${parent}/${k}`)), last]),
      () => cb(null, [[], last]),
    );
  };
}

export async function shell(o: ShellOptions): Promise<number> {
  const input = o.input ?? process.stdin;
  const interactive = (input as { isTTY?: boolean }).isTTY === true;
  const file = historyFile();
  let lastByte = 10;
  const stdout = { write: (c: string | Uint8Array) => (c.length > 0 && (lastByte = typeof c === "string" ? c.charCodeAt(c.length - 1) : c[c.length - 1]), o.io.stdout.write(c)) };
  const rl: Interface = createInterface({
    input,
    output: interactive ? process.stdout : undefined,
    terminal: interactive,
    completer: completer(o.zk),
    history: interactive ? loadHistory(file) : [],
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
    prompt: "zkts> ",
  } as Parameters<typeof createInterface>[0]);
  let running: AbortController | null = null;
  let worst = 0;
  let closed = false;
  rl.on("SIGINT", () => {
    if (running) return running.abort(new Failure("interrupted"));
    o.io.stdout.write("^C\n");
    rl.write(null, { ctrl: true, name: "u" });
    rl.prompt();
  });
  rl.on("close", () => (closed = true));
  if (interactive) o.io.stdout.write(`connected to ${o.server} (session 0x${o.zk.sessionId.toString(16)}); help lists the commands\n`);
  const prompt = (): void => {
    if (interactive && !closed) rl.prompt();
  };
  prompt();
  for await (const line of rl) {
    const status = await runLine(line);
    if (status === "quit") break;
    worst = Math.max(worst, status);
    if (interactive && lastByte !== 10) stdout.write("\n"); // get's raw data without a newline
    prompt();
  }
  rl.close();
  return interactive ? 0 : worst;

  async function runLine(line: string): Promise<number | "quit"> {
    const text = line.trim();
    if (text === "" || text.startsWith("#")) return 0;
    if (interactive) {
      try {
        appendFileSync(file, `${text}\n`, { mode: 0o600 });
      } catch {
        // history is a convenience: an unwritable file costs nothing else
      }
    }
    let words: string[];
    try {
      words = splitWords(text);
    } catch (e) {
      return report(new Output(o.json, stdout, o.io.stderr), e, o.io.stderr);
    }
    const [name, ...rest] = words;
    if (name === "quit" || name === "exit") return "quit";
    if (name === "help") {
      stdout.write(`${usage()}\n  help, quit, exit, Ctrl-D\n`);
      return 0;
    }
    let out = new Output(o.json, stdout, o.io.stderr);
    if (!COMMANDS[name]) {
      o.io.stderr.write(`zkts: unknown command ${JSON.stringify(name)} (help lists the commands)\n`);
      return 2;
    }
    if (COMMANDS[name].rest) {
      // elect and lock own their session (a lost one ends their child, expiry starts a new one): not this shell's
      o.io.stderr.write(`zkts: ${name} runs only as a command of its own (zkts ${name} ...), not in the shell\n`);
      return 2;
    }
    running = new AbortController();
    try {
      const args = parseCommand(name, rest, { json: { type: "boolean" } });
      if (args.values.json === true) out = new Output(true, stdout, o.io.stderr);
      const run = (await COMMANDS[name].load())[name];
      return (await run({ zk: o.zk, out, signal: running.signal }, args)) ?? 0;
    } catch (e) {
      return report(out, e, o.io.stderr, COMMANDS[name] ? name : undefined);
    } finally {
      running = null;
    }
  }
}
