// SASL GSSAPI (RFC 4752) over the krb5 GSS-API mechanism, for ZooKeeper's SASL exchange, and the
// login that gets the tickets it needs.
//
// The shape (for wiring into the session):
//   const login = new KerberosLogin({ keytab, principal, krb5Config, now, dial });   // sync, reads files
//   const cred  = await login.serviceTicket("zookeeper", host);   // AS/TGS as needed; cached, renewed
//   const mech  = gssapiMechanism({ credential: cred, now });     // a SaslClient: initial(), step(), complete
// or in one go: `const mech = await gssapiClient({ ...loginOptions, serviceHost })`. A mechanism is good
// for one exchange (one connection); the login is kept for the life of the client and hands out service
// tickets, from its cache until they near their end (80% of their life), then fresh from the KDC.
//
// The exchange (RFC 4752 §3.1):
//   initial(): the GSS initial context token (the AP-REQ);
//   with mutual authentication: step(AP-REP token) verifies it and answers an empty token;
//   step(wrap token of 4 bytes: the server's security layers and buffer size) verifies its checksum
//   (acceptor key usage 22) and answers a wrap token of [01 00 00 00] + the authorization id: "no
//   security layer", integrity only;
//   step(final, empty) → null; complete.
import { existsSync } from "node:fs";
import * as process from "node:process"; // a namespace import: the CommonJS build has no default-import interop
import { systemClock, wallTime } from "../../clock.ts";
import { SaslError, SaslErrorReason } from "../errors.ts";
import type { SaslMechanism } from "../mechanism.ts";
import { enctypeName } from "./crypto.ts";
import { CcacheError, DerError, KerberosError, KerberosErrorReason, KrbCryptoError } from "./errors.ts";
import { acceptApRep, initSecContext, unwrap, wrap, type InitiatorStart } from "./gss.ts";
import { asExchange, tgsExchange, tgsPrincipal, type KdcContext, type KdcTransportOptions, type KerberosCredential } from "./kdc.ts";
import { defaultCcachePath, loadCcache, type Credential } from "./ccache.ts";
import { loadKeytab, samePrincipal, type Keytab } from "./keytab.ts";
import { loadKrb5Conf, realmOfHost, type Krb5Config } from "./krb5conf.ts";
import { decodeTicket } from "./messages.ts";
import { NameType, principalToString, type Principal } from "./types.ts";

const MECH = "GSSAPI";

/** Parses "name/instance@REALM" (with MIT's \\ escapes); the realm defaults to `defaultRealm`. */
export function parsePrincipal(text: string, defaultRealm: string | undefined, nameType: number = NameType.PRINCIPAL): Principal {
  const components: string[] = [];
  let cur = "";
  let realm: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\" && i + 1 < text.length) {
      const n = text[++i];
      const ch = n === "n" ? "\n" : n === "t" ? "\t" : n === "0" ? "\0" : n;
      if (realm !== undefined) realm += ch;
      else cur += ch;
    } else if (c === "@" && realm === undefined) {
      components.push(cur);
      cur = "";
      realm = "";
    } else if (c === "/" && realm === undefined) {
      components.push(cur);
      cur = "";
    } else if (realm !== undefined) realm += c;
    else cur += c;
  }
  if (realm === undefined) components.push(cur);
  if (components.some((c) => c === "")) throw new KerberosError(KerberosErrorReason.Config, `principal ${JSON.stringify(text)} has an empty component`);
  const r = realm ?? defaultRealm;
  if (r === undefined || r === "") {
    throw new KerberosError(KerberosErrorReason.Config, `principal ${JSON.stringify(text)} names no realm and krb5.conf has no default_realm`);
  }
  return { nameType, components, realm: r };
}

export interface KerberosLoginOptions extends KdcTransportOptions {
  /** The client principal ("alice@EXAMPLE.COM"); default: the keytab's first principal, or the ccache's. */
  readonly principal?: string;
  /** An MIT keytab: a path or its bytes. With it the login gets (and renews) its own tickets. */
  readonly keytab?: string | Uint8Array;
  /** A FILE ccache written by kinit (default: $KRB5CCNAME, else /tmp/krb5cc_<uid>), used without a keytab. */
  readonly ccache?: string;
  /** A krb5.conf path or a parsed config (default: $KRB5_CONFIG, else /etc/krb5.conf). */
  readonly krb5Config?: string | Krb5Config;
  /** Milliseconds since the epoch (default: the wall clock, clock.ts wallTime). */
  readonly now?: () => number;
  /** Environment for KRB5_CONFIG / KRB5CCNAME (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Renew a ticket once this fraction of its life has passed (default 0.8). */
  readonly renewAt?: number;
  /** The KDCs of a realm, instead of krb5.conf's. */
  readonly kdcsFor?: KdcContext["kdcsFor"];
  /** Enctypes to offer the KDC, in order (default: all four AES, strongest first). */
  readonly enctypes?: readonly number[];
  /** Sees each KDC request and reply (tests). */
  readonly onMessage?: KdcContext["onMessage"];
}

/**
 * The client's Kerberos identity: its config, keytab or ccache, TGT and service tickets. Construction
 * reads the files (synchronously) and throws KerberosError / KeytabError / CcacheError on a problem;
 * serviceTicket() does the network work.
 */
export class KerberosLogin {
  readonly config: Krb5Config;
  readonly principal: Principal;
  readonly #keytab: Keytab | undefined;
  readonly #ccachePath: string | undefined;
  readonly #ctx: KdcContext;
  readonly #renewAt: number;
  readonly #enctypes: readonly number[] | undefined;
  #tgt: KerberosCredential | undefined;
  #tgtPending: Promise<KerberosCredential> | undefined;
  readonly #tickets = new Map<string, KerberosCredential>();

  constructor(o: KerberosLoginOptions) {
    const env = o.env ?? process.env;
    this.config = typeof o.krb5Config === "object" ? o.krb5Config : loadKrb5Conf(o.krb5Config, env);
    const now = o.now ?? wallTime(systemClock);
    this.#renewAt = o.renewAt ?? 0.8;
    this.#enctypes = o.enctypes;
    if (o.keytab !== undefined) {
      this.#keytab = loadKeytab(o.keytab);
      if (o.principal !== undefined) this.principal = parsePrincipal(o.principal, this.config.defaultRealm);
      else {
        const first = this.#keytab.entries[0];
        if (first === undefined) throw new KerberosError(KerberosErrorReason.NoKey, "the keytab is empty");
        this.principal = first.principal;
      }
    } else {
      this.#ccachePath = o.ccache ?? defaultCcachePath(env);
      const cc = readCcache(this.#ccachePath, o.ccache !== undefined ? "the ccache option" : env.KRB5CCNAME ? "$KRB5CCNAME" : "the default ccache (no $KRB5CCNAME)");
      this.principal = o.principal !== undefined ? parsePrincipal(o.principal, this.config.defaultRealm) : cc.defaultPrincipal;
      if (!samePrincipal(this.principal, cc.defaultPrincipal)) {
        throw new KerberosError(KerberosErrorReason.Config, `the ccache ${this.#ccachePath} is for ${principalToString(cc.defaultPrincipal)}, not ${principalToString(this.principal)}`);
      }
    }
    this.#ctx = {
      config: this.config,
      now,
      dial: o.dial,
      udp: o.udp,
      timeoutMs: o.timeoutMs,
      udpPreferenceLimit: o.udpPreferenceLimit,
      signal: o.signal,
      clock: o.clock,
      kdcsFor: o.kdcsFor,
      onMessage: o.onMessage,
    };
  }

  /** ms since the epoch, on the login's clock. */
  now(): number {
    return this.#ctx.now();
  }

  /** The service principal for a service name and host: name/host@REALM, REALM by [domain_realm], else the client's. */
  servicePrincipal(serviceName: string, serviceHost: string): Principal {
    const host = serviceHost.toLowerCase();
    return { nameType: NameType.SRV_HST, components: [serviceName, host], realm: realmOfHost(this.config, host) ?? this.principal.realm };
  }

  #fresh(c: KerberosCredential): boolean {
    const now = this.#ctx.now();
    return now < c.endTime && now < c.startTime + (c.endTime - c.startTime) * this.#renewAt;
  }

  /** A TGT for the client's realm (from the keytab: cached until it nears its end). */
  async tgt(signal?: AbortSignal): Promise<KerberosCredential> {
    if (this.#keytab === undefined) return this.#ccacheTgt();
    if (this.#tgt !== undefined && this.#fresh(this.#tgt)) return this.#tgt;
    this.#tgtPending ??= asExchange(signal ? { ...this.#ctx, signal } : this.#ctx, { client: this.principal, credentials: { keytab: this.#keytab }, enctypes: this.#enctypes }).finally(() => {
      this.#tgtPending = undefined;
    });
    this.#tgt = await this.#tgtPending;
    return this.#tgt;
  }

  /** A service ticket for serviceName/serviceHost (cached; renewed as its end nears). */
  async serviceTicket(serviceName: string, serviceHost: string, signal?: AbortSignal): Promise<KerberosCredential> {
    const server = this.servicePrincipal(serviceName, serviceHost);
    const name = principalToString(server);
    const cached = this.#tickets.get(name);
    if (cached !== undefined && this.#fresh(cached)) return cached;
    if (this.#keytab === undefined) {
      const fromCache = this.#ccacheTicket(server);
      if (fromCache !== undefined) return fromCache;
    }
    let cred: KerberosCredential;
    try {
      const tgt = await this.tgt(signal);
      cred = await tgsExchange(signal ? { ...this.#ctx, signal } : this.#ctx, { tgt, server, enctypes: this.#enctypes });
    } catch (e) {
      // Renewing early, with no KDC answering: the ticket in hand still works until its end time.
      if (cached !== undefined && e instanceof KerberosError && e.reason === KerberosErrorReason.KdcUnreachable && this.#ctx.now() < cached.endTime - 60_000) return cached;
      throw e;
    }
    this.#tickets.set(name, cred);
    return cred;
  }

  /** Drops the cached tickets (the next serviceTicket() goes to the KDC). */
  forget(): void {
    this.#tgt = undefined;
    this.#tickets.clear();
  }

  #ccacheCreds(): Credential[] {
    const path = this.#ccachePath ?? "";
    try {
      return [...loadCcache(path).credentials];
    } catch (e) {
      if (e instanceof CcacheError) throw new KerberosError(KerberosErrorReason.Expired, `cannot use the ccache ${path}: ${e.message}`, { cause: e });
      throw e;
    }
  }

  #ccacheTicket(server: Principal): KerberosCredential | undefined {
    const now = this.#ctx.now();
    for (const c of this.#ccacheCreds()) {
      if (samePrincipal(c.client, this.principal) && samePrincipal(c.server, server) && c.endTime * 1000 > now + 60_000) return fromCcache(c);
    }
    return undefined;
  }

  #ccacheTgt(): KerberosCredential {
    const now = this.#ctx.now();
    const want = tgsPrincipal(this.principal.realm);
    const tgts = this.#ccacheCreds().filter((c) => samePrincipal(c.client, this.principal) && samePrincipal(c.server, want));
    const valid = tgts.find((c) => c.endTime * 1000 > now + 60_000);
    if (valid === undefined) {
      const last = tgts.map((c) => c.endTime).sort((a, b) => b - a)[0];
      throw new KerberosError(
        KerberosErrorReason.Expired,
        last === undefined
          ? `the ccache ${this.#ccachePath} has no TGT for ${principalToString(this.principal)}; run kinit`
          : `the TGT of ${principalToString(this.principal)} in the ccache ${this.#ccachePath} expired at ${new Date(last * 1000).toISOString()}; run kinit`,
      );
    }
    return fromCcache(valid);
  }
}

/** Loads a ccache; a missing one says where the path came from and what to do (kinit, or a keytab). */
function readCcache(path: string, from: string): ReturnType<typeof loadCcache> {
  const file = path.replace(/^FILE:/, "");
  if (!existsSync(file)) {
    throw new KerberosError(KerberosErrorReason.Expired, `no credentials cache at ${file} (${from}): run kinit, or give a keytab`);
  }
  return loadCcache(path);
}

function fromCcache(c: Credential): KerberosCredential {
  let ticket;
  try {
    ticket = decodeTicket(c.ticket);
  } catch (e) {
    throw new KerberosError(KerberosErrorReason.BadReply, `the ccache's ticket for ${principalToString(c.server)} is malformed: ${(e as Error).message}`, { cause: e });
  }
  return {
    client: c.client,
    server: c.server,
    key: c.key,
    ticket,
    flags: c.flags,
    authTime: c.authTime * 1000,
    startTime: (c.startTime || c.authTime) * 1000,
    endTime: c.endTime * 1000,
    renewTill: c.renewTill ? c.renewTill * 1000 : undefined,
  };
}

export interface GssapiMechanismOptions {
  /** The service ticket (from KerberosLogin.serviceTicket). */
  readonly credential: KerberosCredential;
  /** ms since the epoch, read when initial() builds the authenticator (default: the wall clock, clock.ts wallTime). */
  readonly now?: () => number;
  /** Ask for mutual authentication (default true: the server's AP-REP is verified). */
  readonly mutual?: boolean;
  /** The authorization id sent in the last token (default: the client principal; ZooKeeper ignores it). */
  readonly authzid?: string;
}

/** The SASL client of one exchange; also says whom it authenticated as. */
export interface GssapiSaslClient extends SaslMechanism {
  /** "alice@EXAMPLE.COM" */
  readonly principal: string;
  /** "zookeeper/zk1.example.com@EXAMPLE.COM" */
  readonly service: string;
}

type State = "start" | "ap-rep" | "offer" | "final" | "done" | "failed";

/** The RFC 4752 client state machine for one exchange (synchronous: the ticket is already there). */
export function gssapiMechanism(o: GssapiMechanismOptions): GssapiSaslClient {
  const now = o.now ?? wallTime(systemClock);
  const cred = o.credential;
  const principal = principalToString(cred.client);
  const service = principalToString(cred.server);
  const authzid = o.authzid ?? principal;
  let state: State = "start";
  let start: InitiatorStart | undefined;

  const fail = (reason: SaslErrorReason, message: string): never => {
    state = "failed";
    throw new SaslError(MECH, reason, message);
  };
  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (e) {
      state = "failed";
      if (e instanceof SaslError) throw e;
      if (e instanceof KerberosError) {
        const reason = e.reason === KerberosErrorReason.BadReply ? SaslErrorReason.BadChallenge : SaslErrorReason.ServerAuthFailed;
        throw new SaslError(MECH, reason, e.message);
      }
      // Typed failures of the building blocks (a malformed DER, a refused enctype); anything else is a bug and stays as it is.
      if (e instanceof DerError || e instanceof KrbCryptoError) throw new SaslError(MECH, SaslErrorReason.BadChallenge, e.message);
      throw e;
    }
  };

  return {
    name: MECH,
    principal,
    service,
    get complete(): boolean {
      return state === "done";
    },
    initial(): Uint8Array {
      if (state !== "start") fail(SaslErrorReason.State, "initial() called twice");
      return guard(() => {
        start = initSecContext({ credential: cred, now: now(), mutual: o.mutual ?? true });
        state = start.mutual ? "ap-rep" : "offer";
        return start.token;
      });
    },
    step(challenge: Uint8Array): Uint8Array | null {
      return guard(() => {
        if (!(challenge instanceof Uint8Array)) fail(SaslErrorReason.BadChallenge, "the challenge is not bytes");
        switch (state) {
          case "ap-rep": {
            if (challenge.length === 0) fail(SaslErrorReason.BadChallenge, `${service} sent no AP-REP for mutual authentication`);
            acceptApRep(start as InitiatorStart, challenge);
            state = "offer";
            return new Uint8Array(0);
          }
          case "offer": {
            if (challenge.length === 0) fail(SaslErrorReason.BadChallenge, `${service} sent an empty token where its security-layer offer was due`);
            const ctx = (start as InitiatorStart).context;
            const { message } = unwrap(ctx, challenge);
            if (message.length !== 4) fail(SaslErrorReason.BadChallenge, `the security-layer offer of ${service} is ${message.length} bytes, not 4`);
            if ((message[0] & 0x01) === 0) {
              fail(SaslErrorReason.Unsupported, `${service} requires a security layer (offered 0x${message[0].toString(16)}); this client supports only "no security layer"`);
            }
            const id = new TextEncoder().encode(authzid);
            const answer = new Uint8Array(4 + id.length);
            answer[0] = 0x01; // no security layer; max buffer size 0
            answer.set(id, 4);
            state = "final";
            return wrap(ctx, answer);
          }
          case "final": {
            if (challenge.length !== 0) fail(SaslErrorReason.BadChallenge, `${service} sent ${challenge.length} bytes after the exchange was over`);
            state = "done";
            return null;
          }
          case "start":
            return fail(SaslErrorReason.State, "step() before initial()");
          default:
            return fail(SaslErrorReason.State, `step() after the exchange ${state === "done" ? "completed" : "failed"}`);
        }
      });
    },
  };
}

export interface GssapiClientOptions extends KerberosLoginOptions {
  /** Default "zookeeper" (the Java client's zookeeper.sasl.client.username). */
  readonly serviceName?: string;
  /** The host of the connect-string entry being connected. */
  readonly serviceHost: string;
  readonly mutual?: boolean;
  readonly authzid?: string;
  /** Reuse a login (its ticket cache) instead of making one from these options. */
  readonly login?: KerberosLogin;
}

/**
 * Gets the service ticket (AS and TGS with a keytab, or from the ccache) and returns the SASL client
 * of one exchange. Rejects with KerberosError (or KeytabError / CcacheError) naming what failed.
 */
export async function gssapiClient(o: GssapiClientOptions): Promise<GssapiSaslClient> {
  const login = o.login ?? new KerberosLogin(o);
  const credential = await login.serviceTicket(o.serviceName ?? "zookeeper", o.serviceHost, o.signal);
  return gssapiMechanism({ credential, now: () => login.now(), mutual: o.mutual, authzid: o.authzid });
}

/** "aes256-cts-hmac-sha1-96 (18) until 2026-12-05T10:00:00Z": a credential summary without its key. */
export function describeCredential(c: KerberosCredential): string {
  return `${principalToString(c.client)} → ${principalToString(c.server)}, ${enctypeName(c.key.enctype)}, valid ${new Date(c.startTime).toISOString()} to ${new Date(c.endTime).toISOString()}`;
}
