// Kerberos 5 for SASL GSSAPI (issue 30): cryptosystems, the DER codec, keytab and FILE ccache readers,
// the messages, the KDC client (AS, TGS; UDP and TCP), krb5.conf, the krb5 GSS-API mechanism (RFC 4121)
// and the RFC 4752 SASL client. Not wired into the session yet.
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
export { KrbCryptoError, KrbCryptoErrorReason, DerError, KeytabError, CcacheError, KerberosError, KerberosErrorReason, krbErrorName } from "./errors.ts";
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
  encodeEncTicketPart,
  MsgType,
  PaType,
  KeyUsage,
  KdcOptions,
  ApOptions,
  decodeChecksum,
  encodeChecksum,
  decodePaData,
  encodePaData,
  decodeMethodData,
  encodeMethodData,
  decodeEtypeInfo2,
  encodeEtypeInfo2,
  decodePaEncTsEnc,
  encodePaEncTsEnc,
  decodeKdcReqBody,
  encodeKdcReqBody,
  decodeKdcReq,
  encodeKdcReq,
  decodeKdcRep,
  encodeKdcRep,
  decodeEncKdcRepPart,
  encodeEncKdcRepPart,
  decodeAuthenticator,
  encodeAuthenticator,
  decodeApReq,
  encodeApReq,
  decodeApRep,
  encodeApRep,
  decodeEncApRepPart,
  encodeEncApRepPart,
  decodeKrbError,
  encodeKrbError,
  decodeKdcReply,
} from "./messages.ts";
export type {
  PrincipalName,
  EncryptedData,
  Ticket,
  EncTicketPart,
  Checksum,
  PaData,
  EtypeInfo2Entry,
  PaEncTsEnc,
  KdcReqBody,
  KdcReq,
  KdcRep,
  EncKdcRepPart,
  Authenticator,
  ApReq,
  EncApRepPart,
  KrbErrorMessage,
  KdcReply,
} from "./messages.ts";
export { parseKrb5Conf, loadKrb5Conf, parseKdcAddress, kdcsOf, realmOfHost, realmSection, parseDuration } from "./krb5conf.ts";
export type { Krb5Config, KdcAddress, ProfileSection, ProfileValue, ReadText } from "./krb5conf.ts";
export { asExchange, tgsExchange, sendToKdcs, tcpExchange, dgramExchange, tgsPrincipal, kdcError } from "./kdc.ts";
export type { KdcContext, KdcTransportOptions, KerberosCredential, ClientKeySource, AsRequest, TgsRequest, UdpExchange } from "./kdc.ts";
export {
  KRB5_MECH_OID,
  TokId,
  GssFlags,
  GSS_CHECKSUM_TYPE,
  GssContext,
  frameContextToken,
  unframeContextToken,
  encodeGssChecksum,
  decodeGssChecksum,
  initSecContext,
  acceptApRep,
  acceptSecContext,
  buildApRep,
  wrap,
  unwrap,
  getMic,
  verifyMic,
} from "./gss.ts";
export type { GssChecksum, InitiatorOptions, InitiatorStart, AcceptedContext, Unwrapped } from "./gss.ts";
export { KerberosLogin, gssapiMechanism, gssapiClient, parsePrincipal, describeCredential } from "./sasl-gssapi.ts";
export type { KerberosLoginOptions, GssapiMechanismOptions, GssapiSaslClient, GssapiClientOptions } from "./sasl-gssapi.ts";
