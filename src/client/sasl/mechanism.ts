// The client side of one SASL mechanism, driven by the connection's opcode-102 exchange.
export interface SaslMechanism {
  /** Mechanism name as registered with IANA, e.g. "DIGEST-MD5". */
  readonly name: string;
  /** The first token to send; empty when the mechanism has no initial response (DIGEST-MD5). */
  initial(): Uint8Array;
  /**
   * Consumes a server challenge. Returns the token to send back, or null when the exchange is
   * finished and nothing more is to be sent. Throws SaslError on a bad or failed exchange.
   */
  step(challenge: Uint8Array): Uint8Array | null;
  /** True once the server has been verified and the exchange is over. */
  readonly complete: boolean;
}
