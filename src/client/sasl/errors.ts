// Errors from SASL mechanisms. Messages name the failing step and directive, never a secret:
// no password, no response digest, no rspauth value.
export const SaslErrorReason = {
  /** The server's challenge is malformed or breaks RFC 2831's rules. */
  BadChallenge: "bad-challenge",
  /** The server asks for something this client does not do (e.g. only auth-int/auth-conf). */
  Unsupported: "unsupported",
  /** The server could not prove it knows the password (rspauth missing or wrong). */
  ServerAuthFailed: "server-auth-failed",
  /** step() called out of order (after completion, or with an unexpected token). */
  State: "state",
  /** A name or password cannot be encoded as the server's charset requires. */
  Encoding: "encoding",
} as const;
export type SaslErrorReason = (typeof SaslErrorReason)[keyof typeof SaslErrorReason];

export class SaslError extends Error {
  readonly reason: SaslErrorReason;
  readonly mechanism: string;

  constructor(mechanism: string, reason: SaslErrorReason, message: string) {
    super(`${mechanism}: ${message}`);
    this.name = "SaslError";
    this.mechanism = mechanism;
    this.reason = reason;
  }
}

// Digest values that must not reach logs: the client's proof and the server's proof.
const SECRET_DIRECTIVES = /\b(response|rspauth)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)/gi;

/** Replaces response= and rspauth= values in a SASL token text with "<redacted>", for logging. */
export function redactSaslText(text: string): string {
  return text.replace(SECRET_DIRECTIVES, (_m, name: string) => `${name}=<redacted>`);
}
