// The first Kerberos 5 message types (RFC 4120 §5), on the DER codec: PrincipalName, EncryptionKey,
// EncryptedData, Ticket and EncTicketPart. The rest (AS/TGS-REQ/REP, AP-REQ/REP, KRB-ERROR) come with
// the exchanges that use them.
import {
  application,
  decodeDer,
  encodeApplication,
  encodeFields,
  encodeInteger,
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
