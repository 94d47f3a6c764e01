// The command table of zkts: names (zkCli's where it has one), usage lines, option specs, and the
// module that runs each, imported only when the command is used (start-up stays small).
import { UsageError } from "./errors.ts";
import type { Output } from "./output.ts";
import { docUrl } from "./package.ts";
import type { OptionSpec, Parsed, Run } from "./command.ts";

interface CommandSpec {
  usage: string;
  summary: string;
  options: OptionSpec;
  /** Positional arguments: at least min, at most max. */
  min: number;
  max: number;
  /** Integer options, checked before connecting: name → [what, minimum]. */
  ints?: Record<string, [string, number]>;
  /** `-- COMMAND [ARG...]` follows the positionals (Parsed.rest). */
  rest?: boolean;
  /** Further checks of the options, before connecting (options that exclude each other, choices): throws UsageError. */
  check?: (args: Parsed) => void;
  load: () => Promise<Record<string, Run>>;
}

const nodes = (): Promise<Record<string, Run>> => import("./nodes.ts").then((m) => m.commands);
const access = (): Promise<Record<string, Run>> => import("./access.ts").then((m) => m.commands);
const watching = (): Promise<Record<string, Run>> => import("./watch.ts").then((m) => m.commands);
const recipes = (): Promise<Record<string, Run>> => import("./recipes.ts").then((m) => m.commands);
const supervise = (): Promise<Record<string, Run>> => import("./supervise.ts").then((m) => m.commands);

const s = (short?: string): { type: "string"; short?: string } => (short ? { type: "string", short } : { type: "string" });
const b = (short?: string): { type: "boolean"; short?: string } => (short ? { type: "boolean", short } : { type: "boolean" });

/** `--naming`, when given, is one of the recipes' layouts. */
function checkNaming(command: string): (a: Parsed) => void {
  return (a) => {
    const n = a.values.naming;
    if (n !== undefined && n !== "curator" && n !== "kazoo") throw new UsageError(`${command} --naming must be curator or kazoo, got ${JSON.stringify(n)}`);
  };
}

export const COMMANDS: Record<string, CommandSpec> = {
  ls: { usage: "ls [-R] PATH", summary: "children, sorted (-R: every descendant's path)", options: { R: b("R") }, min: 1, max: 1, load: nodes },
  get: { usage: "get [-s] PATH", summary: "the data, raw (-s: the stat on stderr)", options: { s: b("s") }, min: 1, max: 1, load: nodes },
  stat: { usage: "stat PATH", summary: "the node's Stat", options: {}, min: 1, max: 1, load: nodes },
  create: {
    usage: "create [-e] [-s] [-c] [-t TTL] [-p] PATH [DATA]", summary: "create a node (ephemeral, sequential, container, TTL ms, parents)",
    options: { e: b("e"), s: b("s"), c: b("c"), t: s("t"), p: b("p") }, min: 1, max: 2, ints: { t: ["create -t TTL", 1] }, load: nodes,
  },
  set: { usage: "set [-v VERSION] PATH DATA", summary: "set the data", options: { v: s("v") }, min: 2, max: 2, ints: { v: ["set -v VERSION", 0] }, load: nodes },
  delete: { usage: "delete [-v VERSION] [-r] PATH", summary: "delete a node (-r: the whole subtree)", options: { v: s("v"), r: b("r") }, min: 1, max: 1, ints: { v: ["delete -v VERSION", 0] }, load: nodes },
  sync: { usage: "sync PATH", summary: "sync the server with the leader", options: {}, min: 1, max: 1, load: nodes },
  count: { usage: "count PATH", summary: "number of descendants (getAllChildrenNumber)", options: {}, min: 1, max: 1, load: nodes },
  getacl: { usage: "getacl PATH", summary: "the ACL, scheme:id:perms (cdrwa)", options: {}, min: 1, max: 1, load: access },
  setacl: { usage: "setacl [-v VERSION] PATH ACL[,ACL...]", summary: "set the ACL", options: { v: s("v") }, min: 2, max: 2, ints: { v: ["setacl -v VERSION", 0] }, load: access },
  whoami: { usage: "whoami", summary: "this session's identities", options: {}, min: 0, max: 0, load: access },
  ephemerals: { usage: "ephemerals [PREFIX]", summary: "this session's ephemeral nodes", options: {}, min: 0, max: 1, load: access },
  watch: {
    usage: "watch [-r] [--count N] PATH", summary: "print events until N of them or Ctrl-C (-r: recursive); once the watch is set, \"zkts watch: watching PATH\" on stderr",
    options: { r: b("r"), count: s() }, min: 1, max: 1, ints: { count: ["watch --count N", 1] }, load: watching,
  },
  leader: { usage: "leader [--all] PATH", summary: "the leader of a LeaderElection / LeaderLatch (--all: then the candidates)", options: { all: b() }, min: 1, max: 1, load: recipes },
  members: { usage: "members PATH", summary: "GroupMember ids", options: {}, min: 1, max: 1, load: recipes },
  semaphore: {
    usage: "semaphore [--naming curator|kazoo] [--permits N] PATH",
    summary: "a Semaphore's leases and waiters, and its layout (Curator's or kazoo's; told from the children; --permits: the number Curator does not store)",
    options: { naming: s(), permits: s() }, min: 1, max: 1, ints: { permits: ["semaphore --permits N", 1] }, check: checkNaming("semaphore"), load: recipes,
  },
  partition: {
    usage: "partition [--set ITEM[,ITEM...]] PATH", summary: "a SetPartitioner's split: each member's items (--set: also the items nobody holds)",
    options: { set: s() }, min: 1, max: 1, load: recipes,
    check: (a) => {
      if (typeof a.values.set === "string" && a.values.set.includes("/")) throw new UsageError(`partition --set: items are znode names (no "/"), got ${JSON.stringify(a.values.set)}`);
    },
  },
  elect: {
    usage: "elect [--id ID] [--grace MS] [--session-timeout MS] [--once] PATH -- COMMAND [ARG...]",
    summary: "run COMMAND while leading the election at PATH; stop it when leadership is lost or in doubt",
    options: { id: s(), grace: s(), "session-timeout": s(), once: b() }, min: 1, max: 1, rest: true,
    ints: { grace: ["elect --grace MS", 0], "session-timeout": ["elect --session-timeout MS", 1] }, load: supervise,
  },
  lock: {
    usage: "lock [--shared | --exclusive | --semaphore N] [--naming curator|kazoo] [--grace MS] [--session-timeout MS] PATH -- COMMAND [ARG...]",
    summary: "run COMMAND while holding the Lock at PATH (--shared / --exclusive: the read / write side of a ReadWriteLock; --semaphore N: a lease of a Semaphore of N permits), then release it (exit 3 if lost)",
    options: { shared: b(), exclusive: b(), semaphore: s(), naming: s(), grace: s(), "session-timeout": s() }, min: 1, max: 1, rest: true,
    ints: { semaphore: ["lock --semaphore N", 1], grace: ["lock --grace MS", 0], "session-timeout": ["lock --session-timeout MS", 1] },
    check: (a) => {
      const modes = ["shared", "exclusive", "semaphore"].filter((m) => a.values[m] !== undefined);
      if (modes.length > 1) throw new UsageError(`lock: --${modes[0]} and --${modes[1]} exclude each other`);
      checkNaming("lock")(a);
    },
    load: supervise,
  },
};

/** The usage text: global options, then every command. */
export function usage(): string {
  // Usages longer than WIDE (lock's) have their summary on a line of its own, below.
  const WIDE = 90;
  const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.length).filter((n) => n <= WIDE));
  return [
    "usage: zkts [GLOBAL OPTIONS] [COMMAND [ARGS...]]      (no command, or `shell`: interactive shell)",
    "",
    "global options:",
    "  --server HOST:PORT[,HOST:PORT...][/chroot]   default $ZK_CONNECT, then 127.0.0.1:2181",
    "  --timeout MS                                 connect timeout (default 10000)",
    "  --json                                       one JSON value per result",
    "  --tls-ca FILE --tls-cert FILE --tls-key FILE --tls-servername NAME",
    "  --sasl-user NAME [--sasl-password-file FILE] SASL DIGEST-MD5 (else $ZK_SASL_PASSWORD)",
    "  --sasl-mechanism GSSAPI [--keytab FILE] [--principal NAME]",
    "                                               SASL GSSAPI (Kerberos): a keytab, else the ccache of $KRB5CCNAME (kinit)",
    "  --krb5-config FILE                           GSSAPI: krb5.conf (default $KRB5_CONFIG, then /etc/krb5.conf)",
    "  --sasl-service-name NAME --sasl-service-host HOST",
    "                                               GSSAPI: the server's principal NAME/HOST (default zookeeper/the server's host)",
    "  --auth digest:USER:PASS                      digest credentials (repeatable)",
    "  -h, --help                                   this text; -V, --version: zkts's version",
    "",
    "commands:",
    ...Object.values(COMMANDS).map((c) => (c.usage.length > WIDE ? `  ${c.usage}\n  ${"".padEnd(width)}  ${c.summary}` : `  ${c.usage.padEnd(width)}  ${c.summary}`)),
    "",
    "exit status: 0 success (also when the reader of stdout went away: | head), 1 a ZooKeeper error, 2 a usage error; elect and lock: COMMAND's status, 3 when leadership (the lock, the lease) was lost",
    "",
    `the guide: ${docUrl("cli.md")}`,
    `elect and lock (a supervisor): ${docUrl("supervisor.md")}`,
  ].join("\n");
}

export interface Streams {
  stdout: { write(chunk: string | Uint8Array): unknown };
  stderr: { write(chunk: string | Uint8Array): unknown };
}

/** The exit status for an error thrown by a command (reported on stderr first). */
export function report(out: Output, e: unknown, stderr: Streams["stderr"], command?: string): number {
  if (e instanceof UsageError) {
    stderr.write(`zkts: ${e.message}\n`);
    stderr.write(command && COMMANDS[command] ? `usage: ${COMMANDS[command].usage}\n` : `${usage()}\n`);
    return 2;
  }
  out.error(e);
  return 1;
}
