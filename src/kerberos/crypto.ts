// Kerberos 5 cryptosystems on node:crypto only: the RFC 3961 framework (n-fold, DR/DK key derivation of
// the simplified profile, key usages), the AES enctypes of RFC 3962 (aes128/aes256-cts-hmac-sha1-96:
// PBKDF2-HMAC-SHA1 string-to-key, AES-CTS, HMAC-SHA1-96) and those of RFC 8009
// (aes128-cts-hmac-sha256-128, aes256-cts-hmac-sha384-192: KDF-HMAC-SHA2, encrypt-then-MAC).
// DES, 3DES, RC4 and Camellia are refused with an error that names the enctype.
//
// Only AES-CBC (aes-128-cbc / aes-256-cbc without padding), HMAC and PBKDF2 of node:crypto are used, so
// the same code runs under Node, Bun and Deno. Keys, passwords and plaintexts never reach an error message.
import { createCipheriv, createDecipheriv, createHmac, pbkdf2Sync, randomBytes } from "node:crypto";
import { concatBytes } from "../protocol/bytes.ts";
import { KrbCryptoError, KrbCryptoErrorReason } from "./errors.ts";

/** Checksum type numbers of the supported enctypes' mandatory checksums. */
export const ChecksumTypes = {
  HMAC_SHA1_96_AES128: 15,
  HMAC_SHA1_96_AES256: 16,
  HMAC_SHA256_128_AES128: 19,
  HMAC_SHA384_192_AES256: 20,
} as const;

/** Names of enctypes this module knows, supported or not (MIT krb5's names). */
const ENCTYPE_NAMES: Readonly<Record<number, string>> = {
  1: "des-cbc-crc",
  2: "des-cbc-md4",
  3: "des-cbc-md5",
  16: "des3-cbc-sha1",
  17: "aes128-cts-hmac-sha1-96",
  18: "aes256-cts-hmac-sha1-96",
  19: "aes128-cts-hmac-sha256-128",
  20: "aes256-cts-hmac-sha384-192",
  23: "rc4-hmac",
  24: "rc4-hmac-exp",
  25: "camellia128-cts-cmac",
  26: "camellia256-cts-cmac",
};

/** The supported enctypes, strongest first (the order a client should offer them in). */
export const SUPPORTED_ENCTYPES: readonly number[] = [18, 20, 17, 19];

const SUPPORTED_LIST = "aes256-cts-hmac-sha1-96 (18), aes256-cts-hmac-sha384-192 (20), aes128-cts-hmac-sha1-96 (17) or aes128-cts-hmac-sha256-128 (19)";

/** "aes256-cts-hmac-sha1-96 (18)", or "enctype 99" for a number no one named. */
export function enctypeName(n: number): string {
  const name = ENCTYPE_NAMES[n];
  return name === undefined ? `enctype ${n}` : `${name} (${n})`;
}

export function isSupportedEnctype(n: number): boolean {
  return SUPPORTED_ENCTYPES.includes(n);
}

/** A cryptosystem (RFC 3961 §3) for one enctype. Keys are raw key bytes (the keyblock contents). */
export interface Enctype {
  readonly id: number;
  readonly name: string;
  /** Key length in bytes (16 or 32). */
  readonly keyLength: number;
  /** The mandatory checksum type of this enctype (RFC 3961 §4 "required checksum mechanism"). */
  readonly checksumType: number;
  /** Checksum and MAC length in bytes (12, 16 or 24). */
  readonly checksumLength: number;
  /** Iteration count used when no s2kparams are given (4096 for RFC 3962, 32768 for RFC 8009). */
  readonly defaultIterations: number;
  /**
   * RFC 3961 string-to-key. `params` are the s2kparams (4-byte big-endian iteration count, e.g. from
   * ETYPE-INFO2) or an iteration count; default: defaultIterations. Strings are encoded as UTF-8.
   */
  stringToKey(password: string | Uint8Array, salt: string | Uint8Array, params?: Uint8Array | number | null): Uint8Array;
  /** The derived key for a usage: "Kc" (checksum), "Ke" (encryption) or "Ki" (integrity). */
  deriveKey(key: Uint8Array, usage: number, kind: DerivedKeyKind): Uint8Array;
  /** Encrypts with a fresh random confounder (tests may pin it; 16 bytes). */
  encrypt(key: Uint8Array, usage: number, plaintext: Uint8Array, confounder?: Uint8Array): Uint8Array;
  /** Verifies the integrity and decrypts; throws KrbCryptoError (reason "integrity") on a bad MAC. */
  decrypt(key: Uint8Array, usage: number, ciphertext: Uint8Array): Uint8Array;
  /** The keyed checksum (of checksumType) over data. */
  checksum(key: Uint8Array, usage: number, data: Uint8Array): Uint8Array;
  /** Throws KrbCryptoError (reason "integrity") unless cksum is the checksum of data. */
  verifyChecksum(key: Uint8Array, usage: number, data: Uint8Array, cksum: Uint8Array): void;
  /** A new random key of this enctype (for subkeys). */
  randomKey(): Uint8Array;
}

export type DerivedKeyKind = "Kc" | "Ke" | "Ki";

const KIND_OCTET: Readonly<Record<DerivedKeyKind, number>> = { Kc: 0x99, Ke: 0xaa, Ki: 0x55 };

const BLOCK = 16;
/**
 * The largest string-to-key iteration count accepted (from s2kparams, i.e. from the KDC's ETYPE-INFO2):
 * 2^24 - 1, MIT krb5's own ceiling (it refuses 2^24 and more). PBKDF2 runs synchronously; at 2^24 a KDC
 * could hold the client's event loop for tens of seconds.
 */
export const MAX_S2K_ITERATIONS = (1 << 24) - 1;

// ---------------------------------------------------------------------------------------------------
// RFC 3961 primitives

/** RFC 3961 §5.1 n-fold: folds input to `outBytes` bytes (13-bit rotations, ones'-complement addition). */
export function nfold(input: Uint8Array, outBytes: number): Uint8Array {
  if (input.length === 0 || outBytes <= 0 || !Number.isInteger(outBytes)) {
    throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, "n-fold needs a non-empty input and a positive output length");
  }
  const inBits = input.length * 8;
  const total = lcm(input.length, outBytes);
  const bit = (i: number): number => (input[i >>> 3] >>> (7 - (i & 7))) & 1;
  // The input repeated total/input.length times, copy c rotated right by 13*c bits.
  const expanded = new Uint8Array(total);
  for (let c = 0; c < total / input.length; c++) {
    const rot = (13 * c) % inBits;
    for (let j = 0; j < input.length; j++) {
      let byte = 0;
      for (let b = 0; b < 8; b++) {
        const src = (((j * 8 + b - rot) % inBits) + inBits) % inBits;
        byte = (byte << 1) | bit(src);
      }
      expanded[c * input.length + j] = byte;
    }
  }
  // Ones'-complement addition of the outBytes-long chunks (big-endian, end-around carry).
  const out = new Uint8Array(outBytes);
  for (let at = 0; at < total; at += outBytes) {
    let carry = 0;
    for (let i = outBytes - 1; i >= 0; i--) {
      const s = out[i] + expanded[at + i] + carry;
      out[i] = s & 0xff;
      carry = s >>> 8;
    }
    while (carry !== 0) {
      for (let i = outBytes - 1; i >= 0 && carry !== 0; i--) {
        const s = out[i] + carry;
        out[i] = s & 0xff;
        carry = s >>> 8;
      }
    }
  }
  return out;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
const lcm = (a: number, b: number): number => (a / gcd(a, b)) * b;

function aesAlgorithm(key: Uint8Array): string {
  if (key.length === 16) return "aes-128-cbc";
  if (key.length === 32) return "aes-256-cbc";
  throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `an AES key must be 16 or 32 bytes, not ${key.length}`);
}

/** AES-CBC without padding; `data` must be a whole number of blocks. */
function cbc(encrypt: boolean, key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  const c = encrypt ? createCipheriv(aesAlgorithm(key), key, iv) : createDecipheriv(aesAlgorithm(key), key, iv);
  c.setAutoPadding(false);
  const a = c.update(data);
  const b = c.final();
  return b.length === 0 ? new Uint8Array(a) : concatBytes(a, b);
}

const ZERO_IV = new Uint8Array(BLOCK);

/** One raw AES block operation (CBC with a zero IV over one block is the block cipher itself). */
const aesBlockEncrypt = (key: Uint8Array, block: Uint8Array): Uint8Array => cbc(true, key, ZERO_IV, block);
const aesBlockDecrypt = (key: Uint8Array, block: Uint8Array): Uint8Array => cbc(false, key, ZERO_IV, block);

/**
 * AES in CBC mode with ciphertext stealing as RFC 3962 §5 defines it (the last two blocks swapped,
 * the final one truncated). Input of exactly one block is plain CBC; shorter input is refused.
 */
export function aesCtsEncrypt(key: Uint8Array, iv: Uint8Array, plaintext: Uint8Array): Uint8Array {
  const n = plaintext.length;
  if (n < BLOCK) throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `AES-CTS needs at least ${BLOCK} bytes, got ${n}`);
  if (n === BLOCK) return cbc(true, key, iv, plaintext);
  const blocks = Math.ceil(n / BLOCK);
  const padded = new Uint8Array(blocks * BLOCK);
  padded.set(plaintext);
  const c = cbc(true, key, iv, padded);
  const tail = n - (blocks - 1) * BLOCK; // 1..16 bytes in the final (partial) block
  const out = new Uint8Array(n);
  out.set(c.subarray(0, (blocks - 2) * BLOCK));
  out.set(c.subarray((blocks - 1) * BLOCK, blocks * BLOCK), (blocks - 2) * BLOCK); // C_n first
  out.set(c.subarray((blocks - 2) * BLOCK, (blocks - 2) * BLOCK + tail), (blocks - 1) * BLOCK); // then C_{n-1}, truncated
  return out;
}

export function aesCtsDecrypt(key: Uint8Array, iv: Uint8Array, ciphertext: Uint8Array): Uint8Array {
  const n = ciphertext.length;
  if (n < BLOCK) throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `AES-CTS needs at least ${BLOCK} bytes, got ${n}`);
  if (n === BLOCK) return cbc(false, key, iv, ciphertext);
  const blocks = Math.ceil(n / BLOCK);
  const tail = n - (blocks - 1) * BLOCK;
  const out = new Uint8Array(n);
  const head = ciphertext.subarray(0, (blocks - 2) * BLOCK);
  if (head.length > 0) out.set(cbc(false, key, iv, head));
  const prev = head.length > 0 ? head.subarray(head.length - BLOCK) : iv;
  const cn = ciphertext.subarray((blocks - 2) * BLOCK, (blocks - 1) * BLOCK); // the real last block C_n
  const cPartial = ciphertext.subarray((blocks - 1) * BLOCK); // C_{n-1}, truncated to `tail` bytes
  const d = aesBlockDecrypt(key, cn); // = C_{n-1} xor (P_n padded with zeros)
  const cPrev = new Uint8Array(BLOCK);
  cPrev.set(cPartial);
  cPrev.set(d.subarray(tail), tail);
  for (let i = 0; i < tail; i++) out[(blocks - 1) * BLOCK + i] = d[i] ^ cPartial[i];
  const pPrev = aesBlockDecrypt(key, cPrev);
  for (let i = 0; i < BLOCK; i++) out[(blocks - 2) * BLOCK + i] = pPrev[i] ^ prev[i];
  return out;
}

/** RFC 3961 §5.1 DR(Key, Constant) for AES: encrypt the n-folded constant repeatedly, keep keyLength bytes. */
function dr(key: Uint8Array, constant: Uint8Array, outBytes: number): Uint8Array {
  const out = new Uint8Array(outBytes);
  let block = constant.length === BLOCK ? constant : nfold(constant, BLOCK);
  for (let at = 0; at < outBytes; at += BLOCK) {
    block = aesBlockEncrypt(key, block);
    out.set(block.subarray(0, Math.min(BLOCK, outBytes - at)), at);
  }
  return out;
}

/** RFC 8009 §3 KDF-HMAC-SHA2(key, label, k): the first k bits of HMAC(key, 00000001 | label | 00 | k). */
function kdfHmacSha2(hash: "sha256" | "sha384", key: Uint8Array, label: Uint8Array, bits: number): Uint8Array {
  const input = new Uint8Array(4 + label.length + 1 + 4);
  const v = new DataView(input.buffer);
  v.setUint32(0, 1);
  input.set(label, 4);
  v.setUint32(4 + label.length + 1, bits);
  return hmac(hash, key, input).slice(0, bits / 8);
}

function hmac(hash: string, key: Uint8Array, ...data: Uint8Array[]): Uint8Array {
  const h = createHmac(hash, key);
  for (const d of data) h.update(d);
  return new Uint8Array(h.digest()); // a copy: results never share a Buffer's (possibly pooled) memory
}

function usageConstant(usage: number, octet: number): Uint8Array {
  if (!Number.isInteger(usage) || usage < 0 || usage > 0xffffffff) {
    throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `key usage ${usage} is not an unsigned 32-bit integer`);
  }
  const c = new Uint8Array(5);
  new DataView(c.buffer).setUint32(0, usage);
  c[4] = octet;
  return c;
}

/** Compares in time independent of where the first difference is. */
function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}


const utf8 = (s: string | Uint8Array): Uint8Array => (typeof s === "string" ? new TextEncoder().encode(s) : s);

function iterationCount(e: { id: number; defaultIterations: number }, params: Uint8Array | number | null | undefined): number {
  let n: number;
  if (params === undefined || params === null) return e.defaultIterations;
  if (typeof params === "number") n = params;
  else {
    if (params.length === 0) return e.defaultIterations;
    if (params.length !== 4) {
      throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `s2kparams for ${enctypeName(e.id)} must be 4 bytes, got ${params.length}`, e.id);
    }
    n = new DataView(params.buffer, params.byteOffset, 4).getUint32(0);
  }
  if (!Number.isInteger(n) || n < 1 || n > MAX_S2K_ITERATIONS) {
    throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `string-to-key iteration count ${n} for ${enctypeName(e.id)} is outside 1..${MAX_S2K_ITERATIONS} (MIT krb5's ceiling)`, e.id);
  }
  return n;
}

function randomConfounder(given: Uint8Array | undefined, id: number): Uint8Array {
  if (given === undefined) {
    return new Uint8Array(randomBytes(BLOCK));
  }
  if (given.length !== BLOCK) {
    throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `a confounder for ${enctypeName(id)} is ${BLOCK} bytes, got ${given.length}`, id);
  }
  return given;
}

// ---------------------------------------------------------------------------------------------------
// The enctypes

abstract class AesEnctype implements Enctype {
  abstract readonly id: number;
  abstract readonly name: string;
  abstract readonly keyLength: number;
  abstract readonly checksumType: number;
  abstract readonly checksumLength: number;
  abstract readonly defaultIterations: number;

  abstract stringToKey(password: string | Uint8Array, salt: string | Uint8Array, params?: Uint8Array | number | null): Uint8Array;
  abstract deriveKey(key: Uint8Array, usage: number, kind: DerivedKeyKind): Uint8Array;
  abstract encrypt(key: Uint8Array, usage: number, plaintext: Uint8Array, confounder?: Uint8Array): Uint8Array;
  abstract decrypt(key: Uint8Array, usage: number, ciphertext: Uint8Array): Uint8Array;
  protected abstract mac(key: Uint8Array, data: Uint8Array): Uint8Array;

  protected checkKey(key: Uint8Array): void {
    if (!(key instanceof Uint8Array) || key.length !== this.keyLength) {
      const got = key instanceof Uint8Array ? `${key.length} bytes` : typeof key;
      throw new KrbCryptoError(KrbCryptoErrorReason.BadInput, `a key of ${enctypeName(this.id)} is ${this.keyLength} bytes, got ${got}`, this.id);
    }
  }

  checksum(key: Uint8Array, usage: number, data: Uint8Array): Uint8Array {
    this.checkKey(key);
    return this.mac(this.deriveKey(key, usage, "Kc"), data);
  }

  verifyChecksum(key: Uint8Array, usage: number, data: Uint8Array, cksum: Uint8Array): void {
    if (!equalBytes(this.checksum(key, usage, data), cksum)) {
      throw new KrbCryptoError(KrbCryptoErrorReason.Integrity, `checksum of ${enctypeName(this.id)} (key usage ${usage}) does not verify: wrong key or altered data`, this.id);
    }
  }

  randomKey(): Uint8Array {
    return new Uint8Array(randomBytes(this.keyLength));
  }

  protected integrityError(usage: number): KrbCryptoError {
    return new KrbCryptoError(
      KrbCryptoErrorReason.Integrity,
      `decryption integrity check failed for ${enctypeName(this.id)} (key usage ${usage}): wrong key, wrong key version, or altered ciphertext`,
      this.id,
    );
  }

  protected tooShort(usage: number, n: number): KrbCryptoError {
    return new KrbCryptoError(
      KrbCryptoErrorReason.BadInput,
      `ciphertext of ${enctypeName(this.id)} (key usage ${usage}) is ${n} bytes, shorter than the ${BLOCK + this.checksumLength} of confounder and MAC`,
      this.id,
    );
  }
}

/** RFC 3962: aes128-cts-hmac-sha1-96 (17) and aes256-cts-hmac-sha1-96 (18). */
class AesSha1Enctype extends AesEnctype {
  readonly id: number;
  readonly name: string;
  readonly keyLength: number;
  readonly checksumType: number;
  readonly checksumLength = 12;
  readonly defaultIterations = 4096;

  constructor(id: number, name: string, keyLength: number, checksumType: number) {
    super();
    this.id = id;
    this.name = name;
    this.keyLength = keyLength;
    this.checksumType = checksumType;
  }

  stringToKey(password: string | Uint8Array, salt: string | Uint8Array, params?: Uint8Array | number | null): Uint8Array {
    const iterations = iterationCount(this, params);
    const tkey = pbkdf2Sync(utf8(password), utf8(salt), iterations, this.keyLength, "sha1");
    return dr(new Uint8Array(tkey), utf8("kerberos"), this.keyLength);
  }

  deriveKey(key: Uint8Array, usage: number, kind: DerivedKeyKind): Uint8Array {
    this.checkKey(key);
    return dr(key, usageConstant(usage, KIND_OCTET[kind]), this.keyLength);
  }

  protected mac(key: Uint8Array, data: Uint8Array): Uint8Array {
    return hmac("sha1", key, data).slice(0, this.checksumLength);
  }

  encrypt(key: Uint8Array, usage: number, plaintext: Uint8Array, confounder?: Uint8Array): Uint8Array {
    this.checkKey(key);
    const p = concatBytes(randomConfounder(confounder, this.id), plaintext);
    const c = aesCtsEncrypt(this.deriveKey(key, usage, "Ke"), ZERO_IV, p);
    return concatBytes(c, this.mac(this.deriveKey(key, usage, "Ki"), p));
  }

  decrypt(key: Uint8Array, usage: number, ciphertext: Uint8Array): Uint8Array {
    this.checkKey(key);
    if (ciphertext.length < BLOCK + this.checksumLength) throw this.tooShort(usage, ciphertext.length);
    const c = ciphertext.subarray(0, ciphertext.length - this.checksumLength);
    const h = ciphertext.subarray(ciphertext.length - this.checksumLength);
    const p = aesCtsDecrypt(this.deriveKey(key, usage, "Ke"), ZERO_IV, c);
    if (!equalBytes(this.mac(this.deriveKey(key, usage, "Ki"), p), h)) throw this.integrityError(usage);
    return p.slice(BLOCK);
  }
}

/** RFC 8009: aes128-cts-hmac-sha256-128 (19) and aes256-cts-hmac-sha384-192 (20). */
class AesSha2Enctype extends AesEnctype {
  readonly id: number;
  readonly name: string;
  readonly keyLength: number;
  readonly checksumType: number;
  readonly checksumLength: number;
  readonly defaultIterations = 32768;
  private readonly hash: "sha256" | "sha384";

  constructor(id: number, name: string, keyLength: number, checksumType: number, hash: "sha256" | "sha384") {
    super();
    this.id = id;
    this.name = name;
    this.keyLength = keyLength;
    this.checksumType = checksumType;
    this.hash = hash;
    this.checksumLength = hash === "sha256" ? 16 : 24;
  }

  stringToKey(password: string | Uint8Array, salt: string | Uint8Array, params?: Uint8Array | number | null): Uint8Array {
    const iterations = iterationCount(this, params);
    // RFC 8009 §4: saltp = enctype-name | 0x00 | salt.
    const saltp = concatBytes(utf8(this.name), new Uint8Array(1), utf8(salt));
    const tkey = pbkdf2Sync(utf8(password), saltp, iterations, this.keyLength, this.hash);
    return kdfHmacSha2(this.hash, new Uint8Array(tkey), utf8("kerberos"), this.keyLength * 8);
  }

  deriveKey(key: Uint8Array, usage: number, kind: DerivedKeyKind): Uint8Array {
    this.checkKey(key);
    // Ke is as long as the key; Kc and Ki as long as the MAC (128 or 192 bits).
    const bits = kind === "Ke" ? this.keyLength * 8 : this.checksumLength * 8;
    return kdfHmacSha2(this.hash, key, usageConstant(usage, KIND_OCTET[kind]), bits);
  }

  protected mac(key: Uint8Array, ...data: Uint8Array[]): Uint8Array {
    return hmac(this.hash, key, ...data).slice(0, this.checksumLength);
  }

  encrypt(key: Uint8Array, usage: number, plaintext: Uint8Array, confounder?: Uint8Array): Uint8Array {
    this.checkKey(key);
    const p = concatBytes(randomConfounder(confounder, this.id), plaintext);
    const c = aesCtsEncrypt(this.deriveKey(key, usage, "Ke"), ZERO_IV, p);
    // Encrypt-then-MAC over the cipher state (the zero IV) and the ciphertext.
    return concatBytes(c, this.mac(this.deriveKey(key, usage, "Ki"), ZERO_IV, c));
  }

  decrypt(key: Uint8Array, usage: number, ciphertext: Uint8Array): Uint8Array {
    this.checkKey(key);
    if (ciphertext.length < BLOCK + this.checksumLength) throw this.tooShort(usage, ciphertext.length);
    const c = ciphertext.subarray(0, ciphertext.length - this.checksumLength);
    const h = ciphertext.subarray(ciphertext.length - this.checksumLength);
    if (!equalBytes(this.mac(this.deriveKey(key, usage, "Ki"), ZERO_IV, c), h)) throw this.integrityError(usage);
    return aesCtsDecrypt(this.deriveKey(key, usage, "Ke"), ZERO_IV, c).slice(BLOCK);
  }
}

const ENCTYPES: ReadonlyMap<number, Enctype> = new Map<number, Enctype>([
  [17, new AesSha1Enctype(17, "aes128-cts-hmac-sha1-96", 16, ChecksumTypes.HMAC_SHA1_96_AES128)],
  [18, new AesSha1Enctype(18, "aes256-cts-hmac-sha1-96", 32, ChecksumTypes.HMAC_SHA1_96_AES256)],
  [19, new AesSha2Enctype(19, "aes128-cts-hmac-sha256-128", 16, ChecksumTypes.HMAC_SHA256_128_AES128, "sha256")],
  [20, new AesSha2Enctype(20, "aes256-cts-hmac-sha384-192", 32, ChecksumTypes.HMAC_SHA384_192_AES256, "sha384")],
]);

/**
 * The cryptosystem of an enctype number. Throws KrbCryptoError (reason "unsupported-enctype") for DES,
 * 3DES, RC4, Camellia and unknown numbers, naming the enctype and what to use instead.
 */
export function enctype(n: number): Enctype {
  const e = ENCTYPES.get(n);
  if (e !== undefined) return e;
  const known = ENCTYPE_NAMES[n] !== undefined;
  throw new KrbCryptoError(
    KrbCryptoErrorReason.UnsupportedEnctype,
    `${known ? "enctype " : ""}${enctypeName(n)} is not supported; use ${SUPPORTED_LIST}`,
    n,
  );
}

/** The enctype whose mandatory checksum is `cksumtype` (15, 16, 19 or 20). */
export function enctypeForChecksum(cksumtype: number): Enctype {
  for (const e of ENCTYPES.values()) if (e.checksumType === cksumtype) return e;
  throw new KrbCryptoError(KrbCryptoErrorReason.UnsupportedEnctype, `checksum type ${cksumtype} is not supported; use one of 15, 16, 19, 20`);
}
