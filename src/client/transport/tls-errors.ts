// TLS failures that retrying cannot heal (a wrong CA, name, certificate or protocol version): the
// first connect gives up at once when every host failed with one of them.
//
// The runtimes word them differently and deliver them at different moments. Node and Bun (OpenSSL,
// BoringSSL) set an error code. Deno (rustls) usually maps the alert to the same code, but not on
// every path: a refusal met while writing, or reported by another layer, carries only rustls's
// wording ("received fatal alert: BadCertificate", "invalid peer certificate: UnknownIssuer").
// Under TLS 1.3 the server's alert arrives after the handshake has "succeeded", i.e. as a socket
// error on an open link, so it is looked for in the error and every cause, by code or by wording.
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
  /^ERR_SSL_(SSLV3|TLSV1|TLSV13)_ALERT_(BAD_CERTIFICATE|CERTIFICATE_|UNKNOWN_CA|ACCESS_DENIED|PROTOCOL_VERSION|UNSUPPORTED_CERTIFICATE)|^ERR_SSL_UNSUPPORTED_PROTOCOL|^ERR_SSL_NO_PROTOCOLS_AVAILABLE/;

// rustls's words (its AlertDescription and CertificateError names) and OpenSSL's alert strings.
const WORDING = new RegExp(
  [
    "received fatal alert: (BadCertificate|UnsupportedCertificate|CertificateRevoked|CertificateExpired|CertificateUnknown|CertificateRequired|UnknownCA|AccessDenied|ProtocolVersion)\\b",
    "invalid peer certificate",
    "peer is incompatible: .*(version|Tls1[23]NotOffered)",
    "\\b(sslv3|tlsv1|tlsv13) alert (bad certificate|certificate (required|unknown|expired|revoked)|unknown ca|access denied|protocol version|unsupported certificate)",
  ].join("|"),
  "i",
);

/** True when `e` or one of its causes is a TLS configuration error, by its code or its wording. */
export function isCertificateError(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && (CERT_CODES.has(code) || ALERTS.test(code))) return true;
    if (WORDING.test(c.message)) return true;
  }
  return false;
}
