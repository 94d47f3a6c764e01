// From the global options to ZooKeeper.connect(): server list, connect timeout, TLS files, SASL
// DIGEST-MD5 (the password from a file or $ZK_SASL_PASSWORD, never from the command line), digest auth.
import { readFileSync } from "node:fs";
import type { ConnectOptions } from "../index.ts";
import { ZooKeeper } from "../index.ts";
import { intOption } from "./args.ts";
import { UsageError } from "./errors.ts";
import type { Parsed } from "./commands.ts";

export interface Target {
  server: string;
  options: ConnectOptions;
}

const str = (g: Parsed["values"], k: string): string | undefined => (typeof g[k] === "string" ? (g[k] as string) : undefined);

function readOption(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`${what}: cannot read ${file}: ${(e as Error).message}`);
  }
}

export function target(globals: Parsed["values"]): Target {
  const server = str(globals, "server") ?? (process.env.ZK_CONNECT || "127.0.0.1:2181");
  const timeout = intOption({ values: globals, positionals: [] }, "timeout", "--timeout", 1) ?? 10_000;
  const options: ConnectOptions = { connectTimeout: timeout, sessionTimeout: 10_000 };
  const ca = str(globals, "tls-ca");
  const cert = str(globals, "tls-cert");
  const key = str(globals, "tls-key");
  const servername = str(globals, "tls-servername");
  if ((cert === undefined) !== (key === undefined)) throw new UsageError("--tls-cert and --tls-key go together");
  if (ca !== undefined || cert !== undefined || servername !== undefined) {
    options.tls = {
      ...(ca !== undefined ? { ca: readOption(ca, "--tls-ca") } : {}),
      ...(cert !== undefined ? { cert: readOption(cert, "--tls-cert"), key: readOption(key!, "--tls-key") } : {}),
      ...(servername !== undefined ? { servername } : {}),
    };
  }
  if (globals["sasl-password"] !== undefined) throw new UsageError("--sasl-password is not accepted (it would show in ps): use --sasl-password-file FILE or $ZK_SASL_PASSWORD");
  const user = str(globals, "sasl-user");
  const pwFile = str(globals, "sasl-password-file");
  if (user !== undefined) {
    const password = pwFile !== undefined ? readOption(pwFile, "--sasl-password-file").replace(/\r?\n$/, "") : process.env.ZK_SASL_PASSWORD;
    if (password === undefined) throw new UsageError("--sasl-user needs --sasl-password-file FILE or $ZK_SASL_PASSWORD");
    options.sasl = { mechanism: "DIGEST-MD5", username: user, password };
  } else if (pwFile !== undefined) throw new UsageError("--sasl-password-file needs --sasl-user");
  const auths = (globals.auth as string[] | undefined) ?? [];
  options.auth = auths.map((a) => {
    const i = a.indexOf(":");
    if (i <= 0) throw new UsageError(`--auth ${JSON.stringify(a)}: expected scheme:credentials, e.g. digest:user:pass`);
    return { scheme: a.slice(0, i), auth: a.slice(i + 1) };
  });
  return { server, options };
}

export function connect(t: Target): Promise<ZooKeeper> {
  return ZooKeeper.connect(t.server, t.options);
}
