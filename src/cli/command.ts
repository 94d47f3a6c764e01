// What a command module of zkts is given and returns, and the option reader they share: on its own so that
// the command modules (loaded on demand by commands.ts) import neither the command table nor the parser.
import type { ZooKeeper } from "../index.ts";
import { UsageError } from "./errors.ts";
import type { Output } from "./output.ts";

export type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  /** What follows `--` (commands with `rest`: the program elect and lock run); undefined without `--`. */
  rest?: string[];
}

export interface Context {
  zk: ZooKeeper;
  out: Output;
  /** Aborts on Ctrl-C (watch ends on it). */
  signal: AbortSignal;
  /** A new session with the same options (elect after an expiry); absent in the shell. */
  connect?: () => Promise<ZooKeeper>;
}

/** Runs a command; resolves to its exit status (0 when nothing is returned). */
export type Run = (ctx: Context, args: Parsed) => Promise<number | void>;

/** A non-negative integer option (versions, counts, TTLs), or undefined when absent. */
export function intOption(args: Parsed, name: string, what: string, min = 0): number | undefined {
  const v = args.values[name];
  if (v === undefined) return undefined;
  if (typeof v !== "string" || !/^-?\d+$/.test(v) || Number(v) < min || !Number.isSafeInteger(Number(v))) {
    throw new UsageError(`${what} must be an integer${min === 0 ? " ≥ 0" : ` ≥ ${min}`}, got ${JSON.stringify(v)}`);
  }
  return Number(v);
}
