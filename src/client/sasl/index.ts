export type { SaslMechanism } from "./mechanism.ts";
export { digestMd5, parseDigestChallenge } from "./digest-md5.ts";
export type { DigestMd5Options, DigestChallenge } from "./digest-md5.ts";
export { SaslError, SaslErrorReason, redactSaslText } from "./errors.ts";
