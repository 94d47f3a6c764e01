// The SASL exchange on a fresh connection (opcode 102, normal xids, before anything else is sent):
// token out, challenge in, until the mechanism is done.
import { type ErrorCode, errorCodeName } from "../../protocol/constants.ts";
import { badArguments } from "../errors.ts";
import type { HostPort } from "../../protocol/connect-string.ts";
import { type Clock, wallTime } from "../clock.ts";
import { digestMd5 } from "./index.ts";
import { KerberosError, KerberosErrorReason } from "../../kerberos/errors.ts";
import type { KerberosCredential } from "../../kerberos/kdc.ts";
import type { KerberosLogin } from "../../kerberos/login.ts";
import type { AddressPick } from "./gssapi.ts";
import { principalToString } from "../../kerberos/types.ts";
import type { Dialer, Resolver } from "../transport/transport.ts";
import type { ConnectOptions, Logger, SaslGssapiOptions } from "../types.ts";

/** A SASL client mechanism: tokens in, tokens out. */
export interface SaslClient {
  initial(): Uint8Array;
  step(challenge: Uint8Array): Uint8Array | null;
  readonly complete: boolean;
  /**
   * The address the connection must dial (GSSAPI with canonicalization: the address of the connect-string name
   * that the server's principal was named from, so the server reached is the one the ticket is for). Absent: the
   * dial resolves the host as usual.
   */
  readonly address?: string;
}

export class SaslRefused extends Error {
  constructor(why: string) {
    super(`SASL authentication failed: ${why}`);
    this.name = "SaslRefused";
  }
}

/**
 * How the exchange puts a token on the wire (the session's send, on the "own" lane of the link being primed):
 * resolves with the server's challenge; rejects SaslRefused when the server answers with an error code, or a
 * CONNECTIONLOSS ZooKeeperError when the link drops.
 */
export type SaslSend = (token: Uint8Array) => Promise<Uint8Array | null>;

/** The refusal of a server that answered a SASL token with error `code`. */
export function saslRejected(code: number): SaslRefused {
  return new SaslRefused(`the server rejected the credentials (${errorCodeName(code as ErrorCode)} ${code})`);
}

/**
 * Runs the exchange. Rejects SaslRefused when the server or the mechanism says no (terminal), or a
 * CONNECTIONLOSS ZooKeeperError when the link drops (worth retrying on another connection).
 */
export async function saslExchange(send: SaslSend, mech: SaslClient): Promise<void> {
  let token = mech.initial();
  for (;;) {
    const challenge = await send(token);
    let next: Uint8Array | null;
    try {
      next = mech.step(challenge ?? new Uint8Array(0));
    } catch (e) {
      throw new SaslRefused((e as Error).message);
    }
    if (next === null) break;
    token = next;
  }
  if (!mech.complete) throw new SaslRefused("the exchange ended early");
}

/** What a mechanism factory may use of the session: its dialer (KDC traffic over TCP goes through the Transport) and clock. */
export interface SaslContext {
  dialer: Dialer;
  clock: Clock;
  /** The session's connectTimeout: a KDC that does not answer must be named before it ends. */
  connectTimeout: number;
  /** The session's logger (GSSAPI: each renewal of a ccache's TGT, on debug). */
  logger?: Logger;
  /** ConnectOptions.resolver: GSSAPI takes a name's addresses from it (else from sasl.resolver's lookup). */
  resolver?: Resolver;
}

/**
 * Makes the SASL client for one connection to `host`. Rejects SaslRefused when the login is definitely refused
 * (terminal: AUTHFAILED), or another Error when the failure may pass (KerberosError.transient: no KDC answered, a
 * KDC busy, clocks apart, a ccache being rewritten): that attempt fails and the session tries again.
 */
export type SaslFactory = ((host: HostPort) => SaslClient | Promise<SaslClient>) & {
  /** The session is closing or has ended: stop what the factory keeps running (GSSAPI: the TGT renewal timer). */
  readonly close?: () => void;
};

/** The mechanism factory for ConnectOptions.sasl (a fresh mechanism per connection). */
export function saslFactory(o: NonNullable<ConnectOptions["sasl"]>, ctx: SaslContext): SaslFactory {
  if (typeof o !== "object" || o === null) throw badArguments("sasl must be an object", "connect");
  if (o.mechanism === "GSSAPI") return gssapiFactory(o, ctx);
  if (o.mechanism !== "DIGEST-MD5") throw badArguments(`unsupported SASL mechanism ${JSON.stringify((o as { mechanism?: unknown }).mechanism)} (DIGEST-MD5 and GSSAPI are supported)`, "connect");
  if (typeof o.username !== "string" || typeof o.password !== "string") throw badArguments("sasl needs a username and a password", "connect");
  const username = o.username;
  const password = o.password;
  const serverName = o.serverName ?? "zk-sasl-md5";
  return () => digestMd5({ username, password, protocol: "zookeeper", serverName });
}

const optionalString = (o: SaslGssapiOptions, k: "principal" | "ccache" | "krb5Config" | "serviceName" | "serviceHost" | "serverPrincipal" | "serverRealm"): void => {
  const v = o[k];
  if (v !== undefined && (typeof v !== "string" || v === "")) throw badArguments(`sasl.${k} must be a non-empty string`, "connect");
};

/**
 * GSSAPI: one KerberosLogin per client (made at the first connection, so a missing keytab or ccache is an
 * AUTHFAILED that names it), its tickets cached and renewed; the service ticket for serviceName/serviceHost
 * fetched before each exchange (from the cache while it is fresh).
 */
function gssapiFactory(o: SaslGssapiOptions, ctx: SaslContext): SaslFactory {
  for (const k of ["principal", "ccache", "krb5Config", "serviceName", "serviceHost", "serverPrincipal", "serverRealm"] as const) optionalString(o, k);
  if (o.canonicalizeHostname !== undefined && typeof o.canonicalizeHostname !== "boolean") throw badArguments("sasl.canonicalizeHostname must be a boolean", "connect");
  if (o.resolver !== undefined && (typeof o.resolver !== "object" || o.resolver === null)) throw badArguments("sasl.resolver must be an object", "connect");
  if (o.keytab !== undefined && typeof o.keytab !== "string" && !(o.keytab instanceof Uint8Array)) throw badArguments("sasl.keytab must be a path or the keytab's bytes", "connect");
  const options = { principal: o.principal, keytab: o.keytab, ccache: o.ccache, krb5Config: o.krb5Config };
  const serviceName = o.serviceName ?? "zookeeper";
  const now = wallTime(ctx.clock);
  // One KDC attempt (one host, one protocol: UDP then TCP) gets a quarter of the connect timeout, at most
  // the usual 3 s, so that a silent KDC (a UDP datagram into the void) is named within the connect timeout.
  const timeoutMs = Math.max(250, Math.min(3000, Math.floor(ctx.connectTimeout / 4)));
  let login: KerberosLogin | undefined;
  let closed = false;
  let pick: AddressPick | undefined; // a name's addresses dialed in turn, across this client's attempts
  const iso = (ms: number): string => new Date(ms).toISOString();
  // A ccache's renewable TGT is kept renewed between reconnects (in memory; the file is not written).
  const onRenew = (before: KerberosCredential, after: KerberosCredential): void =>
    ctx.logger?.debug(
      `Kerberos: renewed the TGT of ${principalToString(after.client)} (in memory; the ccache is not written): it ended ${iso(before.endTime)}, now ${iso(after.startTime)} to ${iso(after.endTime)}, renewable until ${after.renewTill === undefined ? "-" : iso(after.renewTill)}`,
    );
  const factory = async (host: HostPort): Promise<SaslClient> => {
    let service = o.serverPrincipal ?? `${serviceName}/${o.serviceHost ?? host.host}`;
    try {
      // The Kerberos client (src/kerberos: crypto, DER, keytab and ccache readers, KDC exchange, the UDP socket) is
      // loaded by the first GSSAPI connection: a client without Kerberos neither parses it nor keeps it in its heap (about 2 MB).
      const krb = await import("./gssapi.ts");
      const resolver = krb.systemResolver(o.resolver ?? {});
      login ??= krb.sessionLogin({ ...options, keepRenewed: true, onRenew }, { now, dial: ctx.dialer, clock: ctx.clock, timeoutMs }, resolver);
      if (closed) login.close();
      // The principal of the server at the address this attempt dials (a name's addresses: ConnectOptions.resolver's, else sasl.resolver's).
      pick ??= krb.addressTurns();
      const via = { pick, ...(ctx.resolver === undefined ? {} : { lookup: ctx.resolver }) };
      const { server, address } = await krb.serverPrincipalFor({ ...o, serviceName }, login, host, resolver, { clock: ctx.clock, ms: timeoutMs }, via);
      service = principalToString(server);
      const l = login;
      // A stepped wall clock costs one retry: the second request reads the time afresh.
      const referral = { referral: server.referral };
      const credential = await l.ticketFor(server, undefined, referral).catch((e: unknown) => {
        if (e instanceof KerberosError && e.reason === KerberosErrorReason.ClockSkew) return l.ticketFor(server, undefined, referral);
        throw e;
      });
      return krb.gssapiMechanism({ credential, now, address });
    } catch (e) {
      const who = login ? principalToString(login.principal) : (o.principal ?? (o.keytab !== undefined ? "the keytab's principal" : "the ccache's principal"));
      const message = `Kerberos login of ${who} for ${service} failed: ${(e as Error).message}`;
      // A failure that may pass (no KDC answered, a KDC busy, clocks apart, a ccache being rewritten): this attempt
      // failed, the session stays disconnected and tries again at its usual pace (the connect timeout's message names it).
      if (e instanceof KerberosError && e.transient) throw new Error(message, { cause: e });
      // A definite refusal (an unknown principal, a wrong key, a missing keytab or ccache at the first login, a
      // malformed reply) would fail the same way again: the client ends (authFailed).
      throw new SaslRefused(message);
    }
  };
  return Object.assign(factory, {
    close: (): void => {
      closed = true;
      login?.close();
    },
  });
}
