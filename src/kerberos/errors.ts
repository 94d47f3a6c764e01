// Typed errors of the Kerberos building blocks. Messages name what failed and where (an offset, an
// enctype, a key usage, a field), never a secret: no key, password, ticket, session key, plaintext or
// checksum bytes ever appear in a message.

/** Why a cryptographic operation failed. */
export const KrbCryptoErrorReason = {
  /** The enctype is known but refused (DES, 3DES, RC4, Camellia), or unknown. */
  UnsupportedEnctype: "unsupported-enctype",
  /** A MAC or checksum did not verify: wrong key, wrong key usage, or altered data. */
  Integrity: "integrity",
  /** The input cannot be what it claims to be (a ciphertext too short, a key of the wrong length, bad s2kparams). */
  BadInput: "bad-input",
} as const;
export type KrbCryptoErrorReason = (typeof KrbCryptoErrorReason)[keyof typeof KrbCryptoErrorReason];

export class KrbCryptoError extends Error {
  readonly reason: KrbCryptoErrorReason;
  /** The enctype number involved, when there is one. */
  readonly enctype: number | undefined;

  constructor(reason: KrbCryptoErrorReason, message: string, enctype?: number) {
    super(message);
    this.name = "KrbCryptoError";
    this.reason = reason;
    this.enctype = enctype;
  }
}

/** Malformed, oversized or unexpected DER (ASN.1) input. `offset` is where in the input the problem is. */
export class DerError extends Error {
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(`DER: ${message} at offset ${offset}`);
    this.name = "DerError";
    this.offset = offset;
  }
}

/** A keytab file that cannot be read: truncated, malformed, or of an unknown format version. */
export class KeytabError extends Error {
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(`keytab: ${message} at offset ${offset}`);
    this.name = "KeytabError";
    this.offset = offset;
  }
}

/** A FILE credentials cache that cannot be read: truncated, malformed, or of an unsupported version. */
export class CcacheError extends Error {
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(`ccache: ${message} at offset ${offset}`);
    this.name = "CcacheError";
    this.offset = offset;
  }
}

/** What a Kerberos exchange (KDC, GSS-API context, SASL GSSAPI) failed at. */
export const KerberosErrorReason = {
  /** No KDC of the realm answered (each host:port tried is named, with why: refused, timed out). */
  KdcUnreachable: "kdc-unreachable",
  /** KDC_ERR_C_PRINCIPAL_UNKNOWN: the KDC does not know the client principal. */
  ClientUnknown: "client-unknown",
  /** KDC_ERR_S_PRINCIPAL_UNKNOWN: the KDC does not know the service principal (e.g. zookeeper/host@REALM). */
  ServiceUnknown: "service-unknown",
  /** The key did not work: pre-authentication failed, or a reply did not decrypt (a stale keytab, a wrong password). */
  BadKey: "bad-key",
  /** KRB_AP_ERR_SKEW: the clocks differ by more than the allowed skew (both times are in the message). */
  ClockSkew: "clock-skew",
  /** Tickets (of a ccache) or the TGT have expired: run kinit, or use a keytab. */
  Expired: "expired",
  /** The keytab has no key for the principal (or none of a supported enctype). */
  NoKey: "no-key",
  /** krb5.conf cannot be read or lacks what is needed (the default realm, the realm's kdc). */
  Config: "config",
  /** Any other KRB-ERROR from a KDC or the acceptor (its code and name are in the message). */
  KdcError: "kdc-error",
  /**
   * Cross-realm: no TGT toward the service's realm — no KDC on the path ([capaths], else the realms' hierarchy) has
   * krbtgt/NEXT@THIS for any realm ahead (a one-way trust taken the wrong way, a missing trust, a wrong [capaths]).
   */
  NoRealmPath: "no-realm-path",
  /** Cross-realm: more hops (cross-realm TGTs and referrals) than allowed, or a referral back to a realm already visited. */
  TooManyHops: "too-many-hops",
  /** A reply that is malformed or does not answer the request (wrong nonce, other principal, bad token). */
  BadReply: "bad-reply",
  /** The acceptor could not be authenticated: its AP-REP or a wrap/MIC token did not verify. */
  MutualAuthFailed: "mutual-auth-failed",
} as const;
export type KerberosErrorReason = (typeof KerberosErrorReason)[keyof typeof KerberosErrorReason];

/**
 * KRB-ERROR codes that say "not now" rather than "no": the KDC is busy or not serving (KDC_ERR_SVC_UNAVAILABLE),
 * the reply did not fit (KRB_ERR_RESPONSE_TOO_BIG), a principal not valid yet (KDC_ERR_CLIENT_NOTYET,
 * KDC_ERR_SERVICE_NOTYET), a ticket the KDC found expired (KRB_AP_ERR_TKT_EXPIRED: a new one is fetched),
 * clocks apart (KRB_AP_ERR_SKEW: a stepped clock is read afresh), or an unnamed failure (KRB_ERR_GENERIC).
 */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([21, 22, 29, 32, 37, 52, 60]);

/**
 * Whether a failure of this reason (and KRB-ERROR code) may pass by itself, so that trying again later may
 * succeed: no KDC answered, clocks apart, or a KRB-ERROR of TRANSIENT_CODES. Everything else is a definite
 * refusal (an unknown principal, a wrong key, a keytab without the key, a bad config, a reply that does not
 * verify) and would fail the same way again.
 */
export function transientReason(reason: KerberosErrorReason, code: number | undefined): boolean {
  if (reason === KerberosErrorReason.KdcUnreachable || reason === KerberosErrorReason.ClockSkew) return true;
  return code !== undefined && TRANSIENT_CODES.has(code) && (reason === KerberosErrorReason.KdcError || reason === KerberosErrorReason.Expired);
}

/**
 * A failed Kerberos exchange. `code` is the KRB-ERROR code when a KDC or acceptor sent one. The message
 * names principals, hosts, enctypes, key versions and times, never keys, tickets or authenticators.
 */
export class KerberosError extends Error {
  readonly reason: KerberosErrorReason;
  readonly code: number | undefined;
  /**
   * The failure may pass by itself (a KDC down or busy, clocks apart, a ccache being rewritten by kinit):
   * the client fails this attempt and tries again later. False: a definite refusal, which ends the client.
   * Default: transientReason(reason, code).
   */
  readonly transient: boolean;

  constructor(reason: KerberosErrorReason, message: string, options: { code?: number; cause?: unknown; transient?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "KerberosError";
    this.reason = reason;
    this.code = options.code;
    this.transient = options.transient ?? transientReason(reason, options.code);
  }
}

/** KRB-ERROR codes (RFC 4120 §7.5.9) by number, for messages. */
export const KRB_ERROR_NAMES: Readonly<Record<number, string>> = {
  0: "KDC_ERR_NONE",
  1: "KDC_ERR_NAME_EXP",
  2: "KDC_ERR_SERVICE_EXP",
  3: "KDC_ERR_BAD_PVNO",
  4: "KDC_ERR_C_OLD_MAST_KVNO",
  5: "KDC_ERR_S_OLD_MAST_KVNO",
  6: "KDC_ERR_C_PRINCIPAL_UNKNOWN",
  7: "KDC_ERR_S_PRINCIPAL_UNKNOWN",
  8: "KDC_ERR_PRINCIPAL_NOT_UNIQUE",
  9: "KDC_ERR_NULL_KEY",
  10: "KDC_ERR_CANNOT_POSTDATE",
  11: "KDC_ERR_NEVER_VALID",
  12: "KDC_ERR_POLICY",
  13: "KDC_ERR_BADOPTION",
  14: "KDC_ERR_ETYPE_NOSUPP",
  15: "KDC_ERR_SUMTYPE_NOSUPP",
  16: "KDC_ERR_PADATA_TYPE_NOSUPP",
  17: "KDC_ERR_TRTYPE_NOSUPP",
  18: "KDC_ERR_CLIENT_REVOKED",
  19: "KDC_ERR_SERVICE_REVOKED",
  20: "KDC_ERR_TGT_REVOKED",
  21: "KDC_ERR_CLIENT_NOTYET",
  22: "KDC_ERR_SERVICE_NOTYET",
  23: "KDC_ERR_KEY_EXPIRED",
  24: "KDC_ERR_PREAUTH_FAILED",
  25: "KDC_ERR_PREAUTH_REQUIRED",
  26: "KDC_ERR_SERVER_NOMATCH",
  27: "KDC_ERR_MUST_USE_USER2USER",
  28: "KDC_ERR_PATH_NOT_ACCEPTED",
  29: "KDC_ERR_SVC_UNAVAILABLE",
  31: "KRB_AP_ERR_BAD_INTEGRITY",
  32: "KRB_AP_ERR_TKT_EXPIRED",
  33: "KRB_AP_ERR_TKT_NYV",
  34: "KRB_AP_ERR_REPEAT",
  35: "KRB_AP_ERR_NOT_US",
  36: "KRB_AP_ERR_BADMATCH",
  37: "KRB_AP_ERR_SKEW",
  38: "KRB_AP_ERR_BADADDR",
  39: "KRB_AP_ERR_BADVERSION",
  40: "KRB_AP_ERR_MSG_TYPE",
  41: "KRB_AP_ERR_MODIFIED",
  42: "KRB_AP_ERR_BADORDER",
  44: "KRB_AP_ERR_BADKEYVER",
  45: "KRB_AP_ERR_NOKEY",
  46: "KRB_AP_ERR_MUT_FAIL",
  47: "KRB_AP_ERR_BADDIRECTION",
  48: "KRB_AP_ERR_METHOD",
  49: "KRB_AP_ERR_BADSEQ",
  50: "KRB_AP_ERR_INAPP_CKSUM",
  51: "KRB_AP_PATH_NOT_ACCEPTED",
  52: "KRB_ERR_RESPONSE_TOO_BIG",
  60: "KRB_ERR_GENERIC",
  61: "KRB_ERR_FIELD_TOOLONG",
  68: "KDC_ERR_WRONG_REALM",
};

/** "KDC_ERR_PREAUTH_FAILED (24)", or "KRB-ERROR 99" for a code no one named. */
export function krbErrorName(code: number): string {
  const n = KRB_ERROR_NAMES[code];
  return n === undefined ? `KRB-ERROR ${code}` : `${n} (${code})`;
}

// C0 controls (newlines, ESC), DEL, C1 controls, and the bidirectional marks and overrides that reorder a line.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]+/gu;

/**
 * A peer's text (a KDC's e-text) fit for an error message, a log line or a span status: each run of control
 * characters (C0 with newlines and ESC, DEL, C1) or bidi marks becomes one space, and the text is cut to `max`
 * characters, then "…". A KDC cannot start a fake log line, colour a terminal or flood a message.
 */
export function printableText(text: string, max = 200): string {
  const clean = text.replace(UNPRINTABLE, " ").trim();
  const chars = Array.from(clean);
  return chars.length > max ? `${chars.slice(0, max).join("")}…` : clean;
}
