// TLS failures that retrying cannot heal (a wrong CA, name, certificate or protocol version): the
// first connect gives up at once when every host failed with one of them.
const CERT_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "ERR_NET_PERMISSION", // not TLS, but just as permanent: Deno without --allow-net (transport.ts)
]);

const ALERTS =
  /^ERR_SSL_(SSLV3|TLSV1)_ALERT_(BAD_CERTIFICATE|CERTIFICATE_|UNKNOWN_CA|ACCESS_DENIED|PROTOCOL_VERSION)|^ERR_SSL_UNSUPPORTED_PROTOCOL|^ERR_SSL_NO_PROTOCOLS_AVAILABLE/;

/** True when `e` or one of its causes carries a TLS configuration error code. */
export function isCertificateError(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && (CERT_CODES.has(code) || ALERTS.test(code))) return true;
  }
  return false;
}
