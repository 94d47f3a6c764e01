// Argument parsing (node:util parseArgs): the global options before the command, then the command's
// own options (globals may follow the command too). Any mistake is a UsageError: exit status 2.
import { parseArgs } from "node:util";
import { type OptionSpec, type Parsed, intOption } from "./command.ts";
import { COMMANDS } from "./commands.ts";
import { UsageError } from "./errors.ts";

const GLOBAL_OPTIONS: OptionSpec = {
  server: { type: "string" },
  timeout: { type: "string" },
  json: { type: "boolean" },
  "tls-ca": { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "tls-servername": { type: "string" },
  "sasl-user": { type: "string" },
  "sasl-password-file": { type: "string" },
  "sasl-password": { type: "string" }, // refused with a clear message: never on a command line
  "sasl-mechanism": { type: "string" },
  keytab: { type: "string" },
  principal: { type: "string" },
  "krb5-config": { type: "string" },
  "sasl-service-name": { type: "string" },
  "sasl-service-host": { type: "string" },
  auth: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
};

export interface Invocation {
  globals: Parsed["values"];
  /** undefined: the shell. */
  command?: string;
  args: Parsed;
}

function parse(args: string[], options: OptionSpec, positionals: boolean): Parsed {
  try {
    const r = parseArgs({ args, options, allowPositionals: positionals, strict: true });
    return { values: r.values as Parsed["values"], positionals: r.positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Splits argv at the command: global options (and their values) come first. */
export function parseInvocation(argv: readonly string[]): Invocation {
  let i = 0;
  while (i < argv.length && argv[i].startsWith("-") && argv[i] !== "--") {
    const name = argv[i].startsWith("--") ? argv[i].slice(2).split("=")[0] : undefined;
    const spec = name !== undefined ? GLOBAL_OPTIONS[name] : Object.values(GLOBAL_OPTIONS).find((o) => `-${o.short}` === argv[i]);
    if (!spec) throw new UsageError(`unknown global option ${argv[i]}`);
    i += spec.type === "string" && !argv[i].includes("=") ? 2 : 1;
  }
  if (i > argv.length) throw new UsageError(`option ${argv[argv.length - 1]} needs a value`);
  const globals = parse(argv.slice(0, i), GLOBAL_OPTIONS, false).values;
  const command = argv[i];
  if (command === undefined || command === "shell") return { globals, args: parse(argv.slice(i + 1), GLOBAL_OPTIONS, false) };
  const args = parseCommand(command, argv.slice(i + 1), GLOBAL_OPTIONS);
  for (const [k, v] of Object.entries(args.values)) if (k in GLOBAL_OPTIONS && globals[k] === undefined) globals[k] = v;
  return { globals, command, args };
}

/** A command's arguments, checked against its spec (`extra`: options also allowed after it). */
export function parseCommand(command: string, argv: readonly string[], extra: OptionSpec = {}): Parsed {
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  const end = spec.rest ? argv.indexOf("--") : -1;
  const args = parse(end < 0 ? [...argv] : argv.slice(0, end), { ...extra, ...spec.options }, true);
  if (end >= 0) args.rest = argv.slice(end + 1);
  if (spec.rest && end < 0) throw new UsageError(`${command}: no -- before the COMMAND`);
  if (spec.rest && (args.rest === undefined || args.rest.length === 0 || args.rest[0] === "")) throw new UsageError(`${command}: no COMMAND after --`);
  const n = args.positionals.length;
  if (n < spec.min || n > spec.max) throw new UsageError(`${command}: expected ${spec.usage}`);
  for (const [name, [what, min]] of Object.entries(spec.ints ?? {})) intOption(args, name, what, min);
  spec.check?.(args);
  return args;
}

/** Splits a shell line into words: whitespace-separated, with '…' and "…" quoting and \ escapes. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let cur = "";
  let inWord = false;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < line.length) {
      cur += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(cur);
      cur = "";
      inWord = false;
    } else {
      cur += ch;
      inWord = true;
    }
  }
  if (quote) throw new UsageError(`unterminated ${quote}`);
  if (inWord) words.push(cur);
  return words;
}
