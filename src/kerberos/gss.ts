// The Kerberos 5 GSS-API mechanism (RFC 4121, framing of RFC 2743 §3.1): the initial context token
// carrying the AP-REQ (with the 0x8003 authenticator checksum of RFC 4121 §4.1.1), the AP-REP of mutual
// authentication, KRB-ERROR tokens, and the per-message Wrap (05 04) and MIC (04 04) tokens of
// RFC 4121 §4.2.6 (flags SentByAcceptor / Sealed / AcceptorSubkey, EC, RRC, 64-bit SND_SEQ, key usages
// 22–25). The initiator's side; the acceptor's (what a ZooKeeper server does in Java) is in the tests'
// support (test/support/secure/kerberos-peer.ts), on the same context, Wrap and MIC code.
import { concatBytes } from "../protocol/bytes.ts";
import { randomBytes } from "node:crypto";
import { enctype, enctypeName, isSupportedEnctype } from "./crypto.ts";
import { decodeDerPrefix, encodeObjectIdentifier, objectIdentifier, TagClass, tlv, UniversalTag } from "./der.ts";
import { DerError, KerberosError, KerberosErrorReason, KrbCryptoError, KrbCryptoErrorReason } from "./errors.ts";
import { kdcError, type KerberosCredential } from "./kdc.ts";
import {
  ApOptions,
  decodeApRep,
  decodeEncApRepPart,
  decodeKrbError,
  encodeApReq,
  encodeAuthenticator,
  KeyUsage,
  type KrbErrorMessage,
} from "./messages.ts";
import { KeyBlock, principalToString, type Principal } from "./types.ts";

/** The krb5 mechanism's OID. */
export const KRB5_MECH_OID = "1.2.840.113554.1.2.2";

/** TOK_ID of the context tokens (RFC 4121 §4.1). */
export const TokId = { AP_REQ: 0x0100, AP_REP: 0x0200, KRB_ERROR: 0x0300, MIC: 0x0404, WRAP: 0x0504 } as const;

/** The context flags in the 0x8003 checksum (RFC 4121 §4.1.1.1; RFC 2744 values). */
export const GssFlags = { DELEG: 1, MUTUAL: 2, REPLAY: 4, SEQUENCE: 8, CONF: 16, INTEG: 32 } as const;

/** The authenticator checksum type that carries GSS channel bindings and flags. */
export const GSS_CHECKSUM_TYPE = 0x8003;

const MAX_TOKEN = 1 << 20;

const gssError = (reason: KerberosErrorReason, message: string, cause?: unknown): KerberosError => new KerberosError(reason, `GSS-API krb5: ${message}`, { cause });
const badToken = (message: string, cause?: unknown): KerberosError => gssError(KerberosErrorReason.BadReply, message, cause);

// ---------------------------------------------------------------------------------------------------
// Framing

/** 0x60 [APPLICATION 0] { OID 1.2.840.113554.1.2.2, TOK_ID, inner } (RFC 2743 §3.1). */
export function frameContextToken(tokId: number, inner: Uint8Array): Uint8Array {
  const oid = encodeObjectIdentifier(KRB5_MECH_OID);
  const body = new Uint8Array(oid.length + 2 + inner.length);
  body.set(oid);
  body[oid.length] = tokId >>> 8;
  body[oid.length + 1] = tokId & 0xff;
  body.set(inner, oid.length + 2);
  return tlv(TagClass.Application, true, 0, body);
}

/** Parses a framed context token: its TOK_ID and the message after it. Unframed tokens (TOK_ID first) are accepted too. */
export function unframeContextToken(token: Uint8Array): { tokId: number; inner: Uint8Array } {
  if (!(token instanceof Uint8Array)) throw badToken("the token is not bytes");
  if (token.length > MAX_TOKEN) throw badToken(`a context token of ${token.length} bytes is too large`);
  if (token.length < 2) throw badToken(`a context token of ${token.length} bytes is too short`);
  if (token[0] !== 0x60) {
    // Some acceptors send the inner token without the RFC 2743 framing.
    return { tokId: (token[0] << 8) | token[1], inner: token.subarray(2) };
  }
  // [APPLICATION 0] with a definite length covering the rest; its content is the OID, then the inner
  // token, which starts with the 2-byte TOK_ID (not DER): so the header is read by hand.
  let at = 1;
  const first = token[at++];
  let length: number;
  if (first < 0x80) length = first;
  else {
    const n = first & 0x7f;
    if (n === 0 || n > 4 || at + n > token.length) throw badToken("the context token's length is malformed");
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + token[at++];
  }
  if (length !== token.length - at) throw badToken(`the context token claims ${length} bytes after its header, ${token.length - at} are there`);
  let oid: string;
  let oidLength: number;
  try {
    const p = decodeDerPrefix(token.subarray(at));
    oidLength = p.length;
    if (p.node.cls !== TagClass.Universal || p.node.tag !== UniversalTag.ObjectIdentifier) throw new DerError("the context token has no mechanism OID", at);
    oid = objectIdentifier(p.node, "mechanism OID");
  } catch (e) {
    if (e instanceof DerError) throw badToken(`malformed mechanism OID in the context token: ${e.message}`, e);
    throw e;
  }
  if (oid !== KRB5_MECH_OID) throw badToken(`the context token is of mechanism ${oid}, not krb5 (${KRB5_MECH_OID})`);
  const rest = token.subarray(at + oidLength);
  if (rest.length < 2) throw badToken("the context token has no TOK_ID");
  return { tokId: (rest[0] << 8) | rest[1], inner: rest.subarray(2) };
}

// ---------------------------------------------------------------------------------------------------
// The 0x8003 checksum (RFC 4121 §4.1.1)

export interface GssChecksum {
  /** MD5 of the channel bindings, or 16 zero bytes (none). */
  readonly bindings: Uint8Array;
  readonly flags: number;
  /** Delegation option and data (only with GSS_C_DELEG_FLAG). */
  readonly delegation: { readonly option: number; readonly data: Uint8Array } | undefined;
}

export function encodeGssChecksum(flags: number, bindings: Uint8Array = new Uint8Array(16)): Uint8Array {
  if (bindings.length !== 16) throw new RangeError("channel bindings hash must be 16 bytes");
  const out = new Uint8Array(24);
  const v = new DataView(out.buffer);
  v.setUint32(0, 16, true); // Lgth, little-endian
  out.set(bindings, 4);
  v.setUint32(20, flags & ~GssFlags.DELEG, true); // no delegation: no DlgOpt/Deleg fields
  return out;
}

export function decodeGssChecksum(value: Uint8Array): GssChecksum {
  if (value.length < 24) throw badToken(`the 0x8003 checksum is ${value.length} bytes, at least 24 expected`);
  const v = new DataView(value.buffer, value.byteOffset, value.byteLength);
  const lgth = v.getUint32(0, true);
  if (lgth !== 16) throw badToken(`the 0x8003 checksum's Lgth is ${lgth}, expected 16`);
  const flags = v.getUint32(20, true);
  let delegation: GssChecksum["delegation"];
  if (flags & GssFlags.DELEG) {
    if (value.length < 28) throw badToken("the 0x8003 checksum has the delegation flag but no DlgOpt/Dlgth");
    const dlgth = v.getUint16(26, true);
    if (28 + dlgth > value.length) throw badToken("the 0x8003 checksum's delegation data runs past its end");
    delegation = { option: v.getUint16(24, true), data: value.slice(28, 28 + dlgth) };
  }
  return { bindings: value.slice(4, 20), flags, delegation };
}

// ---------------------------------------------------------------------------------------------------
// Context establishment

/** An established (or half-established) security context: the keys and sequence numbers of one side. */
export class GssContext {
  readonly role: "initiator" | "acceptor";
  /** The ticket's session key. */
  readonly sessionKey: KeyBlock;
  /** The initiator's subkey from the authenticator, if any. */
  readonly initiatorSubkey: KeyBlock | undefined;
  /** The acceptor's subkey from the AP-REP, once known. */
  acceptorSubkey: KeyBlock | undefined;
  /** The next SND_SEQ this side sends. */
  sendSeq: bigint;
  /** The SND_SEQ expected next from the peer (not enforced: only reported by unwrap). */
  recvSeq: bigint;
  readonly flags: number;
  /** The client and service principals. */
  readonly client: Principal;
  readonly server: Principal;

  constructor(init: {
    role: "initiator" | "acceptor";
    sessionKey: KeyBlock;
    initiatorSubkey: KeyBlock | undefined;
    acceptorSubkey?: KeyBlock;
    sendSeq: number | bigint;
    recvSeq: number | bigint;
    flags: number;
    client: Principal;
    server: Principal;
  }) {
    this.role = init.role;
    this.sessionKey = init.sessionKey;
    this.initiatorSubkey = init.initiatorSubkey;
    this.acceptorSubkey = init.acceptorSubkey;
    this.sendSeq = BigInt(init.sendSeq);
    this.recvSeq = BigInt(init.recvSeq);
    this.flags = init.flags;
    this.client = init.client;
    this.server = init.server;
  }

  /** The key of the per-message tokens: the acceptor subkey, else the initiator subkey, else the session key (RFC 4121 §2). */
  get key(): KeyBlock {
    return this.acceptorSubkey ?? this.initiatorSubkey ?? this.sessionKey;
  }

  toString(): string {
    return `GssContext(${this.role}, ${principalToString(this.client)} → ${principalToString(this.server)}, ${enctypeName(this.key.enctype)}, <keys redacted>)`;
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }
}

export interface InitiatorOptions {
  /** The service ticket and its session key. */
  readonly credential: KerberosCredential;
  /** ms since the epoch (the authenticator's ctime and cusec). */
  readonly now: number;
  /** Ask for mutual authentication (ap-options mutual-required, GSS_C_MUTUAL_FLAG; default true). */
  readonly mutual?: boolean;
  /** GSS flags besides MUTUAL (default INTEG | SEQUENCE | REPLAY... as the Java client: INTEG | CONF). */
  readonly flags?: number;
  /** The authenticator's subkey (default: a random key of the session key's enctype); null: none. */
  readonly subkey?: KeyBlock | null;
  /** The initiator's first sequence number (default: random, 30 bits). */
  readonly seqNumber?: number;
  /** MD5 of the channel bindings (default: 16 zero bytes). */
  readonly channelBindings?: Uint8Array;
}

/** What initSecContext returns: the token to send and the context it starts. */
export interface InitiatorStart {
  readonly token: Uint8Array;
  readonly context: GssContext;
  /** The authenticator's ctime and cusec: the AP-REP must echo them. */
  readonly ctime: Date;
  readonly cusec: number;
  readonly mutual: boolean;
}

const randomSeq = (): number => new DataView(randomBytes(4).buffer).getUint32(0) & 0x3fffffff;

/** Builds the initial context token: the AP-REQ with an authenticator (key usage 11) carrying the 0x8003 checksum. */
export function initSecContext(o: InitiatorOptions): InitiatorStart {
  const cred = o.credential;
  if (!isSupportedEnctype(cred.key.enctype)) enctype(cred.key.enctype); // throws naming the enctype
  const mutual = o.mutual ?? true;
  const flags = (o.flags ?? GssFlags.INTEG | GssFlags.CONF | GssFlags.SEQUENCE | GssFlags.REPLAY) | (mutual ? GssFlags.MUTUAL : 0);
  const e = enctype(cred.key.enctype);
  const subkey = o.subkey === null ? undefined : (o.subkey ?? new KeyBlock(cred.key.enctype, e.randomKey()));
  const seq = o.seqNumber ?? randomSeq();
  const ctime = new Date(Math.floor(o.now / 1000) * 1000);
  const cusec = Math.floor(((o.now % 1000) + 1000) % 1000) * 1000;
  const authenticator = encodeAuthenticator({
    crealm: cred.client.realm,
    cname: { nameType: cred.client.nameType, components: cred.client.components },
    cksum: { type: GSS_CHECKSUM_TYPE, value: encodeGssChecksum(flags, o.channelBindings) },
    cusec,
    ctime,
    subkey,
    seqNumber: seq,
  });
  const apReq = encodeApReq(mutual ? ApOptions.MUTUAL_REQUIRED : 0, cred.ticket, {
    etype: cred.key.enctype,
    kvno: undefined,
    cipher: e.encrypt(cred.key.key, KeyUsage.AP_REQ_AUTH, authenticator),
  });
  const context = new GssContext({
    role: "initiator",
    sessionKey: cred.key,
    initiatorSubkey: subkey,
    sendSeq: seq,
    // Without mutual authentication the acceptor starts from the initiator's number (RFC 4121 §4.2.6).
    recvSeq: seq,
    flags,
    client: cred.client,
    server: cred.server,
  });
  return { token: frameContextToken(TokId.AP_REQ, apReq), context, ctime, cusec, mutual };
}

/**
 * Verifies the acceptor's reply to a mutual-authentication AP-REQ: an AP-REP whose EncAPRepPart (key
 * usage 12, session key) echoes the authenticator's ctime and cusec; takes its subkey and sequence
 * number into the context. A KRB-ERROR token becomes the KerberosError it names.
 */
export function acceptApRep(start: InitiatorStart, token: Uint8Array): void {
  const { tokId, inner } = unframeContextToken(token);
  const ctx = start.context;
  const peer = principalToString(ctx.server);
  if (tokId === TokId.KRB_ERROR) throw acceptorError(inner, ctx, start.ctime);
  if (tokId !== TokId.AP_REP) throw badToken(`expected an AP-REP token (TOK_ID 02 00) from ${peer}, got TOK_ID ${hex4(tokId)}`);
  let encPart;
  try {
    encPart = decodeApRep(inner);
  } catch (e) {
    if (e instanceof DerError) throw badToken(`malformed AP-REP from ${peer}: ${e.message}`, e);
    throw e;
  }
  if (encPart.etype !== ctx.sessionKey.enctype) {
    throw gssError(KerberosErrorReason.MutualAuthFailed, `the AP-REP from ${peer} is encrypted with ${enctypeName(encPart.etype)}, not the session key's ${enctypeName(ctx.sessionKey.enctype)}`);
  }
  let plain: Uint8Array;
  try {
    plain = enctype(ctx.sessionKey.enctype).decrypt(ctx.sessionKey.key, KeyUsage.AP_REP_ENC_PART, encPart.cipher);
  } catch (e) {
    if (e instanceof KrbCryptoError) {
      throw gssError(KerberosErrorReason.MutualAuthFailed, `the AP-REP from ${peer} does not decrypt with the session key: the acceptor did not prove it holds the service key (${e.reason})`, e);
    }
    throw e;
  }
  let part;
  try {
    part = decodeEncApRepPart(plain);
  } catch (e) {
    if (e instanceof DerError) throw badToken(`the AP-REP from ${peer} decrypted to malformed data: ${e.message}`, e);
    throw e;
  }
  if (part.ctime.getTime() !== start.ctime.getTime() || part.cusec !== start.cusec) {
    throw gssError(KerberosErrorReason.MutualAuthFailed, `the AP-REP from ${peer} does not echo the authenticator's time (a replayed or forged reply)`);
  }
  if (part.subkey !== undefined) {
    if (!isSupportedEnctype(part.subkey.enctype)) throw badToken(`the acceptor's subkey is of ${enctypeName(part.subkey.enctype)}, which is not supported`);
    if (part.subkey.length !== enctype(part.subkey.enctype).keyLength) throw badToken(`the acceptor's subkey has the wrong length for ${enctypeName(part.subkey.enctype)}`);
    ctx.acceptorSubkey = part.subkey;
  }
  ctx.recvSeq = BigInt(part.seqNumber ?? 0);
}

function acceptorError(inner: Uint8Array, ctx: GssContext, sent: Date): KerberosError {
  let e: KrbErrorMessage;
  try {
    e = decodeKrbError(inner);
  } catch (err) {
    if (err instanceof DerError) return badToken(`malformed KRB-ERROR token from ${principalToString(ctx.server)}: ${err.message}`, err);
    throw err;
  }
  return kdcError(e, { client: principalToString(ctx.client), server: principalToString(ctx.server), sentTime: sent, keyInfo: "the service ticket" });
}

const hex4 = (n: number): string => `${(n >>> 8).toString(16).padStart(2, "0")} ${(n & 0xff).toString(16).padStart(2, "0")}`;

// ---------------------------------------------------------------------------------------------------
// Per-message tokens (RFC 4121 §4.2)

const FLAG_SENT_BY_ACCEPTOR = 0x01;
const FLAG_SEALED = 0x02;
const FLAG_ACCEPTOR_SUBKEY = 0x04;

function header(tokId: number, flags: number, ec: number, rrc: number, seq: bigint): Uint8Array {
  const h = new Uint8Array(16);
  const v = new DataView(h.buffer);
  v.setUint16(0, tokId);
  h[2] = flags;
  if (tokId === TokId.WRAP) {
    h[3] = 0xff;
    v.setUint16(4, ec);
    v.setUint16(6, rrc);
  } else h.fill(0xff, 3, 8);
  v.setBigUint64(8, seq);
  return h;
}


function ownFlags(ctx: GssContext): number {
  return (ctx.role === "acceptor" ? FLAG_SENT_BY_ACCEPTOR : 0) | (ctx.acceptorSubkey !== undefined ? FLAG_ACCEPTOR_SUBKEY : 0);
}

const sealUsage = (sender: "initiator" | "acceptor"): number => (sender === "acceptor" ? KeyUsage.GSS_ACCEPTOR_SEAL : KeyUsage.GSS_INITIATOR_SEAL);
const signUsage = (sender: "initiator" | "acceptor"): number => (sender === "acceptor" ? KeyUsage.GSS_ACCEPTOR_SIGN : KeyUsage.GSS_INITIATOR_SIGN);

/** Wraps a message (GSS_Wrap): integrity only (the default, as RFC 4752's exchange uses) or sealed. */
export function wrap(ctx: GssContext, message: Uint8Array, options: { confidential?: boolean; rrc?: number } = {}): Uint8Array {
  const key = ctx.key;
  const e = enctype(key.enctype);
  const flags = ownFlags(ctx) | (options.confidential ? FLAG_SEALED : 0);
  const seq = ctx.sendSeq;
  ctx.sendSeq = (ctx.sendSeq + 1n) & 0xffffffffffffffffn;
  const usage = sealUsage(ctx.role);
  let body: Uint8Array;
  let ec: number;
  if (options.confidential) {
    ec = 0;
    body = e.encrypt(key.key, usage, concatBytes(message, header(TokId.WRAP, flags, ec, 0, seq)));
  } else {
    ec = e.checksumLength;
    const cksum = e.checksum(key.key, usage, concatBytes(message, header(TokId.WRAP, flags, 0, 0, seq)));
    body = concatBytes(message, cksum);
  }
  const rrc = options.rrc ?? 0;
  if (rrc !== 0) body = rotateRight(body, rrc);
  return concatBytes(header(TokId.WRAP, flags, ec, rrc, seq), body);
}

export interface Unwrapped {
  readonly message: Uint8Array;
  readonly sealed: boolean;
  readonly seq: bigint;
}

/**
 * Verifies and opens a peer's Wrap token (GSS_Unwrap), and checks its SND_SEQ is the next expected when the context
 * has sequence or replay detection. Throws KerberosError naming what was wrong.
 */
export function unwrap(ctx: GssContext, token: Uint8Array): Unwrapped {
  if (!(token instanceof Uint8Array)) throw badToken("the wrap token is not bytes");
  if (token.length < 16) throw badToken(`a wrap token of ${token.length} bytes is shorter than its 16-byte header`);
  if (token.length > MAX_TOKEN) throw badToken(`a wrap token of ${token.length} bytes is too large`);
  const v = new DataView(token.buffer, token.byteOffset, token.byteLength);
  const tokId = v.getUint16(0);
  if (tokId !== TokId.WRAP) throw badToken(`expected a wrap token (TOK_ID 05 04), got ${hex4(tokId)}`);
  const flags = token[2];
  if (token[3] !== 0xff) throw badToken("the wrap token's filler byte is not FF");
  const sender = checkDirection(ctx, flags, "wrap");
  const ec = v.getUint16(4);
  const rrc = v.getUint16(6);
  const seq = v.getBigUint64(8);
  const key = ctx.key;
  const e = enctype(key.enctype);
  const usage = sealUsage(sender);
  let body = token.subarray(16);
  if (rrc !== 0 && body.length > 0) body = rotateLeft(body, rrc);
  const hdr = token.subarray(0, 16);
  let message: Uint8Array;
  const sealed = (flags & FLAG_SEALED) !== 0;
  if (sealed) {
    let plain: Uint8Array;
    try {
      plain = e.decrypt(key.key, usage, body);
    } catch (err) {
      if (err instanceof KrbCryptoError) throw gssError(KerberosErrorReason.MutualAuthFailed, `a sealed wrap token did not decrypt (${err.reason}): wrong key or altered token`, err);
      throw err;
    }
    if (plain.length < 16 + ec) throw badToken("a sealed wrap token is shorter than its filler and header copy");
    const inner = plain.subarray(plain.length - 16);
    const expected = concatBytes(hdr.subarray(0, 6), new Uint8Array(2), hdr.subarray(8));
    if (!equal(inner, expected)) throw gssError(KerberosErrorReason.MutualAuthFailed, "a sealed wrap token's encrypted header copy does not match its header");
    message = plain.slice(0, plain.length - 16 - ec);
  } else {
    if (ec !== e.checksumLength) throw badToken(`the wrap token's EC is ${ec}, expected the ${e.checksumLength}-byte checksum of ${enctypeName(key.enctype)}`);
    if (body.length < ec) throw badToken(`a wrap token body of ${body.length} bytes is shorter than its ${ec}-byte checksum`);
    message = body.slice(0, body.length - ec);
    const cksum = body.subarray(body.length - ec);
    const signed = concatBytes(message, hdr.subarray(0, 4), new Uint8Array(4), hdr.subarray(8));
    try {
      e.verifyChecksum(key.key, usage, signed, cksum);
    } catch (err) {
      if (err instanceof KrbCryptoError && err.reason === KrbCryptoErrorReason.Integrity) {
        throw gssError(KerberosErrorReason.MutualAuthFailed, `the ${sender}'s wrap token does not verify with the context key (${enctypeName(key.enctype)}, key usage ${usage}): wrong key or altered token`, err);
      }
      throw err;
    }
  }
  // RFC 4121 §4.2.6.2: with replay and sequence detection (the initiator asks for both by default) the peer's
  // SND_SEQ must be the next one expected: the AP-REP's seq-number first (the initiator's own without mutual
  // authentication). Checked once the token verified, so a forged header is an integrity failure, not this.
  if ((ctx.flags & (GssFlags.SEQUENCE | GssFlags.REPLAY)) !== 0 && seq !== ctx.recvSeq) {
    const what = seq < ctx.recvSeq ? "a replayed or duplicated token" : "a token out of sequence (an earlier one is missing)";
    throw gssError(KerberosErrorReason.MutualAuthFailed, `the ${sender}'s wrap token has SND_SEQ ${seq}, ${ctx.recvSeq} was expected: ${what}`);
  }
  ctx.recvSeq = (seq + 1n) & 0xffffffffffffffffn;
  return { message, sealed, seq };
}

/** A MIC token (GSS_GetMIC) over a message. */
export function getMic(ctx: GssContext, message: Uint8Array): Uint8Array {
  const key = ctx.key;
  const e = enctype(key.enctype);
  const seq = ctx.sendSeq;
  ctx.sendSeq = (ctx.sendSeq + 1n) & 0xffffffffffffffffn;
  const hdr = header(TokId.MIC, ownFlags(ctx), 0, 0, seq);
  return concatBytes(hdr, e.checksum(key.key, signUsage(ctx.role), concatBytes(message, hdr)));
}

/** Verifies a peer's MIC token over a message (GSS_VerifyMIC). */
export function verifyMic(ctx: GssContext, message: Uint8Array, token: Uint8Array): bigint {
  if (!(token instanceof Uint8Array) || token.length < 16) throw badToken("a MIC token is shorter than its 16-byte header");
  const v = new DataView(token.buffer, token.byteOffset, token.byteLength);
  if (v.getUint16(0) !== TokId.MIC) throw badToken(`expected a MIC token (TOK_ID 04 04), got ${hex4(v.getUint16(0))}`);
  for (let i = 3; i < 8; i++) if (token[i] !== 0xff) throw badToken("the MIC token's filler is not FF FF FF FF FF");
  const sender = checkDirection(ctx, token[2], "MIC");
  if (token[2] & FLAG_SEALED) throw badToken("a MIC token with the Sealed flag");
  const key = ctx.key;
  const e = enctype(key.enctype);
  if (token.length !== 16 + e.checksumLength) throw badToken(`a MIC token of ${token.length} bytes; expected ${16 + e.checksumLength} for ${enctypeName(key.enctype)}`);
  try {
    e.verifyChecksum(key.key, signUsage(sender), concatBytes(message, token.subarray(0, 16)), token.subarray(16));
  } catch (err) {
    if (err instanceof KrbCryptoError && err.reason === KrbCryptoErrorReason.Integrity) throw gssError(KerberosErrorReason.MutualAuthFailed, "the MIC token does not verify: wrong key or altered message", err);
    throw err;
  }
  const seq = v.getBigUint64(8);
  ctx.recvSeq = (seq + 1n) & 0xffffffffffffffffn;
  return seq;
}

/** Checks the direction and subkey flags of a peer's token; returns who sent it. */
function checkDirection(ctx: GssContext, flags: number, what: string): "initiator" | "acceptor" {
  if (flags & ~(FLAG_SENT_BY_ACCEPTOR | FLAG_SEALED | FLAG_ACCEPTOR_SUBKEY)) throw badToken(`the ${what} token has unknown flags 0x${flags.toString(16)}`);
  const sender = flags & FLAG_SENT_BY_ACCEPTOR ? "acceptor" : "initiator";
  if (sender === ctx.role) throw badToken(`the ${what} token claims to come from the ${sender}, which is this side (a reflected token)`);
  const subkeyFlag = (flags & FLAG_ACCEPTOR_SUBKEY) !== 0;
  if (subkeyFlag && ctx.acceptorSubkey === undefined) throw badToken(`the ${what} token says it uses an acceptor subkey, but the acceptor sent none`);
  if (!subkeyFlag && ctx.acceptorSubkey !== undefined) throw badToken(`the ${what} token does not use the acceptor subkey the AP-REP set`);
  return sender;
}

function rotateRight(b: Uint8Array, n: number): Uint8Array {
  const k = n % b.length;
  if (k === 0) return b;
  return concatBytes(b.subarray(b.length - k), b.subarray(0, b.length - k));
}

function rotateLeft(b: Uint8Array, n: number): Uint8Array {
  const k = n % b.length;
  if (k === 0) return b;
  return concatBytes(b.subarray(k), b.subarray(0, k));
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}
