// SASL GSSAPI (RFC 4752) for ZooKeeper's SASL exchange: the client's side of the Kerberos layer
// (src/kerberos). It wires the layer to the session — the session's dialer for TCP to the KDC, the
// UDP socket of transport/udp.ts, the session's clock for timeouts and wall time — and drives the GSS-API
// context through the RFC 4752 exchange. exchange.ts loads this file (and with it all of src/kerberos) by
// the first GSSAPI connection only.
//
// The exchange (RFC 4752 §3.1):
//   initial(): the GSS initial context token (the AP-REQ);
//   with mutual authentication: step(AP-REP token) verifies it and answers an empty token;
//   step(wrap token of 4 bytes: the server's security layers and buffer size) verifies its checksum
//   (acceptor key usage 22) and answers a wrap token of [01 00 00 00] + the authorization id: "no
//   security layer", integrity only;
//   step(final, empty) → null; complete.
import * as dns from "node:dns";
import type { HostPort } from "../../protocol/connect-string.ts";
import { DerError, KerberosError, KerberosErrorReason, KrbCryptoError } from "../../kerberos/errors.ts";
import { acceptApRep, initSecContext, unwrap, wrap, type InitiatorStart } from "../../kerberos/gss.ts";
import { udpExchange, type KdcDialer, type KerberosCredential, type Timers } from "../../kerberos/kdc.ts";
import { realmOfHost } from "../../kerberos/krb5conf.ts";
import { KerberosLogin, parsePrincipal, type KerberosLoginOptions } from "../../kerberos/login.ts";
import { NameType, principalToString, type Principal } from "../../kerberos/types.ts";
import type { KerberosResolver, SrvRecord } from "../types.ts";
import { SaslError, SaslErrorReason } from "./errors.ts";
import type { SaslMechanism } from "./mechanism.ts";
import { isIpAddress } from "../transport/transport.ts";
import { openDatagram } from "../transport/udp.ts";

const MECH = "GSSAPI";

/** What the session gives a login: its dialer and timers, the wall time on its clock, the timeout of one KDC attempt. */
export interface SessionKdcAccess {
  /** The session's Transport as a dialer (TCP to the KDC goes through it, like the connection to ZooKeeper). */
  readonly dial: KdcDialer;
  /** The session's clock (its timers bound each KDC attempt). */
  readonly clock: Timers;
  /** ms since the epoch on the session's clock. */
  readonly now: () => number;
  /** How long one KDC attempt (one host, one protocol) may take. */
  readonly timeoutMs: number;
}

/** A KerberosLogin for a session: UDP through transport/udp.ts, TCP through the session's dialer, its clock; KDC SRV records through `resolver`. */
export function sessionLogin(
  options: Omit<KerberosLoginOptions, "dial" | "udp" | "clock" | "now" | "timeoutMs" | "resolveSrv">, session: SessionKdcAccess, resolver: KerberosResolver = {},
): KerberosLogin {
  return new KerberosLogin({ ...options, ...session, udp: udpExchange(openDatagram), resolveSrv: systemResolver(resolver).resolveSrv });
}

/** A KerberosResolver with each method it leaves out taken from the system's (node:dns). */
export function systemResolver(r: KerberosResolver): Required<KerberosResolver> {
  return {
    lookup: r.lookup?.bind(r) ?? (async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address)),
    reverse: r.reverse?.bind(r) ?? (async (address, port) => (await dns.promises.lookupService(address, port)).hostname),
    resolveSrv: r.resolveSrv?.bind(r) ?? ((name): Promise<SrvRecord[]> => dns.promises.resolveSrv(name)),
  };
}

/** A host as the server's principal names it, and the address it was named from (the one the attempt must dial). */
export interface CanonicalHost {
  /** The host part of the principal (as found: not yet in lower case). */
  readonly name: string;
  /**
   * The address of a connect-string name that `name` belongs to: the attempt dials it, so that the server it reaches
   * is the one `name` names. Absent for an IP address (dialed as it is) and when the name did not resolve (nor in time).
   */
  readonly address?: string;
}

/** Resolves a connect-string host name to its addresses (ConnectOptions.resolver, else KerberosResolver.lookup). */
export type AddressLookup = (host: string) => Promise<readonly string[]>;

/** Which of a name's addresses (at least one) an attempt dials. */
export type AddressPick = (host: string, addresses: readonly string[]) => string;

/** Where an attempt's address comes from. */
export interface AttemptAddresses {
  /** A name's addresses (default: the resolver's lookup). */
  readonly lookup?: AddressLookup;
  /** Which one the attempt dials (default: one at random). */
  readonly pick?: AddressPick;
}

/**
 * Picks one of a name's addresses at random, as the Java client's host provider does at each attempt, but not one
 * already dialed until every address of the name has had its turn (per name): with one of two servers down (or a
 * family a server does not listen on), the next attempt goes to the other.
 */
export function addressTurns(random: () => number = Math.random): AddressPick {
  const dialed = new Map<string, Set<string>>();
  return (host, addresses) => {
    let seen = dialed.get(host);
    if (seen === undefined) dialed.set(host, (seen = new Set()));
    for (const a of seen) if (!addresses.includes(a)) seen.delete(a); // the name moved: only its current addresses count
    let left = addresses.filter((a) => !seen.has(a));
    if (left.length === 0) {
      seen.clear();
      left = [...addresses];
    }
    const address = left[Math.floor(random() * left.length)]!;
    seen.add(address);
    return address;
  };
}

/**
 * The connect-string host canonicalized as the Java client does (SaslServerPrincipal with
 * zookeeper.sasl.client.canonicalize.hostname, from the address StaticHostProvider picked for the attempt): a
 * name's addresses (`via.lookup`, default `resolver.lookup`), one of them (`via.pick`, default at random: the one
 * the attempt dials), that address's name, if that name resolves back to the address (as Java's
 * getCanonicalHostName checks); else the host as written. Never throws; with `limit`, a resolver that has not
 * answered within `limit.ms` gives the host as written too (and no address).
 */
export function canonicalHost(
  target: HostPort, resolver: Required<KerberosResolver>, limit?: { clock: Timers; ms: number }, via: AttemptAddresses = {},
): Promise<CanonicalHost> {
  const work = resolveCanonical(target, resolver, via);
  if (limit === undefined) return work;
  return new Promise((resolve) => {
    const timer = limit.clock.setTimeout(() => resolve({ name: target.host }), limit.ms);
    void work.then((found) => {
      limit.clock.clearTimeout(timer);
      resolve(found);
    });
  });
}

async function resolveCanonical(target: HostPort, resolver: Required<KerberosResolver>, via: AttemptAddresses): Promise<CanonicalHost> {
  const host = target.host;
  let address = host;
  if (!isIpAddress(host)) {
    let found: unknown;
    try {
      found = await (via.lookup ?? resolver.lookup)(host);
    } catch {
      return { name: host };
    }
    const usable = Array.isArray(found) ? found.filter((a): a is string => typeof a === "string" && a !== "") : [];
    if (usable.length === 0) return { name: host };
    address = (via.pick ?? ((_, all) => all[Math.floor(Math.random() * all.length)]!))(host, usable);
  }
  const pinned = address === host ? {} : { address };
  try {
    const name = (await resolver.reverse(address, target.port)).replace(/\.$/, "");
    if (name === "" || isIpAddress(name)) return { name: host, ...pinned };
    const back = await resolver.lookup(name);
    return { name: back.includes(address) ? name : host, ...pinned };
  } catch {
    return { name: host, ...pinned };
  }
}

/**
 * The host as the Java client names it with zookeeper.sasl.client.canonicalize.hostname=false: an IP address
 * still by its name (the socket address's getHostName(): the reverse name, if it resolves back to the address),
 * a name as written, except one that its canonical name only lengthens ("zk" whose canonical name is
 * "zk.example.com"), which Java's Kerberos library (sun.security.krb5 PrincipalName, a host-based service) expands
 * (by its own lookup: the attempt's address is not pinned).
 */
async function expandedHost(target: HostPort, resolver: Required<KerberosResolver>, limit?: { clock: Timers; ms: number }): Promise<string> {
  const { name } = await canonicalHost(target, resolver, limit);
  if (isIpAddress(target.host)) return name;
  return name.toLowerCase().startsWith(`${target.host.toLowerCase()}.`) ? name : target.host;
}

/** How the server's principal is chosen (the GSSAPI options of ConnectOptions.sasl). */
export interface ServerPrincipalOptions {
  /** Default "zookeeper". */
  readonly serviceName?: string;
  /** A fixed host part. */
  readonly serviceHost?: string;
  /** Default true. */
  readonly canonicalizeHostname?: boolean;
  /** A full principal; "_HOST" is replaced by the host. */
  readonly serverPrincipal?: string;
  /** The realm when the principal names none. */
  readonly serverRealm?: string;
}

/** A server's principal; `referral`: its realm is the client's by default only, to be corrected by the KDC's referrals. */
export type ServerPrincipal = Principal & { readonly referral: boolean };

/**
 * The principal of the server at `target`: `serverPrincipal` with "_HOST" replaced, else serviceName/host;
 * the host is `serviceHost`, else the target's host canonicalized (unless turned off), in lower case; the realm
 * the principal's own, else `serverRealm`, else [domain_realm]'s for the host, else the client's (then `referral`:
 * the client's KDC is asked with the canonicalize option and may refer the request to the service's realm).
 * `address`: the address of the target's name the principal was named from, which the attempt must dial (canonicalization
 * on); `via`: where that address comes from.
 */
export async function serverPrincipalFor(
  o: ServerPrincipalOptions, login: KerberosLogin, target: HostPort, resolver: Required<KerberosResolver>, limit?: { clock: Timers; ms: number },
  via?: AttemptAddresses,
): Promise<{ server: ServerPrincipal; address?: string }> {
  const full = o.serverPrincipal;
  const needHost = full === undefined || full.includes("_HOST");
  let found: CanonicalHost = { name: o.serviceHost ?? target.host };
  if (o.serviceHost === undefined && needHost) {
    found = o.canonicalizeHostname !== false ? await canonicalHost(target, resolver, limit, via) : { name: await expandedHost(target, resolver, limit) };
  }
  const host = found.name.toLowerCase();
  const pinned = found.address === undefined ? {} : { address: found.address };
  const mapped = o.serverRealm ?? realmOfHost(login.config, host);
  const realm = mapped ?? login.principal.realm;
  if (full === undefined) return { server: { nameType: NameType.SRV_HST, components: [o.serviceName ?? "zookeeper", host], realm, referral: mapped === undefined }, ...pinned };
  const named = /(^|[^\\])@/.test(full);
  const p = parsePrincipal(full.replaceAll("_HOST", host), realm);
  const referral = mapped === undefined && !named;
  return { server: p.components.length === 2 ? { ...p, nameType: NameType.SRV_HST, referral } : { ...p, referral }, ...pinned };
}

export interface GssapiMechanismOptions {
  /** The service ticket (from KerberosLogin.serviceTicket). */
  readonly credential: KerberosCredential;
  /** ms since the epoch, read when initial() builds the authenticator (default: Date.now). */
  readonly now?: () => number;
  /** Ask for mutual authentication (default true: the server's AP-REP is verified). */
  readonly mutual?: boolean;
  /** The authorization id sent in the last token (default: the client principal; ZooKeeper ignores it). */
  readonly authzid?: string;
  /** The address the connection is to dial: the one the server's principal was named from (from serverPrincipalFor). */
  readonly address?: string;
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
  const now = o.now ?? Date.now;
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
    ...(o.address === undefined ? {} : { address: o.address }),
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
