// The client's Kerberos identity (RFC 4120): krb5.conf, a keytab or a FILE ccache, the TGT and the service
// tickets, cached and renewed as their end nears (80% of their life by default), fetched through the KDC
// exchanges of kdc.ts. It reads files; its network is the KdcDialer and UdpExchange it is given.
//
// A ccache's renewable TGT is renewed (a TGS-REQ with the renew option) past 80% of its life, never past its
// renew-till, and the renewed TGT kept in memory: the ccache file is never written. A TGT in the file that ends
// later (the user's kinit -R, k5start) is taken instead. With keepRenewed, a timer on the given clock renews it
// while nobody logs in, so a long session finds it alive at its next reconnect; close() stops it.
//
//   const login = new KerberosLogin({ keytab, principal, krb5Config, now, dial, udp });   // sync, reads files
//   const cred  = await login.serviceTicket("zookeeper", host);   // AS/TGS as needed; cached, renewed
import { existsSync } from "node:fs";
import * as process from "node:process"; // a namespace import: the CommonJS build has no default-import interop
import { CcacheError, KerberosError, KerberosErrorReason } from "./errors.ts";
import { serviceTicketAcross, type TgtCache } from "./crossrealm.ts";
import { asExchange, isRenewable, renewExchange, runtimeTimers, tgsPrincipal, type KdcContext, type KdcTransportOptions, type KerberosCredential } from "./kdc.ts";
import { ccacheFilePath, defaultCcachePath, loadCcache, type Credential } from "./ccache.ts";
import { loadKeytab, samePrincipal, type Keytab } from "./keytab.ts";
import { loadKrb5Conf, realmOfHost, type Krb5Config } from "./krb5conf.ts";
import { decodeTicket } from "./messages.ts";
import { NameType, principalToString, type Principal } from "./types.ts";


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
  /** A FILE ccache written by kinit (default: $KRB5CCNAME, else krb5.conf's default_ccache_name, else /tmp/krb5cc_<uid>), used without a keytab. */
  readonly ccache?: string;
  /** A krb5.conf path or a parsed config (default: $KRB5_CONFIG, else /etc/krb5.conf). */
  readonly krb5Config?: string | Krb5Config;
  /** Milliseconds since the epoch (default: Date.now; the client passes its clock's wall time). */
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
  /**
   * Keep a ccache's renewable TGT renewed on the clock's timers (past `renewAt` of its life, until its renew-till)
   * between logins, not only when a login needs it; close() stops it (default false).
   */
  readonly keepRenewed?: boolean;
  /** Told of each renewal of the ccache's TGT: the TGT before and after (its times are the news; no key is logged). */
  readonly onRenew?: (before: KerberosCredential, after: KerberosCredential) => void;
}

/** The longest wait of the renewal timer: it wakes at least this often to read the wall clock again (a step, a suspend). */
const RENEW_CHECK_MS = 300_000;

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
  /** Cross-realm TGTs (krbtgt/OTHER@THIS) by principal, kept while fresh. */
  readonly #crossTickets = new Map<string, KerberosCredential>();
  readonly #crossTgts: TgtCache = {
    get: (name) => {
      const c = this.#crossTickets.get(name);
      return c !== undefined && this.#fresh(c) ? c : undefined;
    },
    set: (name, c) => void this.#crossTickets.set(name, c),
  };
  /**
   * A service ticket was had before: from then on a ccache that cannot be read or holds no valid TGT is taken
   * to be in the middle of a rewrite (kinit, k5start) or a renewal, a transient failure; before, a definite one.
   */
  #served = false;
  /** The ccache's TGT as renewed by this login (in memory only), while it is newer than the file's. */
  #renewed: KerberosCredential | undefined;
  #renewing: Promise<KerberosCredential> | undefined;
  /** The ccache TGT last in use (the renewed one, else the file's): what the renewal timer watches. */
  #current: KerberosCredential | undefined;
  readonly #keepRenewed: boolean;
  readonly #onRenew: KerberosLoginOptions["onRenew"];
  #timer: unknown;
  #closed = false;
  /** Aborts a background renewal at close(). */
  readonly #halt = new AbortController();

  constructor(o: KerberosLoginOptions) {
    const env = o.env ?? process.env;
    this.config = typeof o.krb5Config === "object" ? o.krb5Config : loadKrb5Conf(o.krb5Config, env);
    const now = o.now ?? Date.now;
    this.#renewAt = o.renewAt ?? 0.8;
    this.#enctypes = o.enctypes;
    this.#keepRenewed = o.keepRenewed === true;
    this.#onRenew = o.onRenew;
    if (o.keytab !== undefined) {
      this.#keytab = loadKeytab(o.keytab);
      if (o.principal !== undefined) this.principal = parsePrincipal(o.principal, this.config.defaultRealm);
      else {
        const first = this.#keytab.entries[0];
        if (first === undefined) throw new KerberosError(KerberosErrorReason.NoKey, "the keytab is empty");
        this.principal = first.principal;
      }
    } else {
      this.#ccachePath = o.ccache !== undefined ? ccacheFilePath(o.ccache, "the ccache option") : defaultCcachePath(env, undefined, this.config.defaultCcacheName);
      const from = o.ccache !== undefined ? "the ccache option" : env.KRB5CCNAME ? "$KRB5CCNAME" : this.config.defaultCcacheName ? "krb5.conf default_ccache_name" : "the default ccache (no $KRB5CCNAME)";
      const cc = readCcache(this.#ccachePath, from);
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
      resolveSrv: o.resolveSrv,
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

  /** A TGT for the client's realm (from the keytab: cached until it nears its end; from a ccache: renewed past renewAt of its life when renewable). */
  async tgt(signal?: AbortSignal): Promise<KerberosCredential> {
    if (this.#keytab === undefined) return this.#ccacheTgt(signal);
    if (this.#tgt !== undefined && this.#fresh(this.#tgt)) return this.#tgt;
    this.#tgtPending ??= asExchange(signal ? { ...this.#ctx, signal } : this.#ctx, { client: this.principal, credentials: { keytab: this.#keytab }, enctypes: this.#enctypes }).finally(() => {
      this.#tgtPending = undefined;
    });
    this.#tgt = await this.#tgtPending;
    return this.#tgt;
  }

  /** A service ticket for serviceName/serviceHost (cached; renewed as its end nears). */
  serviceTicket(serviceName: string, serviceHost: string, signal?: AbortSignal): Promise<KerberosCredential> {
    return this.ticketFor(this.servicePrincipal(serviceName, serviceHost), signal);
  }

  /**
   * A service ticket for `server` (cached; renewed as its end nears). In another realm than the client's, through
   * cross-realm TGTs ([capaths], else the realms' hierarchy; crossrealm.ts). `referral`: the server's realm is only a
   * guess (no mapping named it): the client's KDC is asked with the canonicalize option, and its referrals followed.
   */
  async ticketFor(server: Principal, signal?: AbortSignal, options: { readonly referral?: boolean } = {}): Promise<KerberosCredential> {
    const cred = await this.#ticketFor(server, signal, options.referral === true);
    this.#served = true;
    return cred;
  }

  async #ticketFor(server: Principal, signal?: AbortSignal, referral = false): Promise<KerberosCredential> {
    const name = `${principalToString(server)}${referral ? " (referral)" : ""}`;
    const cached = this.#tickets.get(name);
    if (cached !== undefined && this.#fresh(cached)) return cached;
    if (this.#keytab === undefined) {
      const fromCache = this.#ccacheTicket(server);
      if (fromCache !== undefined) return fromCache;
    }
    let cred: KerberosCredential;
    try {
      const tgt = await this.tgt(signal);
      cred = await serviceTicketAcross(signal ? { ...this.#ctx, signal } : this.#ctx, { tgt, server, enctypes: this.#enctypes, referral, tgts: this.#crossTgts });
    } catch (e) {
      // Renewing early, with no KDC answering: the ticket in hand still works until its end time.
      if (cached !== undefined && e instanceof KerberosError && e.reason === KerberosErrorReason.KdcUnreachable && this.#ctx.now() < cached.endTime - 60_000) return cached;
      throw e;
    }
    this.#tickets.set(name, cred);
    return cred;
  }

  /** Drops the cached tickets (the next serviceTicket() goes to the KDC; a ccache's TGT renewed in memory is kept). */
  forget(): void {
    this.#tgt = undefined;
    this.#tickets.clear();
    this.#crossTickets.clear();
  }

  /** Stops the renewal timer (keepRenewed) and any renewal under way; the login still serves tickets on demand. */
  close(): void {
    this.#closed = true;
    this.#halt.abort(new Error("the Kerberos login was closed"));
    if (this.#timer !== undefined) (this.#ctx.clock ?? runtimeTimers).clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #ccacheCreds(): Credential[] {
    const path = this.#ccachePath ?? "";
    try {
      return [...loadCcache(path).credentials];
    } catch (e) {
      // Truncated (being rewritten in place), or gone for a moment (replaced by a rename): CcacheError either way.
      if (e instanceof CcacheError) throw new KerberosError(KerberosErrorReason.Expired, `cannot use the ccache ${path}: ${e.message}`, { cause: e, transient: this.#served });
      throw e;
    }
  }

  #ccacheTicket(server: Principal): KerberosCredential | undefined {
    const now = this.#ctx.now();
    let creds: Credential[];
    try {
      creds = this.#ccacheCreds();
    } catch (e) {
      // The file being rewritten: a TGT renewed here and still valid gets the service ticket (#ccacheTgt).
      if (this.#renewed === undefined || now >= this.#renewed.endTime) throw e;
      return undefined;
    }
    this.#pickTgt(creds); // the renewal timer watches the TGT even while the ccache's service ticket is used
    for (const c of creds) {
      if (samePrincipal(c.client, this.principal) && samePrincipal(c.server, server) && c.endTime * 1000 > now + 60_000) return fromCcache(c);
    }
    return undefined;
  }

  /** The TGT to use of the file's (`creds`) and the one renewed in memory: the later-ending; arms the renewal timer for it. */
  #pickTgt(creds: readonly Credential[] | undefined): KerberosCredential | undefined {
    const now = this.#ctx.now();
    if (this.#renewed !== undefined && now >= this.#renewed.endTime) this.#renewed = undefined;
    const want = tgsPrincipal(this.principal.realm);
    let file: Credential | undefined;
    for (const c of creds ?? []) {
      if (samePrincipal(c.client, this.principal) && samePrincipal(c.server, want) && (file === undefined || c.endTime > file.endTime)) file = c;
    }
    // A newer TGT in the file (the user's kinit -R, k5start) wins over the one renewed here.
    if (file !== undefined && this.#renewed !== undefined && file.endTime * 1000 > this.#renewed.endTime) this.#renewed = undefined;
    const tgt = this.#renewed ?? (file !== undefined ? fromCcache(file) : undefined);
    this.#current = tgt;
    if (this.#timer === undefined) this.#schedule();
    return tgt;
  }

  async #ccacheTgt(signal?: AbortSignal): Promise<KerberosCredential> {
    let creds: Credential[] | undefined;
    try {
      creds = this.#ccacheCreds();
    } catch (e) {
      // The file being rewritten (kinit, k5start): a TGT renewed here and still valid does without it.
      if (this.#renewed === undefined || this.#ctx.now() >= this.#renewed.endTime) throw e;
    }
    const tgt = this.#pickTgt(creds);
    const now = this.#ctx.now();
    if (tgt !== undefined && extendable(tgt, now)) {
      if (this.#fresh(tgt)) return tgt;
      try {
        return await this.#renew(tgt, signal);
      } catch (e) {
        // Not renewed (the KDC down, or refusing): the TGT still serves while a good part of its life is left.
        if (usable(tgt, now)) return tgt;
        if (e instanceof KerberosError && e.transient) throw e;
        throw this.#expired(tgt.endTime, `; renewing it failed: ${(e as Error).message}`);
      }
    }
    if (tgt !== undefined && usable(tgt, now)) return tgt;
    throw this.#expired(tgt?.endTime);
  }

  #expired(endTime: number | undefined, more = ""): KerberosError {
    return new KerberosError(
      KerberosErrorReason.Expired,
      endTime === undefined
        ? `the ccache ${this.#ccachePath} has no TGT for ${principalToString(this.principal)}; run kinit`
        : `the TGT of ${principalToString(this.principal)} in the ccache ${this.#ccachePath} expired at ${new Date(endTime).toISOString()}${more}; run kinit`,
      { transient: this.#served },
    );
  }

  /** Renews the ccache's TGT (one renewal at a time) and keeps the result in memory; the file is not written. */
  #renew(tgt: KerberosCredential, signal?: AbortSignal): Promise<KerberosCredential> {
    this.#renewing ??= renewExchange(signal ? { ...this.#ctx, signal } : this.#ctx, tgt)
      .then((renewed) => {
        this.#renewed = renewed;
        this.#current = renewed;
        this.#schedule();
        this.#onRenew?.(tgt, renewed);
        return renewed;
      })
      .finally(() => {
        this.#renewing = undefined;
      });
    return this.#renewing;
  }

  /**
   * keepRenewed: a timer for the current TGT's renewal, past renewAt of its life (at most RENEW_CHECK_MS away, to read
   * the wall clock again); when that moment has passed (a renewal failed), again in a quarter of what is left of it,
   * between 1 s and 1 min. Nothing to renew (not renewable, past renew-till or its end): no timer; the next login looks again.
   */
  #schedule(): void {
    if (!this.#keepRenewed || this.#closed || this.#keytab !== undefined) return;
    const timers = this.#ctx.clock ?? runtimeTimers;
    if (this.#timer !== undefined) timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    const tgt = this.#current;
    const now = this.#ctx.now();
    if (tgt === undefined || !extendable(tgt, now)) return;
    const due = tgt.startTime + (tgt.endTime - tgt.startTime) * this.#renewAt;
    const wait = due > now ? Math.min(RENEW_CHECK_MS, due - now) : Math.min(60_000, Math.max(1000, (tgt.endTime - now) / 4));
    this.#timer = timers.setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed) return;
      this.#ccacheTgt(this.#halt.signal).then(
        () => this.#schedule(),
        () => this.#schedule(), // the next login reports it; the timer tries again while there is something to renew
      );
    }, Math.ceil(wait));
  }
}

/** Renewable, and a renewal would move its end: it ends before its renew-till. */
const extendable = (c: KerberosCredential, now: number): boolean => isRenewable(c, now) && c.endTime < (c.renewTill ?? 0);

/** A TGT to get service tickets with: a minute of its life left, or a fifth of a shorter one. */
const usable = (c: KerberosCredential, now: number): boolean => c.endTime - now > Math.min(60_000, (c.endTime - c.startTime) / 5);

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
