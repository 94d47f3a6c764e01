// TLS options of `ConnectOptions.tls` (types only, re-exported by types.ts): the transport and the TLS file
// loader use them without importing the rest of the public types.

/** A TLS protocol version, as `minVersion` and `maxVersion` take it. */
export type TlsVersion = "TLSv1.3" | "TLSv1.2" | "TLSv1.1" | "TLSv1";

/** A private key in PEM with its own passphrase (`TlsOptions.key`). */
export interface TlsKey {
  /** The key, PEM. */
  pem: string | Uint8Array;
  /** Its passphrase (default: `TlsOptions.passphrase`); never logged. */
  passphrase?: string;
}

/** A PFX / PKCS#12 bundle with its own passphrase (`TlsOptions.pfx`). */
export interface TlsPfx {
  /** The bundle's bytes (or its base64 text). */
  buf: string | Uint8Array;
  /** Its passphrase (default: `TlsOptions.passphrase`); never logged. */
  passphrase?: string;
}

/** A distinguished name of a certificate, by attribute (e.g. `{ O: "acme", CN: "zk1" }`; an array where one repeats). */
export interface TlsCertificateName {
  /** Country. */
  C?: string | string[];
  /** State or province. */
  ST?: string | string[];
  /** Locality. */
  L?: string | string[];
  /** Organization. */
  O?: string | string[];
  /** Organizational unit. */
  OU?: string | string[];
  /** Common name. */
  CN?: string | string[];
}

/** The server's certificate as `TlsOptions.checkServerIdentity` gets it (the fields of the tls module's PeerCertificate it can rely on). */
export interface TlsPeerCertificate {
  /** The subject's name. */
  subject: TlsCertificateName;
  /** The issuer's name. */
  issuer: TlsCertificateName;
  /** The subject alternative names, e.g. `"DNS:zk1.example.com, IP Address:10.0.0.1"`. */
  subjectaltname?: string;
  /** Start of validity, e.g. `"Sep  3 20:10:18 2025 GMT"`. */
  valid_from: string;
  /** End of validity. */
  valid_to: string;
  /** The serial number, hex. */
  serialNumber: string;
  /** The SHA-256 fingerprint, colon-separated hex. */
  fingerprint256: string;
  /** The certificate, DER. */
  raw: Uint8Array;
}

/** A context made by the tls module's `createSecureContext()` (`TlsOptions.secureContext`). */
export interface TlsSecureContext {
  /** The runtime's native context. */
  context: unknown;
}

/**
 * TLS options of `ConnectOptions.tls`: the connect options of Node's tls module that apply to a ZooKeeper client port,
 * passed to the default transport's `tls.connect` as given (a `tls.ConnectionOptions` object fits as it is), plus
 * `caFile`, `certFile` and `keyFile`: PEM files read again for each new connection, so a rotated certificate or CA
 * bundle is used from the next reconnect on. The same options serve every host, every reconnect and the read-only
 * probes. The server's certificate is verified against `servername` when given, else against the connect string's
 * host. Keys and passphrases are never logged.
 */
export interface TlsOptions {
  /** Trusted CA certificates, PEM (default: the runtime's trust store). */
  ca?: string | Uint8Array | (string | Uint8Array)[];
  /**
   * Files of trusted CA certificates, PEM, read for each new connection (added to `ca`). An unreadable file or one
   * with no complete PEM block fails that connection attempt (code `ERR_TLS_FILE`); the next attempt reads it again.
   */
  caFile?: string | string[];
  /** The client certificate chain's file, PEM, read for each new connection (instead of `cert`). */
  certFile?: string;
  /** The client private key's file, PEM, read for each new connection (instead of `key`; `passphrase` applies). */
  keyFile?: string;
  /** The client certificate chain, PEM: mutual TLS (with `key`); the server records `x509:<subject DN>`. */
  cert?: string | Uint8Array | (string | Uint8Array)[];
  /** The client's private key, PEM (with `cert`). */
  key?: string | Uint8Array | (string | Uint8Array | TlsKey)[];
  /** The client certificate and key as one PFX / PKCS#12 bundle, instead of `cert` and `key`. */
  pfx?: string | Uint8Array | (string | Uint8Array | TlsPfx)[];
  /** The passphrase of `key` or `pfx`; never logged. */
  passphrase?: string;
  /** Certificate revocation lists, PEM. */
  crl?: string | Uint8Array | (string | Uint8Array)[];
  /** The name to check the server's certificate against, also sent as SNI (default: the connect string's host; SNI only for names). */
  servername?: string;
  /** false turns the certificate check off (tests only; default true). */
  rejectUnauthorized?: boolean;
  /** Replaces the host name check (return an Error to refuse the certificate, undefined to accept it). */
  checkServerIdentity?(hostname: string, cert: TlsPeerCertificate): Error | undefined;
  /** The lowest TLS version offered (default: the runtime's, TLSv1.2). */
  minVersion?: TlsVersion;
  /** The highest TLS version offered (default: the runtime's, TLSv1.3). */
  maxVersion?: TlsVersion;
  /** The cipher suites offered, OpenSSL cipher list format. */
  ciphers?: string;
  /** The ECDH curves offered, e.g. `"P-256:X25519"`. */
  ecdhCurve?: string;
  /** The signature algorithms offered, e.g. `"ecdsa_secp256r1_sha256:rsa_pss_rsae_sha256"`. */
  sigalgs?: string;
  /** The smallest DH parameter size accepted, bits. */
  minDHSize?: number;
  /** A context from the tls module's `createSecureContext()`, used instead of `ca`, `cert`, `key` and the others. */
  secureContext?: TlsSecureContext;
}

/** `ConnectOptions.tls`: true, `TlsOptions`, or a function giving the current `TlsOptions` for each new connection. */
export type TlsSetting = boolean | TlsOptions | (() => TlsOptions | Promise<TlsOptions>);
