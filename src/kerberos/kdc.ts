// The KDC exchanges of a Kerberos 5 client (RFC 4120 §3.1, §3.3, §7.2): the AS exchange with a
// keytab (or a password) and PA-ENC-TIMESTAMP pre-authentication, the TGS exchange for a service
// ticket, and the transport to the KDCs of a realm: UDP first for small requests, TCP (a 4-byte
// big-endian length, then the message), and TCP again when a UDP reply is KRB_ERR_RESPONSE_TOO_BIG or UDP
// gets no answer. Each `kdc` of the realm is tried in turn, each attempt bounded by a timeout.
//
// No sockets here: TCP goes through a KdcDialer and UDP through a DatagramOpener (or a whole UdpExchange),
// both given by the caller (the client passes its Transport and its UDP socket). Time comes
// from an injected now() (ms since the epoch), timers from injected Timers; nonces, confounders and subkeys
// from node:crypto. No key, ticket or authenticator byte reaches a message.
import { randomBytes } from "node:crypto";
import { type HostPort, hostText } from "../protocol/connect-string.ts";
import { concatBytes } from "../protocol/bytes.ts";
import { enctype, enctypeName, isSupportedEnctype, SUPPORTED_ENCTYPES } from "./crypto.ts";
import { DerError, KerberosError, KerberosErrorReason, KrbCryptoError, KrbCryptoErrorReason, krbErrorName, printableText } from "./errors.ts";
import { keysFor, type Keytab } from "./keytab.ts";
import { kdcTimingOf, kdcsOf, parseKdcAddress, realmSection, values, type KdcAddress, type Krb5Config } from "./krb5conf.ts";
import {
  decodeEncKdcRepPart,
  decodeEtypeInfo2,
  decodeKdcReply,
  decodeMethodData,
  encodeApReq,
  encodeAuthenticator,
  encodeEncryptedData,
  encodeKdcReq,
  encodeKdcReqBody,
  encodePaEncTsEnc,
  KeyUsage,
  MsgType,
  PaType,
  type EncKdcRepPart,
  type EtypeInfo2Entry,
  type KdcRep,
  type KdcReqBody,
  type KrbErrorMessage,
  type PaData,
  type PrincipalName,
  type Ticket,
} from "./messages.ts";
import { KeyBlock, NameType, principalToString, type Principal } from "./types.ts";

// ---------------------------------------------------------------------------------------------------
// Transport

/** Timers for the KDC timeouts (the client passes its Clock). */
export interface Timers {
  /** Calls `fn` once, `ms` milliseconds from now. */
  setTimeout(fn: () => void, ms: number): unknown;
  /** Cancels a timer of setTimeout. */
  clearTimeout(handle: unknown): void;
}

/** The runtime's timers: the default Timers. */
export const runtimeTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A TCP stream to a KDC, as a KdcDialer gives it. */
export interface KdcLink {
  /** Queues bytes. */
  write(bytes: Uint8Array): unknown;
  /** Tears the stream down. */
  close(): void;
}

/** Where a KdcDialer delivers what happens on a KdcLink. */
export interface KdcLinkHandlers {
  /** Bytes from the KDC, in order. */
  onData(chunk: Uint8Array): void;
  /** The link can take writes again. */
  onDrain(): void;
  /** The stream ended (with the error, if any). */
  onClose(error?: Error): void;
}

/** Opens a TCP stream to `target` (the client passes its Transport's dial). */
export type KdcDialer = (target: HostPort, handlers: KdcLinkHandlers, options: { timeoutMs: number; signal?: AbortSignal }) => Promise<KdcLink>;

/** What happens on a UDP socket a DatagramOpener opened. */
export interface DatagramHandlers {
  /** A datagram from the KDC. */
  onMessage(datagram: Uint8Array): void;
  /** The socket failed (an ICMP refusal on a connected socket, a send error), with the runtime's `code` if any. */
  onError(error: Error & { code?: string }): void;
}

/** A UDP socket connected to one KDC. */
export interface DatagramSocket {
  /** Sends one datagram (queued until the socket is connected). */
  send(datagram: Uint8Array): void;
  /** Closes the socket (twice is harmless). */
  close(): void;
}

/** Opens a UDP socket connected to `target` (the client passes its transport folder's udp.ts). */
export type DatagramOpener = (target: HostPort, handlers: DatagramHandlers) => DatagramSocket;

/** Sends one UDP datagram to `target` and resolves with the first datagram back from it. */
export type UdpExchange = (target: HostPort, request: Uint8Array, options: { timeoutMs: number; signal?: AbortSignal; clock?: Timers }) => Promise<Uint8Array>;

/** How the KDC exchanges reach the KDCs. */
export interface KdcTransportOptions {
  /** TCP: the client's Transport as a dialer. */
  readonly dial: KdcDialer;
  /** UDP (udpExchange over the client's DatagramOpener); null: never UDP. */
  readonly udp: UdpExchange | null;
  /** How long one attempt (one KDC, one protocol) may take, in ms (default 3000). */
  readonly timeoutMs?: number;
  /** Attempts per KDC before the next one (default 1). */
  readonly tries?: number;
  /** Requests longer than this go over TCP only (default: krb5.conf's udp_preference_limit, else 1465). */
  readonly udpPreferenceLimit?: number;
  /** Aborts everything (the client gave up). */
  readonly signal?: AbortSignal;
  /** Timers for the timeouts (default: the runtime's). */
  readonly clock?: Timers;
  /** SRV lookups for KDC discovery (_kerberos._udp / _kerberos._tcp.REALM) when krb5.conf lists no KDC of a realm; absent: none. */
  readonly resolveSrv?: SrvResolver;
  /** Told which KDC answered (the AS exchange asks the primary KDC again when a replica refused). */
  readonly onAnswer?: (kdc: KdcAddress) => void;
}

const DEFAULT_TIMEOUT_MS = 3000;
const DEFAULT_UDP_PREFERENCE_LIMIT = 1465;
/** Largest KDC reply accepted over TCP (a reply with a big PAC is a few tens of KiB). */
const MAX_TCP_REPLY = 1 << 20;
const RESPONSE_TOO_BIG = 52;
/** KDC_ERR_SVC_UNAVAILABLE: this KDC cannot serve now, another of the realm may (MIT moves on too). */
const SVC_UNAVAILABLE = 29;

/** A failed attempt at one KDC: the reason without the endpoint (it is added when listed). */
class AttemptFailed extends Error {}

type Finish = (error: Error | undefined, reply?: Uint8Array) => void;

/**
 * One exchange with one KDC, settled once: by `finish` (a reply or an error), by the timeout, or by `signal`.
 * `start` sends the request and returns what to release once it settles; `settled()` tells a late callback it is moot.
 */
function exchangeOnce(
  timeoutMs: number, clock: Timers, signal: AbortSignal | undefined, start: (finish: Finish, settled: () => boolean) => () => void,
): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    let done = false;
    let release: (() => void) | null = null;
    const finish: Finish = (error, reply) => {
      if (done) return;
      done = true;
      clock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      release?.();
      if (error !== undefined) reject(error);
      else resolve(reply ?? new Uint8Array(0));
    };
    const onAbort = (): void => finish(new AttemptFailed("aborted"));
    const timer = clock.setTimeout(() => finish(new AttemptFailed(`no answer within ${timeoutMs} ms`)), timeoutMs);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const started = start(finish, () => done);
    if (done) started(); // it settled while starting
    else release = started;
  });
}

/** The UdpExchange over `open`: one connected socket per attempt (an ICMP refusal fails at once), closed when it settles. */
export function udpExchange(open: DatagramOpener): UdpExchange {
  return (target, request, { timeoutMs, signal, clock = runtimeTimers }) =>
    exchangeOnce(timeoutMs, clock, signal, (finish) => {
      let socket: DatagramSocket | undefined;
      try {
        socket = open(target, {
          onMessage: (datagram) => finish(undefined, new Uint8Array(datagram)),
          onError: (e) => finish(new AttemptFailed(e.code ? `${e.code}` : e.message)),
        });
        socket.send(request);
      } catch (e) {
        finish(new AttemptFailed((e as Error).message));
      }
      return () => socket?.close();
    });
}

/** One request over TCP through `dial`: the 4-byte length, the message; the same framing back. */
export function tcpExchange(dial: KdcDialer, target: HostPort, request: Uint8Array, timeoutMs: number, clock: Timers, signal?: AbortSignal): Promise<Uint8Array> {
  return exchangeOnce(timeoutMs, clock, signal, (finish, settled) => {
    const controller = new AbortController();
    let link: KdcLink | undefined;
    const chunks: Uint8Array[] = [];
    let have = 0;
    let need = -1;
    const all = (): Uint8Array => concatBytes(...chunks);
    const handlers = {
      onData(chunk: Uint8Array): void {
        if (settled()) return;
        chunks.push(new Uint8Array(chunk));
        have += chunk.length;
        if (need < 0 && have >= 4) {
          const head = all();
          const len = new DataView(head.buffer, head.byteOffset, 4).getUint32(0);
          if (len & 0x80000000) return finish(new AttemptFailed("the KDC's TCP reply uses the reserved length bit"));
          if (len > MAX_TCP_REPLY) return finish(new AttemptFailed(`the KDC's TCP reply claims ${len} bytes (more than ${MAX_TCP_REPLY})`));
          need = len;
        }
        if (need >= 0 && have >= 4 + need) {
          const buf = all();
          if (have > 4 + need) return finish(new AttemptFailed("the KDC sent more than one reply"));
          finish(undefined, buf.slice(4, 4 + need));
        }
      },
      onDrain(): void {},
      onClose(error?: Error): void {
        finish(new AttemptFailed(`connection closed before a whole reply${error ? ` (${(error as { code?: string }).code ?? error.message})` : ""}`));
      },
    };
    dial(target, handlers, { timeoutMs, signal: controller.signal }).then(
      (l) => {
        if (settled()) {
          l.close();
          return;
        }
        link = l;
        const framed = new Uint8Array(4 + request.length);
        new DataView(framed.buffer).setUint32(0, request.length);
        framed.set(request, 4);
        l.write(framed);
      },
      (e: unknown) => {
        const err = e as (Error & { code?: string }) | undefined;
        finish(new AttemptFailed(err?.code ? `${err.code}` : (err?.message ?? String(e))));
      },
    );
    return () => {
      controller.abort(new AttemptFailed("done"));
      link?.close();
    };
  });
}

/**
 * Sends `request` to the KDCs of `realm` in turn until one answers, each KDC `tries` times (askKdc) unless it says it
 * is not serving. Throws KerberosError (kdc-unreachable) listing every attempt.
 */
export async function sendToKdcs(kdcs: readonly KdcAddress[], realm: string, request: Uint8Array, options: KdcTransportOptions): Promise<Uint8Array> {
  const failures: string[] = [];
  const tries = Math.max(1, options.tries ?? 1);
  for (const kdc of kdcs) {
    for (let t = 0; t < tries && !options.signal?.aborted; t++) {
      const reply = await askKdc(kdc, request, options, failures);
      if (reply === "busy") break; // this KDC answered that it is not serving: the next one, not this one again
      if (reply !== null) return reply;
    }
    if (options.signal?.aborted) break;
  }
  throw new KerberosError(KerberosErrorReason.KdcUnreachable, `no KDC of realm ${realm} answered: ${failures.join("; ") || "no KDC to try"}`);
}

/**
 * One attempt at one KDC: UDP first when the request is small enough and UDP is on (then TCP to the same KDC when UDP
 * fails or the reply is KRB_ERR_RESPONSE_TOO_BIG), else TCP. The reply; "busy" (KDC_ERR_SVC_UNAVAILABLE); or null, with
 * the reasons added to `failures`.
 */
async function askKdc(kdc: KdcAddress, request: Uint8Array, options: KdcTransportOptions, failures: string[]): Promise<Uint8Array | "busy" | null> {
  const { dial, udp } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const clock = options.clock ?? runtimeTimers;
  const limit = options.udpPreferenceLimit ?? DEFAULT_UDP_PREFERENCE_LIMIT;
  const target = { host: kdc.host, port: kdc.port };
  const tryUdp = udp !== null && kdc.protocol !== "tcp" && (request.length <= limit || kdc.protocol === "udp");
  if (tryUdp) {
    try {
      const reply = await udp(target, request, { timeoutMs, signal: options.signal, clock });
      const code = krbErrorCode(reply);
      if (code === SVC_UNAVAILABLE) {
        failures.push(`${hostText(target)} udp: KDC_ERR_SVC_UNAVAILABLE`);
        return "busy"; // this KDC answered: it is not serving, whatever the protocol
      }
      if (code !== RESPONSE_TOO_BIG) {
        options.onAnswer?.(kdc);
        return reply;
      }
      failures.push(`${hostText(target)} udp: KRB_ERR_RESPONSE_TOO_BIG`);
    } catch (e) {
      failures.push(`${hostText(target)} udp: ${reasonOf(e)}`);
    }
    if (options.signal?.aborted) return null;
  }
  if (kdc.protocol === "udp") return null;
  try {
    const reply = await tcpExchange(dial, target, request, timeoutMs, clock, options.signal);
    if (krbErrorCode(reply) === SVC_UNAVAILABLE) {
      failures.push(`${hostText(target)} tcp: KDC_ERR_SVC_UNAVAILABLE`);
      return "busy";
    }
    options.onAnswer?.(kdc);
    return reply;
  } catch (e) {
    failures.push(`${hostText(target)} tcp: ${reasonOf(e)}`);
    return null;
  }
}

function reasonOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}

/** The error code of a KRB-ERROR reply; undefined for anything else (a malformed reply is the caller's to report). */
function krbErrorCode(reply: Uint8Array): number | undefined {
  if (reply.length === 0 || reply[0] !== 0x7e) return undefined; // [APPLICATION 30]
  try {
    const r = decodeKdcReply(reply);
    return r.kind === "error" ? r.error.errorCode : undefined;
  } catch {
    return undefined;
  }
}

/** SRV lookups (the client passes node:dns resolveSrv). */
export type SrvResolver = (name: string) => Promise<ReadonlyArray<{ readonly name: string; readonly port: number; readonly priority: number; readonly weight: number }>>;

/**
 * The KDCs of a realm: krb5.conf's `kdc` entries; when it lists none and [libdefaults] dns_lookup_kdc is not
 * false (MIT's default is true), the SRV records _kerberos._udp.REALM (UDP) and _kerberos._tcp.REALM (TCP), by
 * priority (then the heavier weight first). A realm with neither is a KerberosError (config).
 */
export async function locateKdcs(config: Krb5Config, realm: string, resolveSrv: SrvResolver | undefined): Promise<KdcAddress[]> {
  const listed = kdcListed(config, realm);
  if (listed.length > 0 || resolveSrv === undefined || !dnsLookupKdc(config)) return kdcsOf(config, realm); // throws naming the realm when empty
  const found: Array<KdcAddress & { priority: number; weight: number }> = [];
  const tried: string[] = [];
  for (const protocol of ["udp", "tcp"] as const) {
    const name = `_kerberos._${protocol}.${realm}`;
    try {
      for (const r of await resolveSrv(name)) {
        if (r.name === "" || r.name === ".") continue; // "." : the service is not offered here
        found.push({ host: r.name.replace(/\.$/, ""), port: r.port, protocol, priority: r.priority, weight: r.weight });
      }
      tried.push(name);
    } catch (e) {
      tried.push(`${name} (${(e as { code?: string }).code ?? reasonOf(e)})`);
    }
  }
  if (found.length === 0) {
    throw new KerberosError(KerberosErrorReason.Config, `krb5.conf: no kdc for realm ${realm} in [realms] of ${config.files[0] ?? "krb5.conf"}, and no SRV record: ${tried.join(", ")}`);
  }
  found.sort((a, b) => a.priority - b.priority || b.weight - a.weight);
  return found.map(({ host, port, protocol }) => ({ host, port, protocol }));
}

const kdcListed = (config: Krb5Config, realm: string): string[] => values(realmSection(config, realm), "kdc");

/** [libdefaults] dns_lookup_kdc (else dns_fallback), true unless "false"/"no"/"0"/"off" as MIT reads it. */
function dnsLookupKdc(config: Krb5Config): boolean {
  const lib = config.sections.get("libdefaults");
  const v = values(lib, "dns_lookup_kdc")[0] ?? values(lib, "dns_fallback")[0];
  return v === undefined || !/^(false|no|n|0|off|nil)$/i.test(v.trim());
}

/** The primary KDCs of a realm ([realms] primary_kdc, or its old name master_kdc); [] when none is named. */
export function primaryKdcsOf(config: Krb5Config, realm: string): KdcAddress[] {
  const section = realmSection(config, realm);
  return [...values(section, "primary_kdc"), ...values(section, "master_kdc")].map(parseKdcAddress);
}

// ---------------------------------------------------------------------------------------------------
// Credentials and the exchanges

/** A ticket and its session key, as an AS or TGS exchange (or a ccache) gives them. Times are ms since the epoch. */
export interface KerberosCredential {
  readonly client: Principal;
  readonly server: Principal;
  readonly key: KeyBlock;
  readonly ticket: Ticket;
  readonly flags: number;
  readonly authTime: number;
  readonly startTime: number;
  readonly endTime: number;
  readonly renewTill: number | undefined;
}

/** Where the client's long-term key comes from in the AS exchange. */
export type ClientKeySource = { readonly keytab: Keytab } | { readonly password: string };

export interface KdcContext extends KdcTransportOptions {
  readonly config: Krb5Config;
  /** Milliseconds since the epoch (the client's clock). */
  readonly now: () => number;
  /** The KDCs of a realm (default: krb5.conf's [realms] REALM kdc entries). */
  readonly kdcsFor?: (realm: string) => readonly KdcAddress[];
  /** Called with each request and reply (for tests and traces: these bytes carry no long-term key). */
  readonly onMessage?: (direction: "request" | "reply", bytes: Uint8Array) => void;
}

const toName = (p: Principal): PrincipalName => ({ nameType: p.nameType, components: p.components });
const nameString = (n: PrincipalName, realm: string): string => principalToString({ ...n, realm });
const sameName = (a: PrincipalName, b: Principal | PrincipalName): boolean => a.components.length === b.components.length && a.components.every((c, i) => c === b.components[i]);

/** The TGS principal of a realm: krbtgt/REALM@REALM. */
export const tgsPrincipal = (realm: string): Principal => ({ nameType: NameType.SRV_INST, components: ["krbtgt", realm], realm });

/** A 31-bit nonce (some KDCs mishandle the top bit). */
export const newNonce = (): number => new DataView(randomBytes(4).buffer).getUint32(0) & 0x7fffffff;

async function exchange(ctx: KdcContext, realm: string, request: Uint8Array): Promise<KdcRep | KrbErrorMessage> {
  const kdcs = ctx.kdcsFor ? ctx.kdcsFor(realm) : await locateKdcs(ctx.config, realm, ctx.resolveSrv);
  ctx.onMessage?.("request", request);
  // krb5.conf's kdc_timeout and max_retries, where it has them, over the client's own bound and single try.
  const timing = kdcTimingOf(ctx.config, realm);
  const reply = await sendToKdcs(kdcs, realm, request, {
    ...ctx, timeoutMs: timing.timeoutMs ?? ctx.timeoutMs, tries: timing.tries ?? ctx.tries, udpPreferenceLimit: ctx.udpPreferenceLimit ?? ctx.config.udpPreferenceLimit,
  });
  ctx.onMessage?.("reply", reply);
  let decoded;
  try {
    decoded = decodeKdcReply(reply);
  } catch (e) {
    throw new KerberosError(KerberosErrorReason.BadReply, `the KDC of realm ${realm} sent a malformed reply: ${(e as Error).message}`, { cause: e });
  }
  return decoded.kind === "error" ? decoded.error : decoded.rep;
}

const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** The KerberosError for a KRB-ERROR from a KDC; `about` names the principals of the request. */
export function kdcError(e: KrbErrorMessage, about: { client: string; server: string; keyInfo?: string; sentTime?: Date }): KerberosError {
  const eText = e.eText === undefined ? "" : printableText(e.eText);
  const text = eText !== "" ? `: ${eText}` : "";
  const code = e.errorCode;
  const name = krbErrorName(code);
  switch (code) {
    case 6:
      return new KerberosError(KerberosErrorReason.ClientUnknown, `the KDC does not know the client principal ${about.client} (${name})${text}`, { code });
    case 7:
      return new KerberosError(KerberosErrorReason.ServiceUnknown, `the KDC does not know the service principal ${about.server} (${name})${text}`, { code });
    case 24:
    case 31:
    case 41:
      return new KerberosError(
        KerberosErrorReason.BadKey,
        `pre-authentication of ${about.client} failed (${name}): the KDC did not accept ${about.keyInfo ?? "the key"}; a wrong key, or a stale keytab whose key version is not the KDC's${text}`,
        { code },
      );
    case 37: {
      const ours = e.ctime ?? about.sentTime;
      const diff = ours === undefined ? "" : `, a difference of ${Math.round(Math.abs(e.stime.getTime() - ours.getTime()) / 1000)} s`;
      return new KerberosError(
        KerberosErrorReason.ClockSkew,
        `clock skew too great (${name}) for ${about.client} → ${about.server}: the KDC's time is ${iso(e.stime)}, ours was ${ours === undefined ? "not echoed" : iso(ours)}${diff}${text}`,
        { code },
      );
    }
    case 32:
      return new KerberosError(KerberosErrorReason.Expired, `the ticket of ${about.client} has expired (${name}); get a new TGT (kinit, or a keytab)${text}`, { code });
    case 14:
      return new KerberosError(
        KerberosErrorReason.KdcError,
        `the KDC has no key of a supported enctype for ${about.client} → ${about.server} (${name}); this client supports aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha1-96, aes256-cts-hmac-sha384-192 and aes128-cts-hmac-sha256-128${text}`,
        { code },
      );
    default:
      return new KerberosError(KerberosErrorReason.KdcError, `the KDC refused ${about.client} → ${about.server} with ${name}${text}`, { code });
  }
}

function badReply(message: string, cause?: unknown): KerberosError {
  return new KerberosError(KerberosErrorReason.BadReply, message, { cause });
}

/** Decrypts and decodes an enc-part; a DerError or bad input becomes BadReply, an integrity failure is returned to the caller's message. */
function openEncPart(key: KeyBlock, usage: number, cipher: Uint8Array, what: string, onIntegrity: () => KerberosError): EncKdcRepPart & { tag: 25 | 26 } {
  let plain: Uint8Array;
  try {
    plain = enctype(key.enctype).decrypt(key.key, usage, cipher);
  } catch (e) {
    if (e instanceof KrbCryptoError && e.reason === KrbCryptoErrorReason.Integrity) throw onIntegrity();
    if (e instanceof KrbCryptoError) throw badReply(`${what}: ${e.message}`, e);
    throw e;
  }
  try {
    return decodeEncKdcRepPart(plain);
  } catch (e) {
    if (e instanceof DerError) throw badReply(`${what} decrypted to malformed data: ${e.message}`, e);
    throw e;
  }
}

function credentialFrom(rep: KdcRep, enc: EncKdcRepPart): KerberosCredential {
  return {
    client: { nameType: rep.cname.nameType, components: rep.cname.components, realm: rep.crealm },
    server: { nameType: enc.sname.nameType, components: enc.sname.components, realm: enc.srealm },
    key: enc.key,
    ticket: rep.ticket,
    flags: enc.flags,
    authTime: enc.authTime.getTime(),
    startTime: (enc.startTime ?? enc.authTime).getTime(),
    endTime: enc.endTime.getTime(),
    renewTill: enc.renewTill?.getTime(),
  };
}

/** Whether `sname@srealm` is a TGT that `srealm`'s KDC gives for another realm: krbtgt/OTHER@srealm, OTHER not srealm. */
export function isReferralTgt(sname: PrincipalName, srealm: string): boolean {
  return sname.components.length === 2 && sname.components[0] === "krbtgt" && sname.components[1] !== srealm;
}

function checkRep(rep: KdcRep, enc: EncKdcRepPart, nonce: number, client: Principal, server: Principal, what: string, referral = false): void {
  if (enc.nonce !== nonce) throw badReply(`${what}: the nonce does not match the request's (a replayed or misdirected reply)`);
  if (rep.crealm !== client.realm || !sameName(rep.cname, client)) {
    throw badReply(`${what} is for ${nameString(rep.cname, rep.crealm)}, not ${principalToString(client)}`);
  }
  if (enc.srealm !== server.realm || !sameName(enc.sname, server)) {
    const got = nameString(enc.sname, enc.srealm);
    // A TGT of the realm asked, for another realm: a referral (RFC 6806), or a KDC's nearer hop on a cross-realm path.
    const referred = enc.srealm === server.realm && isReferralTgt(enc.sname, enc.srealm) && sameName(rep.ticket.sname, enc.sname) && rep.ticket.realm === enc.srealm;
    if (referral && referred) {
      if (!isSupportedEnctype(enc.key.enctype)) throw badReply(`${what}: the session key is of ${enctypeName(enc.key.enctype)}, which is not supported`);
      return;
    }
    if (enc.sname.components[0] === "krbtgt" && server.components[0] !== "krbtgt") {
      throw badReply(`${what}: the KDC referred the request for ${principalToString(server)} to another realm (${got}), which was not asked for`);
    }
    throw badReply(`${what} is a ticket for ${got}, not ${principalToString(server)}`);
  }
  if (!isSupportedEnctype(enc.key.enctype)) throw badReply(`${what}: the session key is of ${enctypeName(enc.key.enctype)}, which is not supported`);
}

export interface AsRequest {
  readonly client: Principal;
  readonly credentials: ClientKeySource;
  /** Default: krbtgt/REALM@REALM of the client's realm. */
  readonly server?: Principal;
  /** Requested lifetime in ms (default: krb5.conf's ticket_lifetime, else 24 h; the KDC may shorten it). */
  readonly lifetimeMs?: number;
  /** KDCOptions (default 0). */
  readonly options?: number;
  /** Send PA-ENC-TIMESTAMP in the first request (default false: only after KDC_ERR_PREAUTH_REQUIRED). */
  readonly preauthFirst?: boolean;
  /** The enctypes to offer, in order (default: all supported, strongest first; with a keytab, those it has keys of). */
  readonly enctypes?: readonly number[];
}

interface ChosenKey {
  readonly key: KeyBlock;
  readonly kvno: number | undefined;
}

/**
 * The AS exchange (RFC 4120 §3.1): a TGT (or another ticket) for `client` with a key from a keytab or
 * a password. Without pre-authentication first; on KDC_ERR_PREAUTH_REQUIRED again with
 * PA-ENC-TIMESTAMP (key usage 1) in the enctype (and, for a password, with the salt and s2kparams) of
 * the KDC's PA-ETYPE-INFO2.
 */
export async function asExchange(ctx: KdcContext, req: AsRequest): Promise<KerberosCredential> {
  // As MIT does: a refusal (a wrong key, a failed pre-authentication) from a KDC that is not the realm's
  // primary_kdc is asked of the primary once more — a replica may not have the new key yet after a key rotation.
  let answered: KdcAddress | undefined;
  try {
    return await asOnce({ ...ctx, onAnswer: (k) => { answered = k; ctx.onAnswer?.(k); } }, req);
  } catch (e) {
    if (!(e instanceof KerberosError) || e.reason === KerberosErrorReason.KdcUnreachable || e.reason === KerberosErrorReason.Config || answered === undefined) throw e;
    if (ctx.kdcsFor !== undefined) throw e;
    const realm = req.client.realm;
    const primaries = primaryKdcsOf(ctx.config, realm);
    const from = answered;
    if (primaries.length === 0 || primaries.some((p) => p.host.toLowerCase() === from.host.toLowerCase() && p.port === from.port)) throw e;
    try {
      return await asOnce({ ...ctx, kdcsFor: () => primaries }, req);
    } catch (again) {
      // The primary unreachable: the replica's answer is the one to report (as MIT does).
      throw again instanceof KerberosError && again.reason === KerberosErrorReason.KdcUnreachable ? e : again;
    }
  }
}

async function asOnce(ctx: KdcContext, req: AsRequest): Promise<KerberosCredential> {
  const client = req.client;
  const server = req.server ?? tgsPrincipal(client.realm);
  const cs = principalToString(client);
  const ss = principalToString(server);
  const offered = offeredEnctypes(req.credentials, client, req.enctypes);
  const lifetime = req.lifetimeMs ?? ctx.config.ticketLifetimeMs;
  let padata: PaData[] = [];
  let chosen: ChosenKey | undefined;
  let info: EtypeInfo2Entry[] = [];
  let sentTime: Date | undefined;
  if (req.preauthFirst) {
    chosen = keyFor(req.credentials, client, offered[0], undefined, undefined, undefined);
    sentTime = new Date(ctx.now());
    padata = [encTimestamp(chosen, ctx.now())];
  }
  for (let round = 0; round < 3; round++) {
    const nonce = newNonce();
    const now = ctx.now();
    const body: KdcReqBody = {
      options: req.options ?? 0,
      cname: toName(client),
      realm: client.realm,
      sname: toName(server),
      from: undefined,
      till: new Date(now + lifetime),
      rtime: undefined,
      nonce,
      etypes: offered,
    };
    const reply = await exchange(ctx, client.realm, encodeKdcReq(MsgType.AS_REQ, padata, body));
    if ("errorCode" in reply) {
      if (reply.errorCode === 25 && round < 2) {
        const methods = methodData(reply);
        info = etypeInfo(methods);
        const pick = info.find((e) => offered.includes(e.etype));
        if (pick === undefined && info.length > 0) {
          throw new KerberosError(
            KerberosErrorReason.NoKey,
            `the KDC asks ${cs} to pre-authenticate with ${info.map((e) => enctypeName(e.etype)).join(", ")}, but the ${"keytab" in req.credentials ? "keytab has keys of" : "client supports"} ${offered.map(enctypeName).join(", ") || "no supported enctype"}`,
            { code: 25 },
          );
        }
        chosen = keyFor(req.credentials, client, pick?.etype ?? offered[0], pick?.salt, pick?.s2kparams, undefined);
        sentTime = new Date(ctx.now());
        padata = [encTimestamp(chosen, ctx.now())];
        const cookie = methods.find((m) => m.type === PaType.FX_COOKIE);
        if (cookie !== undefined) padata.push(cookie);
        continue;
      }
      if (reply.errorCode === 25) throw kdcError(reply, { client: cs, server: ss });
      throw kdcError(reply, { client: cs, server: ss, keyInfo: chosen ? keyInfo(chosen) : undefined, sentTime });
    }
    if (reply.msgType !== MsgType.AS_REP) throw badReply(`the KDC answered an AS-REQ for ${cs} with a TGS-REP`);
    // The reply key: the enc-part's enctype and kvno; a password key uses the salt of the reply's padata.
    const repInfo = etypeInfo(reply.padata);
    const salt = repInfo.find((e) => e.etype === reply.encPart.etype) ?? info.find((e) => e.etype === reply.encPart.etype);
    const replyKey = chosen !== undefined && chosen.key.enctype === reply.encPart.etype && (reply.encPart.kvno === undefined || chosen.kvno === undefined || chosen.kvno === reply.encPart.kvno)
      ? chosen
      : keyFor(req.credentials, client, reply.encPart.etype, salt?.salt, salt?.s2kparams, reply.encPart.kvno);
    const enc = openEncPart(replyKey.key, KeyUsage.AS_REP_ENC_PART, reply.encPart.cipher, `the AS-REP for ${cs}`, () =>
      new KerberosError(
        KerberosErrorReason.BadKey,
        `the AS-REP for ${cs} does not decrypt with ${keyInfo(replyKey)}${reply.encPart.kvno !== undefined ? ` (the KDC used key version ${reply.encPart.kvno})` : ""}: a wrong key or password, or a stale keytab whose key version is not the KDC's`,
      ),
    );
    checkRep(reply, enc, nonce, client, server, `the AS-REP for ${cs}`);
    return credentialFrom(reply, enc);
  }
  throw badReply(`the KDC kept asking ${cs} for pre-authentication`);
}

function keyInfo(k: ChosenKey): string {
  return `the key of ${enctypeName(k.key.enctype)}${k.kvno !== undefined ? ` (key version ${k.kvno})` : ""}`;
}

function offeredEnctypes(src: ClientKeySource, client: Principal, wanted: readonly number[] = SUPPORTED_ENCTYPES): number[] {
  for (const et of wanted) if (!isSupportedEnctype(et)) enctype(et); // throws naming it
  if ("password" in src) return [...wanted];
  const mine = src.keytab.entries.filter((e) => e.principal.realm === client.realm && sameName(e.principal, client));
  if (mine.length === 0) {
    throw new KerberosError(KerberosErrorReason.NoKey, `the keytab has no key for ${principalToString(client)}`);
  }
  const list = wanted.filter((et) => mine.some((e) => e.key.enctype === et));
  if (list.length === 0) {
    const have = [...new Set(mine.map((e) => e.key.enctype))].map(enctypeName).join(", ");
    throw new KerberosError(KerberosErrorReason.NoKey, `the keytab's keys for ${principalToString(client)} are of ${have}; none is supported (use aes256-cts-hmac-sha1-96, aes128-cts-hmac-sha1-96, aes256-cts-hmac-sha384-192 or aes128-cts-hmac-sha256-128)`);
  }
  return list;
}

function keyFor(src: ClientKeySource, client: Principal, etype: number, salt: string | undefined, s2kparams: Uint8Array | undefined, kvno: number | undefined): ChosenKey {
  if ("password" in src) {
    const e = enctype(etype);
    const s = salt ?? `${client.realm}${client.components.join("")}`;
    try {
      return { key: new KeyBlock(etype, e.stringToKey(src.password, s, s2kparams ?? null)), kvno: undefined };
    } catch (err) {
      if (err instanceof KrbCryptoError) throw badReply(`the KDC's string-to-key parameters for ${enctypeName(etype)} are unusable: ${err.message}`, err);
      throw err;
    }
  }
  const entries = keysFor(src.keytab, client, { enctypes: [etype], ...(kvno !== undefined ? { kvno } : {}) });
  if (entries.length === 0) {
    const versions = [...new Set(keysFor(src.keytab, client).map((e) => e.kvno))];
    const all = src.keytab.entries.filter((e) => e.principal.realm === client.realm && sameName(e.principal, client) && e.key.enctype === etype).map((e) => e.kvno);
    const what = kvno !== undefined ? `key version ${kvno} of ${enctypeName(etype)}` : enctypeName(etype);
    throw new KerberosError(
      KerberosErrorReason.BadKey,
      `the keytab has no ${what} for ${principalToString(client)} (it has ${all.length > 0 ? `key versions ${[...new Set(all)].join(", ")} of that enctype` : `key version${versions.length > 1 ? "s" : ""} ${versions.join(", ")} of other enctypes`}): a stale keytab whose key version is not the KDC's`,
    );
  }
  return { key: entries[0].key, kvno: entries[0].kvno };
}

function encTimestamp(k: ChosenKey, nowMs: number): PaData {
  const ts = encodePaEncTsEnc({ time: new Date(nowMs), usec: (nowMs % 1000) * 1000 });
  const cipher = enctype(k.key.enctype).encrypt(k.key.key, KeyUsage.AS_REQ_PA_ENC_TIMESTAMP, ts);
  // EncryptedData without a kvno (the KDC knows which key the client has).
  return { type: PaType.ENC_TIMESTAMP, value: encodeEncryptedData({ etype: k.key.enctype, kvno: undefined, cipher }) };
}

function methodData(e: KrbErrorMessage): PaData[] {
  if (e.eData === undefined) return [];
  try {
    return decodeMethodData(e.eData);
  } catch (err) {
    if (err instanceof DerError) {
      // Some KDCs put a TYPED-DATA or nothing useful here: pre-authenticate without ETYPE-INFO2.
      return [];
    }
    throw err;
  }
}

function etypeInfo(padata: readonly PaData[]): EtypeInfo2Entry[] {
  const pa = padata.find((p) => p.type === PaType.ETYPE_INFO2);
  if (pa === undefined) return [];
  try {
    return decodeEtypeInfo2(pa.value);
  } catch (err) {
    if (err instanceof DerError) throw badReply(`the KDC's PA-ETYPE-INFO2 is malformed: ${err.message}`, err);
    throw err;
  }
}

export interface TgsRequest {
  /** The TGT (krbtgt/REALM@REALM) and its session key. */
  readonly tgt: KerberosCredential;
  /** The service, e.g. zookeeper/zk1.example.com@EXAMPLE.COM (name type NT-SRV-HST). */
  readonly server: Principal;
  readonly lifetimeMs?: number;
  readonly options?: number;
  /** Put a subkey in the authenticator: the KDC then encrypts the reply with it (key usage 9; default true). */
  readonly subkey?: boolean;
  /** The session key enctypes to offer, in order (default: all supported, strongest first). */
  readonly enctypes?: readonly number[];
  /**
   * Accept, instead of a ticket for `server`, a TGT for another realm from the realm asked (krbtgt/OTHER@THAT):
   * a referral (RFC 6806), or a nearer hop of a cross-realm path. The caller reads where it leads from the result's server.
   */
  readonly referral?: boolean;
}

/** KDCOptions canonicalize (bit 15, RFC 6806): the KDC may answer with a referral TGT toward the service's realm. */
export const KDC_OPT_CANONICALIZE = 0x00010000;

/**
 * KDCOptions renew (bit 30, RFC 4120 §3.3.3, §5.4.1): the ticket of the request's AP-REQ is renewed. It must be
 * renewable and not yet past its end time; the KDC gives it a new end time, its old life from now, never past its
 * renew-till.
 */
export const KDC_OPT_RENEW = 0x00000002;

/** The ticket flag renewable (bit 8, RFC 4120 §5.3), in the 32-bit form of KerberosCredential.flags. */
export const TKT_FLG_RENEWABLE = 0x00800000;

/** Whether `c` may be renewed at `now` (ms since the epoch): flagged renewable, not yet past its end time nor its renew-till. */
export function isRenewable(c: KerberosCredential, now: number): boolean {
  return (c.flags & TKT_FLG_RENEWABLE) !== 0 && c.renewTill !== undefined && now < c.renewTill && now < c.endTime;
}

/**
 * Renews a ticket, usually the TGT (RFC 4120 §3.3.3): a TGS-REQ with the renew option for the ticket's own server,
 * the ticket itself in the AP-REQ, till and rtime its renew-till. Throws KerberosError (expired) when it is not
 * renewable any more (past its end time or its renew-till: a new one is needed, kinit), else as tgsExchange.
 */
export function renewExchange(ctx: KdcContext, ticket: KerberosCredential): Promise<KerberosCredential> {
  // The ticket's forwardable, proxiable, may-postdate and renewable flags asked for again (their KDCOptions bits are
  // the same): without the renewable option, MIT's KDC renews a ticket into one that is not renewable any more.
  return tgsExchange(ctx, { tgt: ticket, server: ticket.server, options: KDC_OPT_RENEW | (ticket.flags & KEPT_FLAGS) });
}

/** Ticket flags that are KDCOptions of the same bit: forwardable (1), proxiable (3), may-postdate (5), renewable (8). */
const KEPT_FLAGS = 0x40000000 | 0x10000000 | 0x04000000 | TKT_FLG_RENEWABLE;

/**
 * The TGS exchange (RFC 4120 §3.3): a service ticket from a TGT. The PA-TGS-REQ AP-REQ's authenticator
 * (key usage 7) carries the checksum (key usage 6) of the req-body's DER.
 */
export async function tgsExchange(ctx: KdcContext, req: TgsRequest): Promise<KerberosCredential> {
  const { tgt, server } = req;
  const cs = principalToString(tgt.client);
  const ss = principalToString(server);
  const now = ctx.now();
  if (tgt.endTime <= now) {
    throw new KerberosError(KerberosErrorReason.Expired, `the TGT of ${cs} expired at ${iso(new Date(tgt.endTime))}; get a new one (kinit, or a keytab)`);
  }
  const renew = ((req.options ?? 0) & KDC_OPT_RENEW) !== 0;
  if (renew && !isRenewable(tgt, now)) {
    const till = tgt.renewTill;
    throw new KerberosError(
      KerberosErrorReason.Expired,
      (tgt.flags & TKT_FLG_RENEWABLE) === 0 || till === undefined
        ? `the ticket of ${cs} for ${ss} is not renewable; get a new one (kinit, or a keytab)`
        : `the ticket of ${cs} for ${ss} was renewable until ${iso(new Date(till))}; get a new one (kinit, or a keytab)`,
    );
  }
  const nonce = newNonce();
  const lifetime = req.lifetimeMs ?? ctx.config.ticketLifetimeMs;
  const body: KdcReqBody = {
    options: req.options ?? 0,
    cname: undefined,
    realm: server.realm,
    sname: toName(server),
    from: undefined,
    // A renewal: the KDC sets the end time (the old life from now, within renew-till); till and rtime say renew-till.
    till: renew && tgt.renewTill !== undefined ? new Date(tgt.renewTill) : new Date(Math.min(now + lifetime, tgt.endTime)),
    rtime: renew && tgt.renewTill !== undefined ? new Date(tgt.renewTill) : undefined,
    nonce,
    etypes: [...(req.enctypes ?? SUPPORTED_ENCTYPES)],
  };
  for (const et of body.etypes) if (!isSupportedEnctype(et)) enctype(et);
  const bodyBytes = encodeKdcReqBody(body);
  const sessionType = enctype(tgt.key.enctype);
  const subkey = req.subkey === false ? undefined : new KeyBlock(tgt.key.enctype, sessionType.randomKey());
  const ctime = new Date(Math.floor(now / 1000) * 1000);
  const authenticator = encodeAuthenticator({
    crealm: tgt.client.realm,
    cname: toName(tgt.client),
    cksum: { type: sessionType.checksumType, value: sessionType.checksum(tgt.key.key, KeyUsage.TGS_REQ_AUTH_CKSUM, bodyBytes) },
    cusec: (now % 1000) * 1000,
    ctime,
    subkey,
    seqNumber: undefined,
  });
  const apReq = encodeApReq(0, tgt.ticket, { etype: tgt.key.enctype, kvno: undefined, cipher: sessionType.encrypt(tgt.key.key, KeyUsage.TGS_REQ_AUTH, authenticator) });
  const tgsRealm = tgt.server.components[1] ?? tgt.server.realm;
  const reply = await exchange(ctx, tgsRealm, encodeKdcReq(MsgType.TGS_REQ, [{ type: PaType.TGS_REQ, value: apReq }], bodyBytes));
  if ("errorCode" in reply) throw kdcError(reply, { client: cs, server: ss, sentTime: ctime, keyInfo: "the TGT's session key" });
  if (reply.msgType !== MsgType.TGS_REP) throw badReply(`the KDC answered a TGS-REQ for ${ss} with an AS-REP`);
  const [key, usage] = subkey !== undefined ? [subkey, KeyUsage.TGS_REP_ENC_PART_SUBKEY] : [tgt.key, KeyUsage.TGS_REP_ENC_PART_SESSION];
  const enc = openEncPart(key, usage, reply.encPart.cipher, `the TGS-REP for ${ss}`, () =>
    badReply(`the TGS-REP for ${ss} does not decrypt with the ${subkey !== undefined ? "authenticator subkey" : "TGT session key"} (key usage ${usage})`),
  );
  checkRep(reply, enc, nonce, tgt.client, server, `the TGS-REP for ${ss}`, req.referral === true);
  return credentialFrom(reply, enc);
}
