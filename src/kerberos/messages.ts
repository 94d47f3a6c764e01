// The Kerberos 5 messages (RFC 4120 §5) on the DER codec: PrincipalName, EncryptionKey, EncryptedData,
// Ticket and EncTicketPart; then those of the exchanges: AS-REQ/AS-REP, TGS-REQ/TGS-REP, the PA-DATA
// (PA-ENC-TIMESTAMP, ETYPE-INFO2, METHOD-DATA), Authenticator, AP-REQ, AP-REP, KRB-ERROR.
import {
  application,
  decodeDer,
  encodeApplication,
  encodeFields,
  encodeGeneralizedTime,
  encodeInteger,
  encodeKerberosFlags,
  encodeKerberosString,
  encodeOctetString,
  encodeSequence,
  encodeUint32,
  fields,
  generalizedTime,
  int32,
  kerberosFlags,
  kerberosString,
  octetString,
  sequence,
  uint32,
  type DerNode,
} from "./der.ts";
import { DerError } from "./errors.ts";
import { KeyBlock, type Principal } from "./types.ts";

/** PrincipalName ::= SEQUENCE { name-type [0] Int32, name-string [1] SEQUENCE OF KerberosString } */
export interface PrincipalName {
  readonly nameType: number;
  readonly components: readonly string[];
}

export function decodePrincipalName(node: DerNode, what = "PrincipalName"): PrincipalName {
  const f = fields(node, what);
  return {
    nameType: int32(f.required(0, "name-type"), `${what} name-type`),
    components: sequence(f.required(1, "name-string"), `${what} name-string`).map((n, i) => kerberosString(n, `${what} component ${i}`)),
  };
}

export function encodePrincipalName(p: PrincipalName): Uint8Array {
  return encodeFields([
    [0, encodeInteger(p.nameType)],
    [1, encodeSequence(p.components.map(encodeKerberosString))],
  ]);
}

/** EncryptionKey ::= SEQUENCE { keytype [0] Int32, keyvalue [1] OCTET STRING } (the key is copied). */
export function decodeEncryptionKey(node: DerNode, what = "EncryptionKey"): KeyBlock {
  const f = fields(node, what);
  return new KeyBlock(int32(f.required(0, "keytype"), `${what} keytype`), octetString(f.required(1, "keyvalue"), `${what} keyvalue`).slice());
}

export function encodeEncryptionKey(k: KeyBlock): Uint8Array {
  return encodeFields([
    [0, encodeInteger(k.enctype)],
    [1, encodeOctetString(k.key)],
  ]);
}

/** EncryptedData ::= SEQUENCE { etype [0] Int32, kvno [1] UInt32 OPTIONAL, cipher [2] OCTET STRING } */
export interface EncryptedData {
  readonly etype: number;
  readonly kvno: number | undefined;
  readonly cipher: Uint8Array;
}

export function decodeEncryptedData(node: DerNode, what = "EncryptedData"): EncryptedData {
  const f = fields(node, what);
  const kvno = f.optional(1);
  return {
    etype: int32(f.required(0, "etype"), `${what} etype`),
    kvno: kvno === undefined ? undefined : uint32(kvno, `${what} kvno`),
    cipher: octetString(f.required(2, "cipher"), `${what} cipher`),
  };
}

export function encodeEncryptedData(e: EncryptedData): Uint8Array {
  return encodeFields([
    [0, encodeInteger(e.etype)],
    [1, e.kvno === undefined ? undefined : encodeUint32(e.kvno)],
    [2, encodeOctetString(e.cipher)],
  ]);
}

/** Ticket ::= [APPLICATION 1] SEQUENCE { tkt-vno [0] 5, realm [1], sname [2], enc-part [3] EncryptedData } */
export interface Ticket {
  readonly realm: string;
  readonly sname: PrincipalName;
  readonly encPart: EncryptedData;
  /** The whole DER encoding, as it goes into an AP-REQ. */
  readonly raw: Uint8Array;
}

export function decodeTicketNode(node: DerNode): Ticket {
  const f = fields(application(node, 1, "Ticket"), "Ticket");
  const vnoNode = f.required(0, "tkt-vno");
  const vno = int32(vnoNode, "Ticket tkt-vno");
  if (vno !== 5) throw new DerError(`Ticket tkt-vno is ${vno}, expected 5`, vnoNode.offset);
  return {
    realm: kerberosString(f.required(1, "realm"), "Ticket realm"),
    sname: decodePrincipalName(f.required(2, "sname"), "Ticket sname"),
    encPart: decodeEncryptedData(f.required(3, "enc-part"), "Ticket enc-part"),
    raw: node.raw,
  };
}

export const decodeTicket = (bytes: Uint8Array): Ticket => decodeTicketNode(decodeDer(bytes));

/** The parts of EncTicketPart ([APPLICATION 3]) a client may want to check (it normally cannot decrypt one). */
export interface EncTicketPart {
  readonly flags: number;
  readonly key: KeyBlock;
  readonly client: Principal;
  readonly authTime: Date;
  readonly startTime: Date | undefined;
  readonly endTime: Date;
  readonly renewTill: Date | undefined;
}

export function decodeEncTicketPart(bytes: Uint8Array): EncTicketPart {
  const f = fields(application(decodeDer(bytes), 3, "EncTicketPart"), "EncTicketPart");
  const cname = decodePrincipalName(f.required(3, "cname"), "EncTicketPart cname");
  const start = f.optional(6);
  const renew = f.optional(8);
  return {
    flags: kerberosFlags(f.required(0, "flags"), "EncTicketPart flags"),
    key: decodeEncryptionKey(f.required(1, "key"), "EncTicketPart key"),
    client: { nameType: cname.nameType, components: cname.components, realm: kerberosString(f.required(2, "crealm"), "EncTicketPart crealm") },
    authTime: generalizedTime(f.required(5, "authtime"), "EncTicketPart authtime"),
    startTime: start === undefined ? undefined : generalizedTime(start, "EncTicketPart starttime"),
    endTime: generalizedTime(f.required(7, "endtime"), "EncTicketPart endtime"),
    renewTill: renew === undefined ? undefined : generalizedTime(renew, "EncTicketPart renew-till"),
  };
}

// ---------------------------------------------------------------------------------------------------
// The exchanges' messages (RFC 4120 §5.2–§5.9): Checksum, PA-DATA and what goes in it, KDC-REQ (AS-REQ,
// TGS-REQ), KDC-REP (AS-REP, TGS-REP) and EncKDCRepPart, Authenticator, AP-REQ, AP-REP and EncAPRepPart,
// KRB-ERROR. Each has an encoder and a decoder (the decoders of requests serve the tests and an acceptor).

/** Message types (RFC 4120 §5.10 / the APPLICATION tags). */
export const MsgType = {
  AS_REQ: 10,
  AS_REP: 11,
  TGS_REQ: 12,
  TGS_REP: 13,
  AP_REQ: 14,
  AP_REP: 15,
  KRB_ERROR: 30,
} as const;

/** PA-DATA types used here (RFC 4120 §7.5.2, RFC 6113). */
export const PaType = {
  TGS_REQ: 1,
  ENC_TIMESTAMP: 2,
  PW_SALT: 3,
  ETYPE_INFO: 11,
  ETYPE_INFO2: 19,
  FX_COOKIE: 133,
  FX_FAST: 136,
} as const;

/** Key usage numbers (RFC 4120 §7.5.1, RFC 4121 §2). */
export const KeyUsage = {
  AS_REQ_PA_ENC_TIMESTAMP: 1,
  KDC_REP_TICKET: 2,
  AS_REP_ENC_PART: 3,
  TGS_REQ_AUTHDATA_SESSION: 4,
  TGS_REQ_AUTHDATA_SUBKEY: 5,
  TGS_REQ_AUTH_CKSUM: 6,
  TGS_REQ_AUTH: 7,
  TGS_REP_ENC_PART_SESSION: 8,
  TGS_REP_ENC_PART_SUBKEY: 9,
  AP_REQ_AUTH_CKSUM: 10,
  AP_REQ_AUTH: 11,
  AP_REP_ENC_PART: 12,
  GSS_ACCEPTOR_SEAL: 22,
  GSS_ACCEPTOR_SIGN: 23,
  GSS_INITIATOR_SEAL: 24,
  GSS_INITIATOR_SIGN: 25,
} as const;

/** APOptions bits. */
export const ApOptions = {
  USE_SESSION_KEY: 0x40000000,
  MUTUAL_REQUIRED: 0x20000000,
} as const;

const PVNO = 5;

function checkPvno(node: DerNode, what: string): void {
  const v = int32(node, `${what} pvno`);
  if (v !== PVNO) throw new DerError(`${what} pvno is ${v}, expected 5`, node.offset);
}

function checkMsgType(node: DerNode, what: string, ...allowed: number[]): number {
  const v = int32(node, `${what} msg-type`);
  if (!allowed.includes(v)) throw new DerError(`${what} msg-type is ${v}, expected ${allowed.join(" or ")}`, node.offset);
  return v;
}

const optionalTime = (n: DerNode | undefined, what: string): Date | undefined => (n === undefined ? undefined : generalizedTime(n, what));
const timeField = (t: Date | undefined): Uint8Array | undefined => (t === undefined ? undefined : encodeGeneralizedTime(t));

/** Microseconds ::= INTEGER (0..999999) */
function microseconds(node: DerNode, what: string): number {
  const v = int32(node, what);
  if (v < 0 || v > 999_999) throw new DerError(`${what}: ${v} is outside 0..999999 microseconds`, node.offset);
  return v;
}

/** Checksum ::= SEQUENCE { cksumtype [0] Int32, checksum [1] OCTET STRING } */
export interface Checksum {
  readonly type: number;
  readonly value: Uint8Array;
}

export function decodeChecksum(node: DerNode, what = "Checksum"): Checksum {
  const f = fields(node, what);
  return { type: int32(f.required(0, "cksumtype"), `${what} cksumtype`), value: octetString(f.required(1, "checksum"), `${what} checksum`) };
}

export function encodeChecksum(c: Checksum): Uint8Array {
  return encodeFields([
    [0, encodeInteger(c.type)],
    [1, encodeOctetString(c.value)],
  ]);
}

/** PA-DATA ::= SEQUENCE { padata-type [1] Int32, padata-value [2] OCTET STRING } */
export interface PaData {
  readonly type: number;
  readonly value: Uint8Array;
}

export function decodePaData(node: DerNode, what = "PA-DATA"): PaData {
  const f = fields(node, what);
  return { type: int32(f.required(1, "padata-type"), `${what} padata-type`), value: octetString(f.required(2, "padata-value"), `${what} padata-value`) };
}

export function encodePaData(p: PaData): Uint8Array {
  return encodeFields([
    [1, encodeInteger(p.type)],
    [2, encodeOctetString(p.value)],
  ]);
}

/** METHOD-DATA ::= SEQUENCE OF PA-DATA (the e-data of KDC_ERR_PREAUTH_REQUIRED). */
export function decodeMethodData(bytes: Uint8Array): PaData[] {
  return sequence(decodeDer(bytes), "METHOD-DATA").map((n, i) => decodePaData(n, `METHOD-DATA entry ${i}`));
}

/** ETYPE-INFO2-ENTRY ::= SEQUENCE { etype [0] Int32, salt [1] KerberosString OPTIONAL, s2kparams [2] OCTET STRING OPTIONAL } */
export interface EtypeInfo2Entry {
  readonly etype: number;
  readonly salt: string | undefined;
  readonly s2kparams: Uint8Array | undefined;
}

export function decodeEtypeInfo2(bytes: Uint8Array): EtypeInfo2Entry[] {
  return sequence(decodeDer(bytes), "ETYPE-INFO2").map((n, i) => {
    const what = `ETYPE-INFO2 entry ${i}`;
    const f = fields(n, what);
    const salt = f.optional(1);
    const params = f.optional(2);
    return {
      etype: int32(f.required(0, "etype"), `${what} etype`),
      salt: salt === undefined ? undefined : kerberosString(salt, `${what} salt`),
      s2kparams: params === undefined ? undefined : octetString(params, `${what} s2kparams`).slice(),
    };
  });
}

/** PA-ENC-TS-ENC ::= SEQUENCE { patimestamp [0] KerberosTime, pausec [1] Microseconds OPTIONAL } */
export interface PaEncTsEnc {
  readonly time: Date;
  readonly usec: number | undefined;
}

export function encodePaEncTsEnc(t: PaEncTsEnc): Uint8Array {
  return encodeFields([
    [0, encodeGeneralizedTime(t.time)],
    [1, t.usec === undefined ? undefined : encodeInteger(t.usec)],
  ]);
}

export function decodePaEncTsEnc(bytes: Uint8Array): PaEncTsEnc {
  const f = fields(decodeDer(bytes), "PA-ENC-TS-ENC");
  const usec = f.optional(1);
  return { time: generalizedTime(f.required(0, "patimestamp"), "PA-ENC-TS-ENC patimestamp"), usec: usec === undefined ? undefined : microseconds(usec, "PA-ENC-TS-ENC pausec") };
}

/** KDC-REQ-BODY (RFC 4120 §5.4.1), the fields a client sends. */
export interface KdcReqBody {
  readonly options: number;
  readonly cname: PrincipalName | undefined;
  readonly realm: string;
  readonly sname: PrincipalName | undefined;
  readonly from: Date | undefined;
  readonly till: Date;
  readonly rtime: Date | undefined;
  readonly nonce: number;
  readonly etypes: readonly number[];
}

export function encodeKdcReqBody(b: KdcReqBody): Uint8Array {
  return encodeFields([
    [0, encodeKerberosFlags(b.options)],
    [1, b.cname === undefined ? undefined : encodePrincipalName(b.cname)],
    [2, encodeKerberosString(b.realm)],
    [3, b.sname === undefined ? undefined : encodePrincipalName(b.sname)],
    [4, timeField(b.from)],
    [5, encodeGeneralizedTime(b.till)],
    [6, timeField(b.rtime)],
    [7, encodeUint32(b.nonce)],
    [8, encodeSequence(b.etypes.map(encodeInteger))],
  ]);
}

export function decodeKdcReqBody(node: DerNode): KdcReqBody {
  const w = "KDC-REQ-BODY";
  const f = fields(node, w);
  const cname = f.optional(1);
  const sname = f.optional(3);
  return {
    options: kerberosFlags(f.required(0, "kdc-options"), `${w} kdc-options`),
    cname: cname === undefined ? undefined : decodePrincipalName(cname, `${w} cname`),
    realm: kerberosString(f.required(2, "realm"), `${w} realm`),
    sname: sname === undefined ? undefined : decodePrincipalName(sname, `${w} sname`),
    from: optionalTime(f.optional(4), `${w} from`),
    till: generalizedTime(f.required(5, "till"), `${w} till`),
    rtime: optionalTime(f.optional(6), `${w} rtime`),
    nonce: uint32(f.required(7, "nonce"), `${w} nonce`),
    etypes: sequence(f.required(8, "etype"), `${w} etype`).map((n, i) => int32(n, `${w} etype ${i}`)),
  };
}

/** AS-REQ ([APPLICATION 10]) or TGS-REQ ([APPLICATION 12]): KDC-REQ { pvno [1], msg-type [2], padata [3], req-body [4] }. */
export interface KdcReq {
  readonly msgType: 10 | 12;
  readonly padata: readonly PaData[];
  readonly body: KdcReqBody;
  /** The DER of req-body as sent: the TGS authenticator's checksum covers exactly these bytes. */
  readonly bodyBytes: Uint8Array;
}

/** Encodes a KDC-REQ; `bodyBytes` (when given) is used as the req-body verbatim. */
export function encodeKdcReq(msgType: 10 | 12, padata: readonly PaData[], body: KdcReqBody | Uint8Array): Uint8Array {
  const bodyBytes = body instanceof Uint8Array ? body : encodeKdcReqBody(body);
  return encodeApplication(
    msgType,
    encodeFields([
      [1, encodeInteger(PVNO)],
      [2, encodeInteger(msgType)],
      [3, padata.length === 0 ? undefined : encodeSequence(padata.map(encodePaData))],
      [4, bodyBytes],
    ]),
  );
}

export function decodeKdcReq(bytes: Uint8Array): KdcReq {
  const top = decodeDer(bytes);
  if (top.cls !== 1 || (top.tag !== 10 && top.tag !== 12)) throw new DerError(`KDC-REQ: expected [APPLICATION 10] or [APPLICATION 12]`, top.offset);
  const w = top.tag === 10 ? "AS-REQ" : "TGS-REQ";
  const f = fields(application(top, top.tag, w), w);
  checkPvno(f.required(1, "pvno"), w);
  checkMsgType(f.required(2, "msg-type"), w, top.tag);
  const pa = f.optional(3);
  const bodyNode = f.required(4, "req-body");
  return {
    msgType: top.tag as 10 | 12,
    padata: pa === undefined ? [] : sequence(pa, `${w} padata`).map((n, i) => decodePaData(n, `${w} padata ${i}`)),
    body: decodeKdcReqBody(bodyNode),
    bodyBytes: bodyNode.raw,
  };
}

/** AS-REP ([APPLICATION 11]) or TGS-REP ([APPLICATION 13]). */
export interface KdcRep {
  readonly msgType: 11 | 13;
  readonly padata: readonly PaData[];
  readonly crealm: string;
  readonly cname: PrincipalName;
  readonly ticket: Ticket;
  readonly encPart: EncryptedData;
}

export function decodeKdcRepNode(top: DerNode): KdcRep {
  if (top.cls !== 1 || (top.tag !== 11 && top.tag !== 13)) throw new DerError(`KDC-REP: expected [APPLICATION 11] or [APPLICATION 13]`, top.offset);
  const w = top.tag === 11 ? "AS-REP" : "TGS-REP";
  const f = fields(application(top, top.tag, w), w);
  checkPvno(f.required(0, "pvno"), w);
  checkMsgType(f.required(1, "msg-type"), w, top.tag);
  const pa = f.optional(2);
  return {
    msgType: top.tag as 11 | 13,
    padata: pa === undefined ? [] : sequence(pa, `${w} padata`).map((n, i) => decodePaData(n, `${w} padata ${i}`)),
    crealm: kerberosString(f.required(3, "crealm"), `${w} crealm`),
    cname: decodePrincipalName(f.required(4, "cname"), `${w} cname`),
    ticket: decodeTicketNode(f.required(5, "ticket")),
    encPart: decodeEncryptedData(f.required(6, "enc-part"), `${w} enc-part`),
  };
}

export const decodeKdcRep = (bytes: Uint8Array): KdcRep => decodeKdcRepNode(decodeDer(bytes));

/** EncKDCRepPart (RFC 4120 §5.4.2), inside EncASRepPart [APPLICATION 25] or EncTGSRepPart [APPLICATION 26]. */
export interface EncKdcRepPart {
  readonly key: KeyBlock;
  readonly nonce: number;
  readonly keyExpiration: Date | undefined;
  readonly flags: number;
  readonly authTime: Date;
  readonly startTime: Date | undefined;
  readonly endTime: Date;
  readonly renewTill: Date | undefined;
  readonly srealm: string;
  readonly sname: PrincipalName;
}

/**
 * Decodes EncASRepPart or EncTGSRepPart. Either tag is accepted for either reply: some KDCs send
 * EncTGSRepPart in an AS-REP (RFC 4120 §5.4.2 asks clients to allow it).
 */
export function decodeEncKdcRepPart(bytes: Uint8Array): EncKdcRepPart & { readonly tag: 25 | 26 } {
  const top = decodeDer(bytes);
  if (top.cls !== 1 || (top.tag !== 25 && top.tag !== 26)) throw new DerError("EncKDCRepPart: expected [APPLICATION 25] or [APPLICATION 26]", top.offset);
  const w = top.tag === 25 ? "EncASRepPart" : "EncTGSRepPart";
  const f = fields(application(top, top.tag, w), w);
  sequence(f.required(1, "last-req"), `${w} last-req`);
  const exp = f.optional(3);
  return {
    tag: top.tag as 25 | 26,
    key: decodeEncryptionKey(f.required(0, "key"), `${w} key`),
    nonce: uint32(f.required(2, "nonce"), `${w} nonce`),
    keyExpiration: optionalTime(exp, `${w} key-expiration`),
    flags: kerberosFlags(f.required(4, "flags"), `${w} flags`),
    authTime: generalizedTime(f.required(5, "authtime"), `${w} authtime`),
    startTime: optionalTime(f.optional(6), `${w} starttime`),
    endTime: generalizedTime(f.required(7, "endtime"), `${w} endtime`),
    renewTill: optionalTime(f.optional(8), `${w} renew-till`),
    srealm: kerberosString(f.required(9, "srealm"), `${w} srealm`),
    sname: decodePrincipalName(f.required(10, "sname"), `${w} sname`),
  };
}

/** Authenticator ([APPLICATION 2], RFC 4120 §5.5.1). */
export interface Authenticator {
  readonly crealm: string;
  readonly cname: PrincipalName;
  readonly cksum: Checksum | undefined;
  readonly cusec: number;
  readonly ctime: Date;
  readonly subkey: KeyBlock | undefined;
  readonly seqNumber: number | undefined;
}

export function encodeAuthenticator(a: Authenticator): Uint8Array {
  return encodeApplication(
    2,
    encodeFields([
      [0, encodeInteger(PVNO)],
      [1, encodeKerberosString(a.crealm)],
      [2, encodePrincipalName(a.cname)],
      [3, a.cksum === undefined ? undefined : encodeChecksum(a.cksum)],
      [4, encodeInteger(a.cusec)],
      [5, encodeGeneralizedTime(a.ctime)],
      [6, a.subkey === undefined ? undefined : encodeEncryptionKey(a.subkey)],
      [7, a.seqNumber === undefined ? undefined : encodeUint32(a.seqNumber)],
    ]),
  );
}

export function decodeAuthenticator(bytes: Uint8Array): Authenticator {
  const w = "Authenticator";
  const f = fields(application(decodeDer(bytes), 2, w), w);
  const vno = f.required(0, "authenticator-vno");
  if (int32(vno, `${w} authenticator-vno`) !== PVNO) throw new DerError(`${w} authenticator-vno is not 5`, vno.offset);
  const ck = f.optional(3);
  const sub = f.optional(6);
  const seq = f.optional(7);
  return {
    crealm: kerberosString(f.required(1, "crealm"), `${w} crealm`),
    cname: decodePrincipalName(f.required(2, "cname"), `${w} cname`),
    cksum: ck === undefined ? undefined : decodeChecksum(ck, `${w} cksum`),
    cusec: microseconds(f.required(4, "cusec"), `${w} cusec`),
    ctime: generalizedTime(f.required(5, "ctime"), `${w} ctime`),
    subkey: sub === undefined ? undefined : decodeEncryptionKey(sub, `${w} subkey`),
    seqNumber: seq === undefined ? undefined : uint32(seq, `${w} seq-number`),
  };
}

/** AP-REQ ([APPLICATION 14], RFC 4120 §5.5.1). */
export interface ApReq {
  readonly options: number;
  readonly ticket: Ticket;
  readonly authenticator: EncryptedData;
}

export function encodeApReq(options: number, ticket: Ticket | Uint8Array, authenticator: EncryptedData): Uint8Array {
  return encodeApplication(
    14,
    encodeFields([
      [0, encodeInteger(PVNO)],
      [1, encodeInteger(MsgType.AP_REQ)],
      [2, encodeKerberosFlags(options)],
      [3, ticket instanceof Uint8Array ? ticket : ticket.raw],
      [4, encodeEncryptedData(authenticator)],
    ]),
  );
}

export function decodeApReq(bytes: Uint8Array): ApReq {
  const w = "AP-REQ";
  const f = fields(application(decodeDer(bytes), 14, w), w);
  checkPvno(f.required(0, "pvno"), w);
  checkMsgType(f.required(1, "msg-type"), w, MsgType.AP_REQ);
  return {
    options: kerberosFlags(f.required(2, "ap-options"), `${w} ap-options`),
    ticket: decodeTicketNode(f.required(3, "ticket")),
    authenticator: decodeEncryptedData(f.required(4, "authenticator"), `${w} authenticator`),
  };
}

export function decodeApRep(bytes: Uint8Array): EncryptedData {
  const w = "AP-REP";
  const f = fields(application(decodeDer(bytes), 15, w), w);
  checkPvno(f.required(0, "pvno"), w);
  checkMsgType(f.required(1, "msg-type"), w, MsgType.AP_REP);
  return decodeEncryptedData(f.required(2, "enc-part"), `${w} enc-part`);
}

/** EncAPRepPart ([APPLICATION 27]): ctime and cusec of the authenticator, the acceptor's subkey and sequence number. */
export interface EncApRepPart {
  readonly ctime: Date;
  readonly cusec: number;
  readonly subkey: KeyBlock | undefined;
  readonly seqNumber: number | undefined;
}

export function decodeEncApRepPart(bytes: Uint8Array): EncApRepPart {
  const w = "EncAPRepPart";
  const f = fields(application(decodeDer(bytes), 27, w), w);
  const sub = f.optional(2);
  const seq = f.optional(3);
  return {
    ctime: generalizedTime(f.required(0, "ctime"), `${w} ctime`),
    cusec: microseconds(f.required(1, "cusec"), `${w} cusec`),
    subkey: sub === undefined ? undefined : decodeEncryptionKey(sub, `${w} subkey`),
    seqNumber: seq === undefined ? undefined : uint32(seq, `${w} seq-number`),
  };
}

/** KRB-ERROR ([APPLICATION 30], RFC 4120 §5.9.1). */
export interface KrbErrorMessage {
  readonly ctime: Date | undefined;
  readonly cusec: number | undefined;
  readonly stime: Date;
  readonly susec: number;
  readonly errorCode: number;
  readonly crealm: string | undefined;
  readonly cname: PrincipalName | undefined;
  readonly realm: string;
  readonly sname: PrincipalName;
  readonly eText: string | undefined;
  readonly eData: Uint8Array | undefined;
}

export function decodeKrbErrorNode(top: DerNode): KrbErrorMessage {
  const w = "KRB-ERROR";
  const f = fields(application(top, 30, w), w);
  checkPvno(f.required(0, "pvno"), w);
  checkMsgType(f.required(1, "msg-type"), w, MsgType.KRB_ERROR);
  const cusec = f.optional(3);
  const crealm = f.optional(7);
  const cname = f.optional(8);
  const etext = f.optional(11);
  const edata = f.optional(12);
  return {
    ctime: optionalTime(f.optional(2), `${w} ctime`),
    cusec: cusec === undefined ? undefined : microseconds(cusec, `${w} cusec`),
    stime: generalizedTime(f.required(4, "stime"), `${w} stime`),
    susec: microseconds(f.required(5, "susec"), `${w} susec`),
    errorCode: int32(f.required(6, "error-code"), `${w} error-code`),
    crealm: crealm === undefined ? undefined : kerberosString(crealm, `${w} crealm`),
    cname: cname === undefined ? undefined : decodePrincipalName(cname, `${w} cname`),
    realm: kerberosString(f.required(9, "realm"), `${w} realm`),
    sname: decodePrincipalName(f.required(10, "sname"), `${w} sname`),
    eText: etext === undefined ? undefined : kerberosString(etext, `${w} e-text`),
    eData: edata === undefined ? undefined : octetString(edata, `${w} e-data`).slice(),
  };
}

export const decodeKrbError = (bytes: Uint8Array): KrbErrorMessage => decodeKrbErrorNode(decodeDer(bytes));

/** The reply of a KDC: an AS-REP, a TGS-REP or a KRB-ERROR (anything else is a DerError). */
export type KdcReply = { readonly kind: "rep"; readonly rep: KdcRep } | { readonly kind: "error"; readonly error: KrbErrorMessage };

export function decodeKdcReply(bytes: Uint8Array): KdcReply {
  const top = decodeDer(bytes);
  if (top.cls === 1 && top.tag === 30) return { kind: "error", error: decodeKrbErrorNode(top) };
  if (top.cls === 1 && (top.tag === 11 || top.tag === 13)) return { kind: "rep", rep: decodeKdcRepNode(top) };
  throw new DerError("a KDC reply must be [APPLICATION 11] (AS-REP), [APPLICATION 13] (TGS-REP) or [APPLICATION 30] (KRB-ERROR)", top.offset);
}

