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
