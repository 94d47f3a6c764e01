// Kerberos 5 building blocks for SASL GSSAPI (issue 30): cryptosystems, the DER codec, keytab and
// FILE ccache readers. Not wired into the SASL exchange yet.
export {
  Enctypes,
  ChecksumTypes,
  SUPPORTED_ENCTYPES,
  MAX_S2K_ITERATIONS,
  enctype,
  enctypeForChecksum,
  enctypeName,
  isSupportedEnctype,
  nfold,
  aesCtsEncrypt,
  aesCtsDecrypt,
} from "./crypto.ts";
export type { Enctype, DerivedKeyKind } from "./crypto.ts";
export * as der from "./der.ts";
export type { DerNode, DerLimits } from "./der.ts";
export { KrbCryptoError, KrbCryptoErrorReason, DerError, KeytabError, CcacheError } from "./errors.ts";
export { parseKeytab, loadKeytab, keysFor, samePrincipal, describeKeytab } from "./keytab.ts";
export type { Keytab, KeytabEntry, KeytabReadOptions } from "./keytab.ts";
export { parseCcache, loadCcache, defaultCcachePath, ticketFlagLetters, TicketFlags } from "./ccache.ts";
export type { Ccache, Credential, CcacheConfig, Address, AuthData, HeaderField } from "./ccache.ts";
export { KeyBlock, NameType, principalToString } from "./types.ts";
export type { Principal } from "./types.ts";
export {
  decodePrincipalName,
  encodePrincipalName,
  decodeEncryptionKey,
  encodeEncryptionKey,
  decodeEncryptedData,
  encodeEncryptedData,
  decodeTicket,
  decodeTicketNode,
  encodeTicket,
  decodeEncTicketPart,
} from "./messages.ts";
export type { PrincipalName, EncryptedData, Ticket, EncTicketPart } from "./messages.ts";
