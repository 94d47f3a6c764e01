// A real MIT KDC for the tests, in a temporary directory: kdb5_util create -s, kadmin.local addprinc /
// ktadd, krb5kdc -n on free loopback ports. KRB5_CONFIG and KRB5_KDC_PROFILE point into the directory
// for every tool run here (nothing in /etc is read or written). Debian packages: krb5-kdc,
// krb5-admin-server (kdb5_util, kadmin.local), krb5-user (kinit, klist). Below it, what the Kerberos test
// files share: describeWithKdc (the guard for missing packages), refusal (a connect() that must fail) and
// startRealm (a KDC, alice and bob, a Kerberized server).
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { ZooKeeperError, type Logger, type ZooKeeper } from "../../../src/index.ts";
import { describe, it } from "../bdd.ts";
import { encodeKrbError } from "./kerberos-peer.ts";
import { LineProcess } from "../processes/line-process.ts";
import { startKerberosServer, type KerberosServer } from "./secure-server.ts";

const TOOLS = ["krb5kdc", "kdb5_util", "kadmin.local", "kinit"];
const SEARCH = ["/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/sbin", "/usr/local/bin"];

function which(tool: string): string | undefined {
  for (const d of [...(process.env.PATH ?? "").split(":"), ...SEARCH]) {
    if (d !== "" && existsSync(join(d, tool))) return join(d, tool);
  }
  return undefined;
}

/** The MIT tools that are missing (empty when a KDC can run here). */
export function missingKdcTools(): string[] {
  return TOOLS.filter((t) => which(t) === undefined);
}

export const ALL_ENCTYPES = ["aes256-cts-hmac-sha1-96", "aes128-cts-hmac-sha1-96", "aes256-cts-hmac-sha384-192", "aes128-cts-hmac-sha256-128"] as const;

/** A free loopback port for both TCP and UDP (probed with TCP; the KDC binds both). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** krb5.conf [capaths]: client realm → service realm → the realms between ("." for a direct trust), one relation each. */
export type Capaths = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

/** The [capaths] section of `c` (none when empty). */
function capathsLines(c: Capaths | undefined): string[] {
  if (c === undefined || Object.keys(c).length === 0) return [];
  return [
    "[capaths]",
    ...Object.entries(c).flatMap(([client, to]) => [`  ${client} = {`, ...Object.entries(to).flatMap(([service, via]) => via.map((v) => `    ${service} = ${v}`)), "  }"]),
  ];
}

export interface KdcOptions {
  readonly realm?: string;
  /** UDP port (default: the TCP port); a different port makes the configured kdc TCP-only. */
  readonly udpPort?: number;
  /** max_life of the realm (default 10h). */
  readonly maxLife?: string;
  /** More [domain_realm] entries of the KDC's own krb5.conf (host or .domain → realm): MIT's KDC refers host-based requests by them. */
  readonly domainRealm?: Readonly<Record<string, string>>;
  /** [capaths] of the KDC's own krb5.conf: MIT's KDC checks the realms a cross-realm ticket transited against it. */
  readonly capaths?: Capaths;
  /** kdc.conf host_based_services of the realm: services whose requests of any name type get host-based referrals. */
  readonly hostBasedServices?: string;
}

export interface PrincipalOptions {
  /** Enctypes of its keys (default all four AES). */
  readonly enctypes?: readonly string[];
  readonly requiresPreauth?: boolean;
  /** A password (default: random keys). */
  readonly password?: string;
  readonly maxLife?: string;
  /** Its maximum renewable life ("0": its tickets are never renewable). */
  readonly maxRenewLife?: string;
}

export class TestKdc {
  readonly dir: string;
  readonly realm: string;
  readonly port: number;
  readonly udpPort: number;
  readonly env: Record<string, string>;
  #daemon: Daemon | undefined;

  constructor(dir: string, realm: string, port: number, udpPort: number) {
    this.dir = dir;
    this.realm = realm;
    this.port = port;
    this.udpPort = udpPort;
    this.env = { ...(process.env as Record<string, string>), KRB5_CONFIG: join(dir, "krb5.conf"), KRB5_KDC_PROFILE: join(dir, "kdc.conf"), TZ: "UTC" };
  }

  get krb5Conf(): string {
    return join(this.dir, "krb5.conf");
  }

  /** Writes another krb5.conf for this realm (e.g. with udp_preference_limit = 1, other relations of the realm such as primary_kdc); returns its path. */
  writeKrb5Conf(
    name: string, libdefaults: Record<string, string> = {}, kdcs: readonly string[] = [`127.0.0.1:${this.port}`], realmRelations: Record<string, string> = {},
    more: { readonly domainRealm?: Readonly<Record<string, string>>; readonly capaths?: Capaths } = {},
  ): string {
    const lib = { default_realm: this.realm, dns_lookup_kdc: "false", dns_lookup_realm: "false", rdns: "false", ...libdefaults };
    return writeConf(this.dir, name, [
      "[libdefaults]",
      ...Object.entries(lib).map(([k, v]) => `  ${k} = ${v}`),
      "[realms]",
      `  ${this.realm} = {`,
      ...kdcs.map((k) => `    kdc = ${k}`),
      ...Object.entries(realmRelations).map(([k, v]) => `    ${k} = ${v}`),
      "  }",
      "[domain_realm]",
      `  localhost = ${this.realm}`,
      ...Object.entries(more.domainRealm ?? {}).map(([k, v]) => `  ${k} = ${v}`),
    ], more.capaths);
  }

  kadmin(query: string): string {
    return execFileSync("kadmin.local", ["-r", this.realm, "-q", query], { env: this.env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  }

  addPrincipal(name: string, o: PrincipalOptions = {}): void {
    const e = (o.enctypes ?? ALL_ENCTYPES).map((x) => `${x}:normal`).join(" ");
    const key = o.password !== undefined ? `-pw ${o.password}` : "-randkey";
    const flags = o.requiresPreauth ? " +requires_preauth" : "";
    const life = `${o.maxLife ? ` -maxlife "${o.maxLife}"` : ""}${o.maxRenewLife !== undefined ? ` -maxrenewlife "${o.maxRenewLife}"` : ""}`;
    this.kadmin(`addprinc ${key} -e "${e}"${flags}${life} ${name}`);
  }

  /** Exports `name`'s keys to a keytab file in the realm's directory (ktadd re-randomizes unless norandkey). */
  ktadd(name: string, file: string, o: { norandkey?: boolean; enctypes?: readonly string[] } = {}): string {
    const path = join(this.dir, file);
    const e = o.enctypes ? ` -e "${o.enctypes.map((x) => `${x}:normal`).join(" ")}"` : "";
    this.kadmin(`ktadd -k ${path}${o.norandkey ? " -norandkey" : ""}${e} ${name}`);
    return path;
  }

  keytabBytes(file: string): Uint8Array {
    return new Uint8Array(readFileSync(join(this.dir, file)));
  }

  /** kinit with a keytab into a FILE ccache; returns its path. `life` and `renewable`: kinit -l and -r ("15s", "5m"). */
  kinit(principal: string, keytab: string, ccache: string, o: { readonly life?: string; readonly renewable?: string } = {}): string {
    const path = join(this.dir, ccache);
    const times = [...(o.life !== undefined ? ["-l", o.life] : []), ...(o.renewable !== undefined ? ["-r", o.renewable] : [])];
    execFileSync("kinit", ["-k", "-t", keytab, ...times, "-c", `FILE:${path}`, principal], { env: this.env, stdio: ["ignore", "pipe", "pipe"] });
    return path;
  }

  async start(): Promise<void> {
    this.#daemon = await startDaemon("krb5kdc", ["-n", "-r", this.realm], this.env, this.port);
  }

  async stop(): Promise<void> {
    const d = this.#daemon;
    this.#daemon = undefined;
    await d?.stop();
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A KDC process started by startDaemon. */
export interface Daemon {
  /** SIGTERM, then SIGKILL after 5 s; resolves once it exited. */
  stop(): Promise<void>;
}

/** Spawns `command` with `env` and waits (up to 10 s) until it listens on 127.0.0.1:`port`; its stderr is in the error when it does not. */
export async function startDaemon(command: string, args: readonly string[], env: Record<string, string>, port: number): Promise<Daemon> {
  const child: ChildProcess = spawn(command, [...args], { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Uint8Array) => {
    stderr += new TextDecoder().decode(d);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  };
  const name = command.replace(/.*\//, "");
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr.slice(0, 500)}`);
    if (await canConnect(port)) return { stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not listen on 127.0.0.1:${port} within 10 s: ${stderr.slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Writes a krb5.conf of `lines` (and [capaths] when given) as `name` in `dir`; returns its path. */
function writeConf(dir: string, name: string, lines: readonly string[], capaths?: Capaths): string {
  const path = join(dir, name);
  writeFileSync(path, [...lines, ...capathsLines(capaths), ""].join("\n"));
  return path;
}

/** Whether something listens on 127.0.0.1:`port` (TCP). */
function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** Creates a realm in a temporary directory and starts its KDC. */
export async function startKdc(o: KdcOptions = {}): Promise<TestKdc> {
  const missing = missingKdcTools();
  if (missing.length > 0) throw new Error(`MIT Kerberos tools missing: ${missing.join(", ")} (install krb5-kdc krb5-admin-server krb5-user)`);
  const realm = o.realm ?? "ZKTS.TEST";
  const dir = mkdtempSync(join(tmpdir(), "zkts-kdc-"));
  const port = await freePort();
  const udpPort = o.udpPort ?? port;
  const kdc = new TestKdc(dir, realm, port, udpPort);
  kdc.writeKrb5Conf("krb5.conf", {}, undefined, {}, o);
  writeFileSync(
    join(dir, "kdc.conf"),
    [
      "[kdcdefaults]",
      `  kdc_ports = ${udpPort}`,
      `  kdc_tcp_ports = ${port}`,
      "[realms]",
      `  ${realm} = {`,
      `    database_name = ${join(dir, "principal")}`,
      `    key_stash_file = ${join(dir, "stash")}`,
      `    acl_file = ${join(dir, "kadm5.acl")}`,
      `    supported_enctypes = ${ALL_ENCTYPES.map((e) => `${e}:normal`).join(" ")}`,
      `    max_life = ${o.maxLife ?? "10h"}`,
      "    max_renewable_life = 7d",
      ...(o.hostBasedServices !== undefined ? [`    host_based_services = ${o.hostBasedServices}`] : []),
      "  }",
      "[logging]",
      `  kdc = FILE:${join(dir, "kdc.log")}`,
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "kadm5.acl"), "");
  try {
    execFileSync("kdb5_util", ["create", "-s", "-r", realm, "-P", "test-master-key"], { env: kdc.env, stdio: ["ignore", "pipe", "pipe"] });
    await kdc.start();
  } catch (e) {
    await kdc.destroy();
    throw e;
  }
  return kdc;
}

/** A fake KDC started by startErrorKdc or startSlowKdc. */
export interface ErrorKdc {
  /** Its port, UDP and TCP. */
  readonly port: number;
  /** The requests it answered so far. */
  requests(): number;
  close(): void;
}

/**
 * A KDC of `realm` on UDP and TCP (`host`, a free port) that answers every request with KRB-ERROR `code`
 * (29 KDC_ERR_SVC_UNAVAILABLE: a busy KDC; 24 KDC_ERR_PREAUTH_FAILED: a replica that lags behind a change of the
 * client's key). With `tgsTo` (a real KDC's port on 127.0.0.1), TGS-REQs are passed to that KDC over the same
 * transport and its answer returned, as a replica that has the realm's krbtgt key answers them.
 */
export function startErrorKdc(realm: string, code: number, o: { readonly host?: string; readonly tgsTo?: number } = {}): Promise<ErrorKdc> {
  const refusal = (): Uint8Array =>
    encodeKrbError({
      ctime: undefined, cusec: undefined, stime: new Date(), susec: 0, errorCode: code, crealm: undefined, cname: undefined,
      realm, sname: { nameType: 2, components: ["krbtgt", realm] }, eText: undefined, eData: undefined,
    });
  const relay = o.tgsTo;
  return serveKdc(o.host ?? "127.0.0.1", (req, over) => {
    if (relay === undefined || req[0] !== 0x6c) return Promise.resolve(refusal()); // a TGS-REQ is APPLICATION 12
    return over === "udp" ? udpAsk(relay, req) : tcpAsk(relay, req);
  });
}

/**
 * A KDC far away or under load: every request (UDP or TCP) passed to the real KDC on 127.0.0.1:`to` over the same
 * transport, and its answer returned `delayMs` late.
 */
export function startSlowKdc(to: number, delayMs: number): Promise<ErrorKdc> {
  return serveKdc("127.0.0.1", async (req, over) => {
    const answer = await (over === "udp" ? udpAsk(to, req) : tcpAsk(to, req));
    await new Promise((r) => setTimeout(r, delayMs)); // the fault's duration
    return answer;
  });
}

/** A KDC on UDP and TCP (`host`, a free port) whose answer to each request (its DER, without the TCP length) is `answer`'s. */
async function serveKdc(host: string, answer: (req: Uint8Array, over: "udp" | "tcp") => Promise<Uint8Array>): Promise<ErrorKdc> {
  const port = await freePort();
  let requests = 0;
  const ask = (req: Uint8Array, over: "udp" | "tcp"): Promise<Uint8Array> => {
    requests++;
    return answer(req, over);
  };
  const udp = createSocket("udp4");
  udp.on("message", (m, from) => {
    void ask(new Uint8Array(m), "udp").then((r) => {
      try {
        udp.send(r, from.port, from.address);
      } catch {
        // closed meanwhile (a slow answer after the test ended)
      }
    }, () => {});
  });
  const tcp: Server = createServer((s) => {
    let have = Buffer.alloc(0);
    s.on("data", (d: Buffer) => {
      have = Buffer.concat([have, d]);
      if (have.length >= 4 && have.length >= 4 + have.readUInt32BE(0)) {
        void ask(new Uint8Array(have.subarray(4, 4 + have.readUInt32BE(0))), "tcp").then((r) => s.end(Buffer.concat([lengthPrefix(r.length), r])), () => s.destroy());
      }
    });
    s.on("error", () => {});
  });
  await new Promise<void>((r) => tcp.listen(port, host, () => r()));
  await new Promise<void>((r) => udp.bind(port, host, () => r()));
  return { port, requests: () => requests, close: () => { tcp.close(); udp.close(); } };
}

function lengthPrefix(n: number): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(n);
  return head;
}

/** One datagram to 127.0.0.1:`port` and its answer (5 s at most). */
function udpAsk(port: number, req: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const sock = createSocket("udp4");
    const timer = setTimeout(() => (sock.close(), reject(new Error("no answer"))), 5000);
    sock.once("message", (m) => {
      clearTimeout(timer);
      sock.close();
      resolve(new Uint8Array(m));
    });
    sock.once("error", (e) => {
      clearTimeout(timer);
      sock.close();
      reject(e);
    });
    sock.send(req, port, "127.0.0.1");
  });
}

/** One length-prefixed request over TCP to 127.0.0.1:`port` and its answer. */
function tcpAsk(port: number, req: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port });
    let have = Buffer.alloc(0);
    s.once("connect", () => s.write(Buffer.concat([lengthPrefix(req.length), req])));
    s.on("data", (d: Buffer) => {
      have = Buffer.concat([have, d]);
      if (have.length >= 4 && have.length >= 4 + have.readUInt32BE(0)) {
        s.destroy();
        resolve(new Uint8Array(have.subarray(4, 4 + have.readUInt32BE(0))));
      }
    });
    s.once("error", reject);
  });
}

/**
 * describe(title, body) where the MIT tools are installed. Where they are not, the suite is one test, "needs
 * the MIT KDC packages", that fails under CI=true and elsewhere passes with a line on stderr tagged [tag].
 */
export function describeWithKdc(title: string, tag: string, body: () => void): void {
  const missing = missingKdcTools();
  if (missing.length === 0) {
    describe(title, body);
    return;
  }
  describe(title, () => {
    it("needs the MIT KDC packages", () => {
      if (process.env.CI === "true") assert.fail(`MIT Kerberos tools missing: ${missing.join(", ")}; install krb5-kdc krb5-admin-server krb5-user (scripts/install-deps.sh)`);
      process.stderr.write(`[${tag}] skipped: ${missing.join(", ")} missing (install krb5-kdc krb5-admin-server krb5-user)\n`);
    });
  });
}

const JAVA_KERBEROS_CLIENT = fileURLToPath(new URL("./java/KerberosClient.java", import.meta.url));

/** How javaKerberosClient and javaKerberosWatcher run the Java client. */
export interface JavaKerberosRun {
  /** The java binary and the ZooKeeper 3.8.0 classpath (localInstall("3.8")). */
  readonly java: string;
  readonly classpath: string;
  /** Where its JAAS file is written. */
  readonly dir: string;
  readonly principal: string;
  /** Its keytab (JAAS useKeyTab), unless ticketCache is given. */
  readonly keytab?: string;
  /** A FILE ccache read instead of a keytab (JAAS useTicketCache=true, ticketCache=): the TGT in it, read at login. */
  readonly ticketCache?: string;
  readonly krb5Conf: string;
  readonly connect: string;
  /** More system properties (-Dname=value). */
  readonly props?: readonly string[];
}

/** The java command line of KerberosClient.java for `o` (its JAAS Client section written in o.dir) and `command`. */
function javaKerberosArgs(o: JavaKerberosRun, command: readonly string[]): string[] {
  const jaas = join(o.dir, `client-${o.principal.replace(/[^a-z0-9]/gi, "_")}.jaas`);
  const credentials = o.ticketCache !== undefined
    ? `  useTicketCache=true\n  ticketCache="${o.ticketCache}"\n  useKeyTab=false\n  doNotPrompt=true\n`
    : `  useKeyTab=true\n  keyTab="${o.keytab ?? ""}"\n  storeKey=true\n  useTicketCache=false\n`;
  writeFileSync(jaas, `Client {\n  com.sun.security.auth.module.Krb5LoginModule required\n${credentials}  principal="${o.principal}";\n};\n`);
  return [
    "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
    `-Djava.security.auth.login.config=${jaas}`, `-Djava.security.krb5.conf=${o.krb5Conf}`,
    ...(o.props ?? []), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
    "-cp", o.classpath, JAVA_KERBEROS_CLIENT, o.connect, ...command,
  ];
}

/**
 * The Java ZooKeeper client (test/support/secure/java/KerberosClient.java) as `principal` through a JAAS Client section
 * (Krb5LoginModule and its keytab or ccache) on `krb5Conf`: one command; its stdout lines and its stderr.
 */
export function javaKerberosClient(o: JavaKerberosRun, ...command: string[]): Promise<{ lines: string[]; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(o.java, javaKerberosArgs(o, command), { timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`java KerberosClient ${command.join(" ")} failed: ${err.message}\n${stderr.slice(-2000)}`)) : resolve({ lines: stdout.split("\n").filter(Boolean), stderr }),
    ),
  );
}

/**
 * The same Java client kept running (its "watch" command): every event of its default watcher comes as a line
 * EVENT <KeeperState> <session id, hex>; "whoami" on stdin answers WHOAMI <scheme:id,...> <States>, or ERROR <code>
 * <States>; "close" closes it (CLOSED) and ends it.
 */
export function javaKerberosWatcher(o: JavaKerberosRun): LineProcess {
  return new LineProcess(`java-${o.principal}`, spawn(o.java, javaKerberosArgs(o, ["watch"]), { stdio: ["pipe", "pipe", "pipe"] }));
}

/** A zookeeper-ts client's states and failed connect attempts (from its debug log), in the order they came; print() writes them on stderr tagged [tag]. */
export class ClientTrace {
  readonly events: string[] = [];
  /** The tag of its printed lines. */
  readonly tag: string;
  constructor(tag: string) {
    this.tag = tag;
  }
  readonly logger: Logger = {
    debug: (m) => {
      const failed = /^zookeeper: connect to \S+ failed: (.*)$/s.exec(m);
      if (failed) this.events.push(`attempt failed (${failed[1]})`);
    },
    info: () => {},
    warn: () => {},
    error: () => {},
  };
  failures(pattern: RegExp): number {
    return this.events.filter((e) => e.startsWith("attempt failed") && pattern.test(e)).length;
  }
  watch(zk: ZooKeeper): void {
    this.events.push(`state ${zk.state}`);
    zk.on("state", (s) => this.events.push(`state ${s}`));
  }
  states(): string[] {
    return this.events.filter((e) => e.startsWith("state ")).map((e) => e.slice(6));
  }
  print(what: string): void {
    // Runs of the same failure shown once, with their count.
    const lines: string[] = [];
    for (const e of this.events) {
      const short = e.replace(/^(attempt failed) \((.{0,260}).*\)$/s, "$1: $2");
      const last = lines.length - 1;
      const m = last >= 0 ? /^(.*?)(?: ×(\d+))?$/s.exec(lines[last]!) : null;
      if (m && m[1] === short) lines[last] = `${short} ×${Number(m[2] ?? 1) + 1}`;
      else lines.push(short);
    }
    process.stderr.write(`[${this.tag}] ${what}:\n${lines.map((l) => `  ${l}`).join("\n")}\n`);
  }
}

/** Prints a failure (its name, ZooKeeper code and message) on stderr tagged [tag], for the issue's table. */
export function reportFailure(tag: string, what: string, e: unknown): void {
  process.stderr.write(`[${tag}] ${what}: ${e instanceof Error ? `${e.name} ${(e as ZooKeeperError).code ?? ""}: ${e.message}` : String(e)}\n`);
}

/**
 * A connect() that must be refused: a client that connects anyway is closed and the assertion fails; the
 * error is reported (reportFailure) and returned, asserted to be a ZooKeeperError.
 */
export async function refusal(tag: string, connecting: Promise<ZooKeeper>, what: string): Promise<ZooKeeperError> {
  const e = await connecting.then(
    async (zk) => {
      await zk.close();
      return null;
    },
    (err: unknown) => err,
  );
  reportFailure(tag, what, e);
  assert.ok(e instanceof ZooKeeperError, `expected a ZooKeeperError, got ${String(e)}`);
  return e;
}

/** A realm (startKdc), alice and bob in it (pre-authentication required, a keytab each) and a Kerberized server. */
export interface Realm {
  readonly kdc: TestKdc;
  /** startKerberosServer({ kdc }): zookeeper/localhost@REALM. */
  readonly srv: KerberosServer;
  /** alice@REALM */
  readonly alice: string;
  /** bob@REALM */
  readonly bob: string;
  /** The path of alice's keytab (alice.keytab in the realm's directory). */
  readonly aliceKeytab: string;
  /** The path of bob's keytab (bob.keytab). */
  readonly bobKeytab: string;
  /** Returns `zk`, to be closed by close(). */
  track(zk: ZooKeeper): ZooKeeper;
  /** Closes the tracked clients, then the server, then the KDC (and removes its directory). */
  close(): Promise<void>;
}

/** track() and close() of a Realm or a Trust: close() closes the tracked clients, then the server, then the KDCs. */
function tracking(srv: KerberosServer, kdcs: readonly TestKdc[]): Pick<Realm, "track" | "close"> {
  const open: ZooKeeper[] = [];
  return {
    track(zk) {
      open.push(zk);
      return zk;
    },
    async close() {
      await Promise.all(open.map((zk) => zk.close().catch(() => {})));
      await srv.close();
      await Promise.all(kdcs.map((k) => k.destroy()));
    },
  };
}

export async function startRealm(): Promise<Realm> {
  const kdc = await startKdc();
  try {
    const alice = `alice@${kdc.realm}`;
    const bob = `bob@${kdc.realm}`;
    kdc.addPrincipal(alice, { requiresPreauth: true });
    kdc.addPrincipal(bob, { requiresPreauth: true });
    const aliceKeytab = kdc.ktadd(alice, "alice.keytab");
    const bobKeytab = kdc.ktadd(bob, "bob.keytab");
    const srv = await startKerberosServer({ kdc });
    return { kdc, srv, alice, bob, aliceKeytab, bobKeytab, ...tracking(srv, [kdc]) };
  } catch (e) {
    await kdc.destroy();
    throw e;
  }
}

/**
 * Two realms with a one-way trust, as AD → MIT layouts have it: USERS.ZKTS.TEST (alice) is trusted by
 * CLUSTER.ZKTS.TEST (the Kerberized server, zookeeper/zk.cluster.zkts.test@CLUSTER.ZKTS.TEST, and bob), through
 * krbtgt/CLUSTER.ZKTS.TEST@USERS.ZKTS.TEST in both KDCs with the same password. Users of USERS reach services of
 * CLUSTER; nothing of CLUSTER reaches USERS (no krbtgt/USERS.ZKTS.TEST@CLUSTER.ZKTS.TEST; USERS has a service
 * zookeeper/localhost@USERS.ZKTS.TEST to be refused). USERS's KDC maps .cluster.zkts.test to CLUSTER.ZKTS.TEST in
 * its own krb5.conf, so that it refers host-based requests for those hosts (MIT's KDC does, with the canonicalize
 * option and a host name with a dot). A third realm, PARTNER.TEST (carol), is trusted by USERS only
 * (krbtgt/USERS.ZKTS.TEST@PARTNER.TEST): carol reaches CLUSTER through USERS, by [capaths] alone (the hierarchy
 * PARTNER.TEST → TEST → ZKTS.TEST → CLUSTER.ZKTS.TEST has no trust); CLUSTER's KDC has that [capaths] too, to
 * accept the transited realm.
 */
export interface Trust {
  readonly users: TestKdc;
  readonly cluster: TestKdc;
  /** The server, zookeeper/zk.cluster.zkts.test@CLUSTER.ZKTS.TEST (its JVM on CLUSTER's krb5.conf). */
  readonly srv: KerberosServer;
  /** alice@USERS.ZKTS.TEST and her keytab. */
  readonly alice: string;
  readonly aliceKeytab: string;
  /** bob@CLUSTER.ZKTS.TEST and his keytab. */
  readonly bob: string;
  readonly bobKeytab: string;
  readonly partner: TestKdc;
  /** carol@PARTNER.TEST and her keytab. */
  readonly carol: string;
  readonly carolKeytab: string;
  /** The host of the server's principal: zk.cluster.zkts.test (a name that resolves nowhere: it is given as serviceHost). */
  readonly serviceHost: string;
  /**
   * A client krb5.conf in USERS's directory listing both realms' KDCs: default_realm (USERS by default), the
   * [domain_realm] entries and the [capaths] lines given (each "CLIENT = { SERVICE = VIA }" as written); `more`: other
   * realms' KDCs (a Heimdal realm).
   */
  conf(name: string, o?: { defaultRealm?: string; domainRealm?: Readonly<Record<string, string>>; capaths?: Capaths; more?: ReadonlyArray<{ readonly realm: string; readonly port: number }> }): string;
  track(zk: ZooKeeper): ZooKeeper;
  close(): Promise<void>;
}

export const USERS_REALM = "USERS.ZKTS.TEST";
export const CLUSTER_REALM = "CLUSTER.ZKTS.TEST";
export const PARTNER_REALM = "PARTNER.TEST";
/** PARTNER → CLUSTER through USERS. */
export const PARTNER_CAPATHS: Capaths = { [PARTNER_REALM]: { [CLUSTER_REALM]: [USERS_REALM] } };

export async function startTrust(): Promise<Trust> {
  const serviceHost = "zk.cluster.zkts.test";
  const users = await startKdc({ realm: USERS_REALM, domainRealm: { ".cluster.zkts.test": CLUSTER_REALM }, hostBasedServices: "zookeeper" });
  let cluster: TestKdc | undefined;
  let partner: TestKdc | undefined;
  try {
    cluster = await startKdc({ realm: CLUSTER_REALM, capaths: PARTNER_CAPATHS });
    partner = await startKdc({ realm: PARTNER_REALM });
    const partnerTrust = `krbtgt/${USERS_REALM}@${PARTNER_REALM}`;
    const partnerPassword = `partner-${process.pid}-${Date.now()}`;
    partner.addPrincipal(partnerTrust, { password: partnerPassword });
    users.addPrincipal(partnerTrust, { password: partnerPassword });
    const carol = `carol@${PARTNER_REALM}`;
    partner.addPrincipal(carol, { requiresPreauth: true });
    const carolKeytab = partner.ktadd(carol, "carol.keytab");
    const trust = `krbtgt/${CLUSTER_REALM}@${USERS_REALM}`;
    const password = `trust-${process.pid}-${Date.now()}`;
    users.addPrincipal(trust, { password });
    cluster.addPrincipal(trust, { password });
    const alice = `alice@${USERS_REALM}`;
    const bob = `bob@${CLUSTER_REALM}`;
    users.addPrincipal(alice, { requiresPreauth: true });
    cluster.addPrincipal(bob, { requiresPreauth: true });
    // A service of USERS, for the direction the trust does not go.
    users.addPrincipal(`zookeeper/localhost@${USERS_REALM}`);
    const aliceKeytab = users.ktadd(alice, "alice.keytab");
    const bobKeytab = cluster.ktadd(bob, "bob.keytab");
    const srv = await startKerberosServer({ kdc: cluster, serviceHost });
    const both = cluster;
    const third = partner;
    return {
      users, cluster, partner, srv, alice, aliceKeytab, bob, bobKeytab, carol, carolKeytab, serviceHost,
      conf(name, o = {}) {
        return writeConf(users.dir, name, [
          "[libdefaults]",
          `  default_realm = ${o.defaultRealm ?? USERS_REALM}`,
          "  dns_lookup_kdc = false",
          "  dns_lookup_realm = false",
          "  rdns = false",
          "[realms]",
          ...[users, both, third, ...(o.more ?? [])].flatMap((k) => [`  ${k.realm} = {`, `    kdc = 127.0.0.1:${k.port}`, "  }"]),
          "[domain_realm]",
          ...Object.entries(o.domainRealm ?? {}).map(([k, v]) => `  ${k} = ${v}`),
        ], o.capaths);
      },
      ...tracking(srv, [users, both, third]),
    };
  } catch (e) {
    await Promise.all([users.destroy(), cluster?.destroy(), partner?.destroy()]);
    throw e;
  }
}
