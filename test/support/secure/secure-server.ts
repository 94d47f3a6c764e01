// ZooKeeper servers with a TLS client port or SASL DIGEST-MD5 (ZooKeeper Administrator's Guide, TLS
// and SASL sections; shapes verified against 3.8.0), on top of
// startStandalone, plus a tiny hand-written Jute session used to prove a server is reachable and
// what identities it grants. The probe is an independent oracle: it does not use src/.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { makeCertificates, saslJaas, type Certificates } from "./secure.ts";
import { startStandalone, type ServerOptions, type ZkServer } from "../servers/zk-server.ts";
import { freePorts } from "../servers/zk-ports.ts";
import type { TestKdc } from "./kdc.ts";

// Our material lives outside the server dir (its path is only known inside startStandalone), so
// config values are absolute paths. That suits the local JVM back end; a Docker back end would
// need these files mounted.
const ownDirs = new Set<string>();
process.on("exit", () => { for (const d of ownDirs) rmSync(d, { recursive: true, force: true }); });
function ownDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  ownDirs.add(d);
  return d;
}
async function dropDir(d: string): Promise<void> {
  ownDirs.delete(d);
  await rm(d, { recursive: true, force: true });
}

export interface TlsServerOptions extends ServerOptions {
  /** ssl.clientAuth: "want" (default; CA-only and mutual TLS both work), "need", or "none". */
  readonly clientAuth?: "want" | "need" | "none";
  /** TLSv1.3 only (also sets ssl.ciphersuites: 3.8.0's default list has only TLS 1.2 suites). Default: 3.8.0's TLSv1.2. */
  readonly tls13Only?: boolean;
  /** Reuse certificates (e.g. one set per test file); default: a fresh set, removed on close(). */
  readonly certs?: Certificates;
}

export interface TlsServer {
  readonly server: ZkServer;
  /** TLS client port. `server.clientPort` stays plaintext (readiness probe, plain clients). */
  readonly securePort: number;
  readonly connectString: string;
  readonly certs: Certificates;
  close(): Promise<void>;
}

export function tlsServerConfig(certs: Certificates, securePort: number, opts: TlsServerOptions = {}): Record<string, string> {
  return {
    secureClientPort: String(securePort),
    secureClientPortAddress: "127.0.0.1",
    serverCnxnFactory: "org.apache.zookeeper.server.NettyServerCnxnFactory",
    "ssl.keyStore.location": certs.serverKeystore,
    "ssl.keyStore.type": "PEM",
    "ssl.trustStore.location": certs.caCert,
    "ssl.trustStore.type": "PEM",
    "ssl.clientAuth": opts.clientAuth ?? "want",
    "authProvider.x509": "org.apache.zookeeper.server.auth.X509AuthenticationProvider",
    ...(opts.tls13Only ? {
      "ssl.protocol": "TLSv1.3",
      "ssl.enabledProtocols": "TLSv1.3",
      "ssl.ciphersuites": "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256",
    } : {}),
  };
}

export async function startTlsServer(opts: TlsServerOptions = {}): Promise<TlsServer> {
  const certDir = opts.certs ? undefined : ownDir("zk-ts-certs-");
  try {
    const certs = opts.certs ?? (await makeCertificates(certDir as string));
    // zoo.cfg must name the secure port, so it is drawn here rather than as an extra port.
    const [securePort] = await freePorts(1);
    const server = await startStandalone({ ...opts, config: { ...tlsServerConfig(certs, securePort, opts), ...opts.config } });
    return {
      server, securePort, certs, connectString: `127.0.0.1:${securePort}`,
      async close() {
        await server.close();
        if (certDir) await dropDir(certDir);
      },
    };
  } catch (e) {
    if (certDir) await dropDir(certDir);
    throw e;
  }
}

export interface SaslServerOptions extends ServerOptions {
  /** name → password; default { alice: "alice-secret", bob: "bob-secret" }. */
  readonly users?: Readonly<Record<string, string>>;
  /** sessionRequireClientSASLAuth: every session must do SASL (default true). */
  readonly required?: boolean;
}

export interface SaslServer {
  readonly server: ZkServer;
  readonly users: Readonly<Record<string, string>>;
  readonly connectString: string;
  /** The JAAS file the server reads (Server section only). */
  readonly jaasPath: string;
  close(): Promise<void>;
}

export function saslServerConfig(required = true): Record<string, string> {
  return {
    "authProvider.sasl": "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
    ...(required ? { sessionRequireClientSASLAuth: "true" } : {}),
  };
}

export async function startSaslServer(opts: SaslServerOptions = {}): Promise<SaslServer> {
  const users = opts.users ?? { alice: "alice-secret", bob: "bob-secret" };
  const dir = ownDir("zk-ts-jaas-");
  try {
    const jaasPath = join(dir, "jaas.conf");
    writeFileSync(jaasPath, saslJaas({ users }));
    const server = await startStandalone({
      ...opts,
      config: { ...saslServerConfig(opts.required ?? true), ...opts.config },
      jvmArgs: [`-Djava.security.auth.login.config=${jaasPath}`, ...(opts.jvmArgs ?? [])],
    });
    return {
      server, users, jaasPath, connectString: server.connectString,
      async close() {
        await server.close();
        await dropDir(dir);
      },
    };
  } catch (e) {
    await dropDir(dir);
    throw e;
  }
}

export interface KerberosServerOptions extends ServerOptions {
  /** The realm's KDC (test/support/secure/kdc.ts); the server's principal and keytab are made there. */
  readonly kdc: TestKdc;
  /** The host part of the server's principal (default "localhost": zookeeper/localhost@REALM). */
  readonly serviceHost?: string;
  /** sessionRequireClientSASLAuth: every session must do SASL (default false). */
  readonly required?: boolean;
}

export interface KerberosServer {
  readonly server: ZkServer;
  /** zookeeper/localhost@REALM */
  readonly principal: string;
  readonly connectString: string;
  readonly jaasPath: string;
  /** The server's keytab (JAAS keyTab=). */
  readonly keytab: string;
  close(): Promise<void>;
}

/** JAAS `Server` section for a Kerberized server: Krb5LoginModule with a keytab (KERBEROS.md). */
export function kerberosJaas(keytab: string, principal: string): string {
  return `Server {\n  com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab=${jaasQuote(keytab)}\n` +
    `  storeKey=true\n  useTicketCache=false\n  principal=${jaasQuote(principal)};\n};\n`;
}

const jaasQuote = (v: string): string => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/** A ZooKeeper server whose SASL is Kerberos: the SASL server's shape with Krb5LoginModule and the realm's krb5.conf. */
export async function startKerberosServer(opts: KerberosServerOptions): Promise<KerberosServer> {
  const { kdc } = opts;
  const principal = `zookeeper/${opts.serviceHost ?? "localhost"}@${kdc.realm}`;
  const dir = ownDir("zk-ts-krb-");
  try {
    // One principal per realm and host, shared by the servers of a test file: its keys are exported as they are.
    let exists = false;
    try {
      exists = kdc.kadmin(`getprinc ${principal}`).includes("Principal:");
    } catch {
      exists = false;
    }
    if (!exists) kdc.addPrincipal(principal);
    const keytab = join(dir, "zk.keytab");
    kdc.kadmin(`ktadd -k ${keytab} -norandkey ${principal}`);
    const jaasPath = join(dir, "jaas.conf");
    writeFileSync(jaasPath, kerberosJaas(keytab, principal));
    const server = await startStandalone({
      ...opts,
      config: { ...saslServerConfig(opts.required ?? false), ...opts.config },
      jvmArgs: [`-Djava.security.auth.login.config=${jaasPath}`, `-Djava.security.krb5.conf=${kdc.krb5Conf}`, ...(opts.jvmArgs ?? [])],
    });
    return {
      server, principal, jaasPath, keytab, connectString: server.connectString,
      async close() {
        await server.close();
        await dropDir(dir);
      },
    };
  } catch (e) {
    await dropDir(dir);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Probe: a hand-written session (ConnectRequest, then numbered requests) over a plain or TLS socket.

export interface ProbeReply {
  readonly xid: number;
  readonly zxid: bigint;
  readonly err: number;
  readonly body: Buffer;
}

export interface ClientIdentity { readonly scheme: string; readonly id: string }

export class ProbeSession {
  readonly socket: Socket;
  sessionId = 0n;
  #buf: Buffer = Buffer.alloc(0);
  #waiters: Array<{ resolve: (frame: Buffer) => void; reject: (e: Error) => void }> = [];
  #frames: Buffer[] = [];
  #ended: Error | undefined;
  #xid = 0;

  constructor(socket: Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    // The socket's own error (with its `code`, e.g. a TLS alert) wins over a plain "closed".
    const end = (e: Error): void => {
      this.#ended ??= e;
      for (const w of this.#waiters.splice(0)) w.reject(this.#ended);
    };
    socket.on("error", end);
    socket.on("close", () => end(new Error("connection closed by the server")));
  }

  #onData(chunk: Buffer): void {
    this.#buf = Buffer.concat([this.#buf, chunk]);
    while (this.#buf.length >= 4) {
      const len = this.#buf.readInt32BE(0);
      if (this.#buf.length < 4 + len) break;
      const frame = this.#buf.subarray(4, 4 + len);
      this.#buf = this.#buf.subarray(4 + len);
      const w = this.#waiters.shift();
      if (w) w.resolve(frame); else this.#frames.push(frame);
    }
  }

  /** Next whole frame from the server; rejects when the connection ends first. */
  frame(): Promise<Buffer> {
    const f = this.#frames.shift();
    if (f) return Promise.resolve(f);
    if (this.#ended) return Promise.reject(this.#ended);
    return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Resolves when the server has closed the connection. */
  closed(): Promise<void> {
    if (this.socket.destroyed || this.socket.readableEnded) return Promise.resolve();
    return new Promise((resolve) => this.socket.once("close", () => resolve()));
  }

  #send(payload: Buffer): void {
    const len = Buffer.alloc(4);
    len.writeInt32BE(payload.length);
    this.socket.write(Buffer.concat([len, payload]));
  }

  async handshake(timeoutMs = 30_000): Promise<void> {
    const req = Buffer.alloc(4 + 8 + 4 + 8 + 4 + 16 + 1); // protocolVersion, lastZxid, timeOut, sessionId, passwd, readOnly
    req.writeInt32BE(timeoutMs, 12);
    req.writeInt32BE(16, 24);
    this.#send(req);
    const resp = await this.frame();
    this.sessionId = resp.readBigInt64BE(8);
    if (this.sessionId === 0n) throw new Error("server refused the session (session id 0)");
  }

  async request(op: number, body: Uint8Array = new Uint8Array(0)): Promise<ProbeReply> {
    const xid = ++this.#xid;
    const head = Buffer.alloc(8);
    head.writeInt32BE(xid, 0);
    head.writeInt32BE(op, 4);
    this.#send(Buffer.concat([head, body]));
    const f = await this.frame();
    const reply = { xid: f.readInt32BE(0), zxid: f.readBigInt64BE(4), err: f.readInt32BE(12), body: f.subarray(16) };
    if (reply.xid !== xid) throw new Error(`reply xid ${reply.xid}, expected ${xid}`);
    return reply;
  }

  /** GetSASLRequest (opcode 102); the reply token is null (length -1) on failure. */
  async sasl(token: Uint8Array): Promise<{ err: number; token: Buffer | null }> {
    const len = Buffer.alloc(4);
    len.writeInt32BE(token.length);
    const r = await this.request(102, Buffer.concat([len, token]));
    if (r.body.length < 4) return { err: r.err, token: null };
    const n = r.body.readInt32BE(0);
    return { err: r.err, token: n < 0 ? null : r.body.subarray(4, 4 + n) };
  }

  /** whoAmI (opcode 107, ZooKeeper 3.7+): the identities this connection carries. */
  async whoAmI(): Promise<ClientIdentity[] | { err: number }> {
    const r = await this.request(107);
    if (r.err !== 0) return { err: r.err };
    const out: ClientIdentity[] = [];
    let at = 4;
    const str = (): string => {
      const n = r.body.readInt32BE(at);
      const s = r.body.toString("utf8", at + 4, at + 4 + Math.max(n, 0));
      at += 4 + Math.max(n, 0);
      return s;
    };
    for (let i = r.body.readInt32BE(0); i > 0; i--) out.push({ scheme: str(), id: str() });
    return out;
  }

  end(): void {
    this.socket.destroy();
  }
}

function opened(socket: Socket, event: "connect" | "secureConnect"): Promise<ProbeSession> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.once(event, () => {
      socket.off("error", reject);
      resolve(new ProbeSession(socket));
    });
  });
}

/** Plain TCP probe session to 127.0.0.1:port, after the ConnectRequest/Response. */
export async function probeSession(port: number): Promise<ProbeSession> {
  const s = await opened(netConnect({ host: "127.0.0.1", port }), "connect");
  await s.handshake();
  return s;
}

/** TLS probe session (node:tls) to 127.0.0.1:port, after the ConnectRequest/Response. */
export async function probeTlsSession(port: number, tls: ConnectionOptions): Promise<ProbeSession> {
  const s = await opened(tlsConnect({ host: "127.0.0.1", port, ...tls }), "secureConnect");
  await s.handshake();
  return s;
}

/** Minimal shape of a client SASL mechanism (src/client/sasl's SaslMechanism fits). */
export interface ProbeMechanism {
  initial(): Uint8Array;
  step(challenge: Uint8Array): Uint8Array | null;
  readonly complete: boolean;
}

export interface SaslTranscript {
  /** Server tokens as text (latin1), in order. */
  readonly serverTokens: string[];
  /** Client tokens as text (latin1), in order, the first being the initial response. */
  readonly clientTokens: string[];
  /** 0 when the server accepted every token, else the error code of the failing reply. */
  readonly err: number;
  readonly complete: boolean;
}

/** Runs a SASL exchange the way the Java client does: empty token first, then challenge/response. */
export async function saslExchange(s: ProbeSession, mech: ProbeMechanism): Promise<SaslTranscript> {
  const serverTokens: string[] = [];
  const clientTokens: string[] = [];
  let out: Uint8Array | null = mech.initial();
  while (out !== null) {
    clientTokens.push(Buffer.from(out).toString("latin1"));
    const r = await s.sasl(out);
    if (r.err !== 0) return { serverTokens, clientTokens, err: r.err, complete: mech.complete };
    serverTokens.push(r.token ? r.token.toString("latin1") : "<null>");
    out = mech.step(r.token ?? new Uint8Array(0));
  }
  return { serverTokens, clientTokens, err: 0, complete: mech.complete };
}
