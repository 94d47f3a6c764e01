// Service tickets across realms (RFC 4120 §1.2, §3.3.1; RFC 6806 referrals): the client in one realm, the service in
// another that trusts it (a one-way trust suffices: krbtgt/SERVICE@CLIENT in both KDCs, with the same key).
//
// - The service's realm is known (a [domain_realm] mapping, serverRealm, a full principal): the path of realms comes
//   from [capaths] CLIENT = { SERVICE = VIA ... }, else from the realms' hierarchy (A.EXAMPLE.COM → EXAMPLE.COM →
//   B.EXAMPLE.COM; two realms with no common suffix: directly). At each realm of the path its KDC is asked for a TGT
//   to the farthest realm ahead first, then nearer ones (as MIT does): a direct trust is used when there is one, and a
//   KDC may answer with a nearer hop than asked. Then the service realm's KDC is asked for the service.
// - The realm is not known: the client's KDC is asked for the service with the canonicalize option; a KDC that knows
//   the service is elsewhere (AD always, MIT with a [domain_realm] mapping on the KDC) answers with a referral TGT
//   krbtgt/OTHER@THIS, and the request goes on to OTHER's KDC, at most MAX_HOPS times, never to a realm twice.
// Each realm's KDCs come from krb5.conf's [realms] (or SRV records), through kdc.ts.
import { KerberosError, KerberosErrorReason } from "./errors.ts";
import { isReferralTgt, KDC_OPT_CANONICALIZE, tgsExchange, tgsPrincipal, type KdcContext, type KerberosCredential } from "./kdc.ts";
import { capathOf, type Krb5Config } from "./krb5conf.ts";
import { principalToString, type Principal } from "./types.ts";

/** The most cross-realm TGTs and referrals one service ticket may take (MIT's referral limit is 10). */
export const MAX_HOPS = 10;

/** The realms from `client` to `service`, both included: [capaths] when it names the pair, else the hierarchy. */
export function realmPath(config: Krb5Config, client: string, service: string): { readonly realms: readonly string[]; readonly from: "capaths" | "hierarchy" } {
  if (client === service) return { realms: [client], from: "hierarchy" };
  const via = capathOf(config, client, service);
  if (via !== undefined) return { realms: [client, ...via.filter((r) => r !== client && r !== service), service], from: "capaths" };
  return { realms: hierarchicalPath(client, service), from: "hierarchy" };
}

/**
 * RFC 4120 §1.2's hierarchical path: up from `client` one component at a time to the longest common suffix of
 * dot-separated components, then down to `service`. No common suffix: [client, service].
 */
export function hierarchicalPath(client: string, service: string): string[] {
  const a = client.split(".");
  const b = service.split(".");
  let common = 0;
  while (common < a.length && common < b.length && a[a.length - 1 - common] === b[b.length - 1 - common]) common++;
  if (common === 0 || common === a.length && common === b.length) return [client, service];
  const up: string[] = [];
  for (let i = 0; i <= a.length - common; i++) up.push(a.slice(i).join("."));
  const down: string[] = [];
  for (let i = b.length - common - 1; i >= 0; i--) down.push(b.slice(i).join("."));
  // A realm that is the other's parent (EXAMPLE.COM → B.EXAMPLE.COM) is not repeated.
  const path = [...up];
  for (const r of down) if (path[path.length - 1] !== r) path.push(r);
  return path;
}

/** Cross-realm TGTs kept between tickets (the login keeps them until they near their end). */
export interface TgtCache {
  /** A TGT for `principal` (krbtgt/OTHER@THIS) still fresh, if one is kept. */
  get(principal: string): KerberosCredential | undefined;
  /** Keeps a TGT. */
  set(principal: string, cred: KerberosCredential): void;
}

const noCache: TgtCache = { get: () => undefined, set: () => {} };

export interface CrossRealmRequest {
  /** The client's TGT, krbtgt/CLIENT@CLIENT. */
  readonly tgt: KerberosCredential;
  /** The service. Its realm is followed by referrals when `referral` is set, else reached by realmPath. */
  readonly server: Principal;
  /**
   * The service's realm is a guess (no mapping named it): ask the client's KDC with the canonicalize option and
   * follow the referrals it answers with.
   */
  readonly referral?: boolean;
  readonly enctypes?: readonly number[];
  readonly tgts?: TgtCache;
}

const isUnknown = (e: unknown): boolean => e instanceof KerberosError && e.reason === KerberosErrorReason.ServiceUnknown;

/** A service ticket for `server` from the client's TGT, through as many realms as it takes (see the file's head). */
export async function serviceTicketAcross(ctx: KdcContext, req: CrossRealmRequest): Promise<KerberosCredential> {
  const home = req.tgt.client.realm;
  const tgts = req.tgts ?? noCache;
  const who = principalToString(req.tgt.client);
  if (req.referral === true) return followReferrals(ctx, req, { ...req.server, realm: home }, req.tgt, [home]);
  const target = req.server.realm;
  if (target === home) return tgsExchange(ctx, { tgt: req.tgt, server: req.server, enctypes: req.enctypes });
  const { realms, from } = realmPath(ctx.config, home, target);
  const pathText = `${realms.join(" → ")} (by ${from === "capaths" ? "[capaths]" : "the realms' hierarchy; [capaths] names no path"})`;
  let tgt = req.tgt;
  let at = 0;
  for (let hops = 0; at < realms.length - 1; hops++) {
    if (hops >= MAX_HOPS) throw new KerberosError(KerberosErrorReason.TooManyHops, `${who} → ${principalToString(req.server)}: more than ${MAX_HOPS} cross-realm hops on ${pathText}`);
    const here = realms[at];
    const asked: string[] = [];
    let next: { cred: KerberosCredential; index: number } | undefined;
    // The farthest realm ahead first: a direct trust skips the intermediate realms.
    for (let j = realms.length - 1; j > at && next === undefined; j--) {
      const want = tgsPrincipal(realms[j]);
      const name = principalToString({ ...want, realm: here });
      asked.push(name);
      const kept = tgts.get(name);
      if (kept !== undefined) {
        next = { cred: kept, index: j };
        break;
      }
      let cred: KerberosCredential;
      try {
        cred = await tgsExchange(ctx, { tgt, server: { ...want, realm: here }, enctypes: req.enctypes, referral: true });
      } catch (e) {
        if (isUnknown(e)) continue; // no trust to that realm from here: a nearer one
        throw e;
      }
      // The KDC may give a nearer hop than asked (its own capaths): it must lie ahead on the path.
      const to = cred.server.components[1] ?? "";
      const index = realms.indexOf(to, at + 1);
      if (index < 0) {
        throw new KerberosError(KerberosErrorReason.NoRealmPath, `${who} → ${principalToString(req.server)}: the KDC of ${here} gave a TGT for ${to}, which is not ahead on ${pathText}`);
      }
      tgts.set(principalToString(cred.server), cred);
      if (index !== j) tgts.set(name, cred);
      next = { cred, index };
    }
    if (next === undefined) {
      throw new KerberosError(
        KerberosErrorReason.NoRealmPath,
        `no cross-realm path from ${who} to ${principalToString(req.server)}: the KDC of ${here} knows none of ${asked.join(", ")} ` +
          `(KDC_ERR_S_PRINCIPAL_UNKNOWN) on ${pathText}; a trust of ${here} by ${realms[at + 1]} is krbtgt/${realms[at + 1]}@${here} in both realms' KDCs, with the same key`,
        { code: 7 },
      );
    }
    tgt = next.cred;
    at = next.index;
  }
  return tgsExchange(ctx, { tgt, server: req.server, enctypes: req.enctypes });
}

/** Asks `server`'s realm with the canonicalize option; a referral TGT moves the request to the realm it names. */
async function followReferrals(ctx: KdcContext, req: CrossRealmRequest, server: Principal, tgt: KerberosCredential, visited: string[]): Promise<KerberosCredential> {
  const who = principalToString(req.tgt.client);
  for (;;) {
    const cred = await tgsExchange(ctx, { tgt, server, enctypes: req.enctypes, options: KDC_OPT_CANONICALIZE, referral: true });
    if (!isReferralTgt(cred.server, cred.server.realm) || req.server.components[0] === "krbtgt") return cred;
    const to = cred.server.components[1] ?? "";
    if (visited.includes(to)) {
      throw new KerberosError(KerberosErrorReason.TooManyHops, `${who} → ${principalToString(req.server)}: the KDC of ${server.realm} referred back to ${to} (referrals ${[...visited, to].join(" → ")})`);
    }
    if (visited.length > MAX_HOPS) {
      throw new KerberosError(KerberosErrorReason.TooManyHops, `${who} → ${principalToString(req.server)}: more than ${MAX_HOPS} referrals (${visited.join(" → ")} → ${to})`);
    }
    visited.push(to);
    tgt = cred;
    server = { ...server, realm: to };
  }
}
