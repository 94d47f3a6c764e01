// From the global options to ZooKeeper.connect(): server list, connect timeout, TLS files (checked here, then
// given as file options, read again for each connection: a long-running `zkts elect`/`lock`/`watch`
// picks up a rotated certificate or CA at its next reconnect), SASL
// DIGEST-MD5 (the password from a file or $ZK_SASL_PASSWORD, never from the command line), SASL GSSAPI
// (Kerberos: a keytab, else the ccache of $KRB5CCNAME), digest auth.
import { readFileSync } from "node:fs";
import type { ConnectOptions, SaslGssapiOptions } from "../index.ts";
import { ZooKeeper } from "../index.ts";
import { UsageError } from "./errors.ts";
import { type Parsed, intOption } from "./command.ts";

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
    // Read once now, so that a missing or unreadable file is a usage error at the start.
    if (ca !== undefined) readOption(ca, "--tls-ca");
    if (cert !== undefined) {
      readOption(cert, "--tls-cert");
      readOption(key!, "--tls-key");
    }
    options.tls = {
      ...(ca !== undefined ? { caFile: ca } : {}),
      ...(cert !== undefined ? { certFile: cert, keyFile: key! } : {}),
      ...(servername !== undefined ? { servername } : {}),
    };
  }
  if (globals["sasl-password"] !== undefined) throw new UsageError("--sasl-password is not accepted (it would show in ps): use --sasl-password-file FILE or $ZK_SASL_PASSWORD");
  const mechanism = str(globals, "sasl-mechanism");
  if (mechanism !== undefined && mechanism !== "DIGEST-MD5" && mechanism !== "GSSAPI") {
    throw new UsageError(`--sasl-mechanism must be DIGEST-MD5 or GSSAPI, got ${JSON.stringify(mechanism)}`);
  }
  const user = str(globals, "sasl-user");
  const pwFile = str(globals, "sasl-password-file");
  if (mechanism === "GSSAPI") {
    if (user !== undefined || pwFile !== undefined) throw new UsageError(`${user !== undefined ? "--sasl-user" : "--sasl-password-file"} is for DIGEST-MD5, not --sasl-mechanism GSSAPI (use --principal)`);
    options.sasl = gssapi(globals);
  } else {
    const kerberosOnly = KERBEROS_OPTIONS.find((o) => globals[o] !== undefined);
    if (kerberosOnly !== undefined) throw new UsageError(`--${kerberosOnly} needs --sasl-mechanism GSSAPI`);
    if (user !== undefined) {
      const password = pwFile !== undefined ? readOption(pwFile, "--sasl-password-file").replace(/\r?\n$/, "") : process.env.ZK_SASL_PASSWORD;
      if (password === undefined) throw new UsageError("--sasl-user needs --sasl-password-file FILE or $ZK_SASL_PASSWORD");
      options.sasl = { mechanism: "DIGEST-MD5", username: user, password };
    } else if (pwFile !== undefined) throw new UsageError("--sasl-password-file needs --sasl-user");
    else if (mechanism === "DIGEST-MD5") throw new UsageError("--sasl-mechanism DIGEST-MD5 needs --sasl-user");
  }
  const auths = (globals.auth as string[] | undefined) ?? [];
  options.auth = auths.map((a) => {
    const i = a.indexOf(":");
    if (i <= 0) throw new UsageError(`--auth ${JSON.stringify(a)}: expected scheme:credentials, e.g. digest:user:pass`);
    return { scheme: a.slice(0, i), auth: a.slice(i + 1) };
  });
  return { server, options };
}

/** The options that only GSSAPI takes. */
const KERBEROS_OPTIONS = ["keytab", "principal", "krb5-config", "sasl-service-name", "sasl-service-host"] as const;

/**
 * SASL GSSAPI: --keytab FILE (read here, so an unreadable one is a usage error) with --principal NAME (default:
 * the keytab's first principal); without a keytab, the ccache of $KRB5CCNAME (else /tmp/krb5cc_<uid>) as kinit wrote it.
 */
function gssapi(globals: Parsed["values"]): SaslGssapiOptions {
  const sasl: SaslGssapiOptions = { mechanism: "GSSAPI" };
  const keytab = str(globals, "keytab");
  if (keytab !== undefined) {
    try {
      sasl.keytab = new Uint8Array(readFileSync(keytab));
    } catch (e) {
      throw new UsageError(`--keytab: cannot read ${keytab}: ${(e as Error).message}`);
    }
  }
  const krb5Config = str(globals, "krb5-config");
  if (krb5Config !== undefined) {
    readOption(krb5Config, "--krb5-config");
    sasl.krb5Config = krb5Config;
  }
  for (const [flag, key] of [["principal", "principal"], ["sasl-service-name", "serviceName"], ["sasl-service-host", "serviceHost"]] as const) {
    const v = str(globals, flag);
    if (v === "") throw new UsageError(`--${flag} must not be empty`);
    if (v !== undefined) sasl[key] = v;
  }
  return sasl;
}

export function connect(t: Target): Promise<ZooKeeper> {
  return ZooKeeper.connect(t.server, t.options);
}
