// The other end of the client's Kerberos, for tests only: what a KDC encodes (AS-REP/TGS-REP, their
// encrypted parts, tickets, KRB-ERROR, METHOD-DATA, ETYPE-INFO2) and what a GSS-API acceptor does (accept
// the AP-REQ with the service keytab, answer an AP-REP), as a ZooKeeper server does in Java. The client
// (src/kerberos) only decodes these and only initiates.
import {
  encodeApplication,
  encodeFields,
  encodeGeneralizedTime,
  encodeInteger,
  encodeKerberosFlags,
  encodeKerberosString,
  encodeOctetString,
  encodeSequence,
  encodeUint32,
} from "../../../src/kerberos/der.ts";
import { enctype, enctypeName } from "../../../src/kerberos/crypto.ts";
import { DerError, KerberosError, KerberosErrorReason } from "../../../src/kerberos/errors.ts";
import { decodeGssChecksum, frameContextToken, GSS_CHECKSUM_TYPE, GssContext, TokId, unframeContextToken, type GssChecksum } from "../../../src/kerberos/gss.ts";
import { keysFor, type Keytab } from "../../../src/kerberos/keytab.ts";
import {
  ApOptions,
  decodeApReq,
  decodeAuthenticator,
  decodeEncTicketPart,
  encodeEncryptedData,
  encodeEncryptionKey,
  encodePaData,
  encodePrincipalName,
  KeyUsage,
  MsgType,
  type Authenticator,
  type EncApRepPart,
  type EncKdcRepPart,
  type EncryptedData,
  type EncTicketPart,
  type EtypeInfo2Entry,
  type KdcRep,
  type KrbErrorMessage,
  type PaData,
  type Ticket,
} from "../../../src/kerberos/messages.ts";
import { KeyBlock, principalToString, type Principal } from "../../../src/kerberos/types.ts";

const timeField = (t: Date | undefined): Uint8Array | undefined => (t === undefined ? undefined : encodeGeneralizedTime(t));
const hex4 = (n: number): string => `${(n >>> 8).toString(16).padStart(2, "0")} ${(n & 0xff).toString(16).padStart(2, "0")}`;

// ---------------------------------------------------------------------------------------------------
// A KDC's encoders

export function encodeTicket(t: Omit<Ticket, "raw">): Uint8Array {
  return encodeApplication(
    1,
    encodeFields([
      [0, encodeInteger(5)],
      [1, encodeKerberosString(t.realm)],
      [2, encodePrincipalName(t.sname)],
      [3, encodeEncryptedData(t.encPart)],
    ]),
  );
}

export const encodeMethodData = (list: readonly PaData[]): Uint8Array => encodeSequence(list.map(encodePaData));

export function encodeEtypeInfo2(entries: readonly EtypeInfo2Entry[]): Uint8Array {
  return encodeSequence(
    entries.map((e) =>
      encodeFields([
        [0, encodeInteger(e.etype)],
        [1, e.salt === undefined ? undefined : encodeKerberosString(e.salt)],
        [2, e.s2kparams === undefined ? undefined : encodeOctetString(e.s2kparams)],
      ]),
    ),
  );
}

export function encodeKdcRep(r: Omit<KdcRep, "ticket"> & { readonly ticket: Ticket | Uint8Array }): Uint8Array {
  return encodeApplication(
    r.msgType,
    encodeFields([
      [0, encodeInteger(5)],
      [1, encodeInteger(r.msgType)],
      [2, r.padata.length === 0 ? undefined : encodeSequence(r.padata.map(encodePaData))],
      [3, encodeKerberosString(r.crealm)],
      [4, encodePrincipalName(r.cname)],
      [5, r.ticket instanceof Uint8Array ? r.ticket : r.ticket.raw],
      [6, encodeEncryptedData(r.encPart)],
    ]),
  );
}

export function encodeEncKdcRepPart(tag: 25 | 26, p: EncKdcRepPart): Uint8Array {
  return encodeApplication(
    tag,
    encodeFields([
      [0, encodeEncryptionKey(p.key)],
      [1, encodeSequence([])],
      [2, encodeUint32(p.nonce)],
      [3, timeField(p.keyExpiration)],
      [4, encodeKerberosFlags(p.flags)],
      [5, encodeGeneralizedTime(p.authTime)],
      [6, timeField(p.startTime)],
      [7, encodeGeneralizedTime(p.endTime)],
      [8, timeField(p.renewTill)],
      [9, encodeKerberosString(p.srealm)],
      [10, encodePrincipalName(p.sname)],
    ]),
  );
}

/** AP-REP ([APPLICATION 15]): its enc-part holds EncAPRepPart (key usage 12). */
export function encodeApRep(encPart: EncryptedData): Uint8Array {
  return encodeApplication(
    15,
    encodeFields([
      [0, encodeInteger(5)],
      [1, encodeInteger(MsgType.AP_REP)],
      [2, encodeEncryptedData(encPart)],
    ]),
  );
}

export function encodeEncApRepPart(p: EncApRepPart): Uint8Array {
  return encodeApplication(
    27,
    encodeFields([
      [0, encodeGeneralizedTime(p.ctime)],
      [1, encodeInteger(p.cusec)],
      [2, p.subkey === undefined ? undefined : encodeEncryptionKey(p.subkey)],
      [3, p.seqNumber === undefined ? undefined : encodeUint32(p.seqNumber)],
    ]),
  );
}

export function encodeKrbError(e: KrbErrorMessage): Uint8Array {
  return encodeApplication(
    30,
    encodeFields([
      [0, encodeInteger(5)],
      [1, encodeInteger(MsgType.KRB_ERROR)],
      [2, timeField(e.ctime)],
      [3, e.cusec === undefined ? undefined : encodeInteger(e.cusec)],
      [4, encodeGeneralizedTime(e.stime)],
      [5, encodeInteger(e.susec)],
      [6, encodeInteger(e.errorCode)],
      [7, e.crealm === undefined ? undefined : encodeKerberosString(e.crealm)],
      [8, e.cname === undefined ? undefined : encodePrincipalName(e.cname)],
      [9, encodeKerberosString(e.realm)],
      [10, encodePrincipalName(e.sname)],
      [11, e.eText === undefined ? undefined : encodeKerberosString(e.eText)],
      [12, e.eData === undefined ? undefined : encodeOctetString(e.eData)],
    ]),
  );
}

/** Encodes an EncTicketPart (as a KDC does; for tests and a test acceptor), with an empty transited field. */
export function encodeEncTicketPart(t: EncTicketPart): Uint8Array {
  return encodeApplication(
    3,
    encodeFields([
      [0, encodeKerberosFlags(t.flags)],
      [1, encodeEncryptionKey(t.key)],
      [2, encodeKerberosString(t.client.realm)],
      [3, encodePrincipalName({ nameType: t.client.nameType, components: t.client.components })],
      [4, encodeFields([[0, encodeInteger(1)], [1, encodeOctetString(new Uint8Array(0))]])],
      [5, encodeGeneralizedTime(t.authTime)],
      [6, timeField(t.startTime)],
      [7, encodeGeneralizedTime(t.endTime)],
      [8, timeField(t.renewTill)],
    ]),
  );
}

// ---------------------------------------------------------------------------------------------------
// A GSS-API acceptor

export interface AcceptedContext {
  readonly context: GssContext;
  readonly ticket: EncTicketPart;
  readonly authenticator: Authenticator;
  readonly checksum: GssChecksum;
  readonly mutual: boolean;
}

/**
 * Accepts an initial context token with the service's keytab: decrypts the ticket (key usage 2) and the
 * authenticator (key usage 11), checks the names and the 0x8003 checksum.
 */
export function acceptSecContext(token: Uint8Array, keytab: Keytab, service: Principal): AcceptedContext {
  const { tokId, inner } = unframeContextToken(token);
  if (tokId !== TokId.AP_REQ) throw new KerberosError(KerberosErrorReason.BadReply, `expected an AP-REQ token (TOK_ID 01 00), got TOK_ID ${hex4(tokId)}`);
  let req;
  try {
    req = decodeApReq(inner);
  } catch (e) {
    if (e instanceof DerError) throw new KerberosError(KerberosErrorReason.BadReply, `malformed AP-REQ: ${e.message}`, { cause: e });
    throw e;
  }
  const keys = keysFor(keytab, service, { enctypes: [req.ticket.encPart.etype], ...(req.ticket.encPart.kvno !== undefined ? { kvno: req.ticket.encPart.kvno } : {}) });
  if (keys.length === 0) throw new KerberosError(KerberosErrorReason.NoKey, `no key of ${enctypeName(req.ticket.encPart.etype)} kvno ${req.ticket.encPart.kvno ?? "?"} for ${principalToString(service)} in the keytab`);
  const sk = keys[0].key;
  const ticket = decodeEncTicketPart(enctype(sk.enctype).decrypt(sk.key, KeyUsage.KDC_REP_TICKET, req.ticket.encPart.cipher));
  const authenticator = decodeAuthenticator(enctype(ticket.key.enctype).decrypt(ticket.key.key, KeyUsage.AP_REQ_AUTH, req.authenticator.cipher));
  if (authenticator.crealm !== ticket.client.realm || authenticator.cname.components.join("/") !== ticket.client.components.join("/")) {
    throw new KerberosError(KerberosErrorReason.BadReply, "the authenticator's client is not the ticket's");
  }
  if (authenticator.cksum === undefined || authenticator.cksum.type !== GSS_CHECKSUM_TYPE) throw new KerberosError(KerberosErrorReason.BadReply, "the authenticator has no 0x8003 checksum");
  const checksum = decodeGssChecksum(authenticator.cksum.value);
  const mutual = (req.options & ApOptions.MUTUAL_REQUIRED) !== 0;
  const context = new GssContext({
    role: "acceptor",
    sessionKey: ticket.key,
    initiatorSubkey: authenticator.subkey,
    sendSeq: authenticator.seqNumber ?? 0,
    recvSeq: authenticator.seqNumber ?? 0,
    flags: checksum.flags,
    client: ticket.client,
    server: service,
  });
  return { context, ticket, authenticator, checksum, mutual };
}

/**
 * The acceptor's AP-REP token (key usage 12), optionally with an acceptor subkey. Its seq-number is `seqNumber`,
 * else the context's (the initiator's), as MIT's and Java's acceptors always send one; the acceptor's tokens
 * then count from it.
 */
export function buildApRep(accepted: AcceptedContext, options: { subkey?: KeyBlock; seqNumber?: number } = {}): Uint8Array {
  const ctx = accepted.context;
  const seqNumber = options.seqNumber ?? Number(ctx.sendSeq);
  const part = encodeEncApRepPart({ ctime: accepted.authenticator.ctime, cusec: accepted.authenticator.cusec, subkey: options.subkey, seqNumber });
  if (options.subkey !== undefined) ctx.acceptorSubkey = options.subkey;
  ctx.sendSeq = BigInt(seqNumber);
  const e = enctype(ctx.sessionKey.enctype);
  return frameContextToken(TokId.AP_REP, encodeApRep({ etype: ctx.sessionKey.enctype, kvno: undefined, cipher: e.encrypt(ctx.sessionKey.key, KeyUsage.AP_REP_ENC_PART, part) }));
}
