// A real Heimdal KDC for the tests, beside the installed MIT packages and without installing anything: Debian's
// heimdal-kdc and heimdal-clients packages and their libraries are fetched with `apt-get download` into a cache
// directory and unpacked there with `dpkg-deb -x`; the KDC (/usr/lib/heimdal-servers/kdc) and `kadmin -l` run from
// it with LD_LIBRARY_PATH pointing at the unpacked libraries. A realm lives in a temporary directory: its
// krb5.conf ([kdc] database, ports) is the only configuration either reads.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { freePort, startDaemon, type Daemon } from "./kdc.ts";
import { linesCache } from "../servers/zk-lines.ts";

/** Debian bookworm's Heimdal 7.8: the KDC, kadmin, and the libraries they load. */
const PACKAGES = [
  "heimdal-kdc", "heimdal-clients", "libasn1-8-heimdal", "libgssapi3-heimdal", "libhcrypto5-heimdal", "libhdb9-heimdal",
  "libheimbase1-heimdal", "libheimntlm0-heimdal", "libkadm5srv8-heimdal", "libkadm5clnt7-heimdal", "libkdc2-heimdal",
  "libkrb5-26-heimdal", "libroken19-heimdal", "libsl0-heimdal", "libwind0-heimdal", "libhx509-5-heimdal", "libotp0-heimdal",
];

interface HeimdalTools {
  readonly kdc: string;
  readonly kadmin: string;
  readonly libs: string;
}

let tools: HeimdalTools | undefined;

/** The unpacked Heimdal (fetched on first use); throws saying why when apt-get or dpkg-deb cannot provide it. */
export function heimdalTools(): HeimdalTools {
  if (tools !== undefined) return tools;
  const dir = join(linesCache(), "heimdal-7.8");
  const root = join(dir, "root");
  const found = (): HeimdalTools => ({
    kdc: join(root, "usr/lib/heimdal-servers/kdc"),
    kadmin: join(root, "usr/bin/kadmin.heimdal"),
    libs: join(root, "usr/lib/x86_64-linux-gnu"),
  });
  if (!existsSync(found().kdc) || !existsSync(found().kadmin)) {
    const debs = join(dir, "debs");
    mkdirSync(debs, { recursive: true });
    try {
      execFileSync("apt-get", ["download", ...PACKAGES], { cwd: debs, stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
      for (const f of readdirSync(debs).filter((n) => n.endsWith(".deb"))) execFileSync("dpkg-deb", ["-x", join(debs, f), root], { stdio: ["ignore", "pipe", "pipe"] });
    } catch (e) {
      throw new Error(`cannot fetch Heimdal with apt-get download + dpkg-deb -x into ${dir}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  tools = found();
  return tools;
}

/** A Heimdal realm in a temporary directory, its KDC on a free loopback port (TCP and UDP). */
export class HeimdalKdc {
  readonly dir: string;
  readonly realm: string;
  readonly port: number;
  readonly #tools: HeimdalTools;
  #daemon: Daemon | undefined;

  constructor(dir: string, realm: string, port: number, t: HeimdalTools) {
    this.dir = dir;
    this.realm = realm;
    this.port = port;
    this.#tools = t;
  }

  get krb5Conf(): string {
    return join(this.dir, "krb5.conf");
  }

  get #env(): Record<string, string> {
    return { ...(process.env as Record<string, string>), KRB5_CONFIG: this.krb5Conf, LD_LIBRARY_PATH: this.#tools.libs, TZ: "UTC" };
  }

  /** kadmin -l (local, on the database) with `args`. */
  kadmin(...args: string[]): string {
    return execFileSync(this.#tools.kadmin, ["-l", "-c", this.krb5Conf, "-r", this.realm, ...args], { env: this.#env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  }

  /** Adds `name` with `password` (default: a random key), requiring pre-authentication. */
  addPrincipal(name: string, password?: string): void {
    this.kadmin("add", password !== undefined ? `--password=${password}` : "--random-key", "--use-defaults", "--attributes=requires-pre-auth", name);
  }

  /** Exports `name`'s keys to a keytab in the realm's directory; returns its path. */
  ktadd(name: string, file: string): string {
    const path = join(this.dir, file);
    this.kadmin("ext_keytab", "-k", path, name);
    return path;
  }

  async start(): Promise<void> {
    this.#daemon = await startDaemon(this.#tools.kdc, [`--config-file=${this.krb5Conf}`, `--ports=${this.port}`, "--addresses=127.0.0.1"], this.#env, this.port);
  }

  /** Stops the KDC (its parent ends its worker processes) and removes the directory. */
  async destroy(): Promise<void> {
    const d = this.#daemon;
    this.#daemon = undefined;
    await d?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Creates a Heimdal realm (kadmin -l init) in a temporary directory and starts its KDC. */
export async function startHeimdalKdc(realm: string): Promise<HeimdalKdc> {
  const t = heimdalTools();
  const dir = mkdtempSync(join(tmpdir(), "zkts-heimdal-"));
  const port = await freePort();
  const kdc = new HeimdalKdc(dir, realm, port, t);
  writeFileSync(
    kdc.krb5Conf,
    [
      "[libdefaults]",
      `  default_realm = ${realm}`,
      "  dns_lookup_kdc = false",
      "[realms]",
      `  ${realm} = {`,
      `    kdc = 127.0.0.1:${port}`,
      "  }",
      "[kdc]",
      "  database = {",
      `    dbname = ${join(dir, "heimdal")}`,
      `    realm = ${realm}`,
      `    acl_file = ${join(dir, "kadmind.acl")}`,
      `    log_file = ${join(dir, "db.log")}`,
      "  }",
      "[logging]",
      `  kdc = FILE:${join(dir, "kdc.log")}`,
      "",
    ].join("\n"),
  );
  try {
    kdc.kadmin("init", "--realm-max-ticket-life=10h", "--realm-max-renewable-life=7d", realm);
    await kdc.start();
  } catch (e) {
    await kdc.destroy();
    throw e;
  }
  return kdc;
}
