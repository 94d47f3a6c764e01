// Typed failures of the wire layer. The client maps these to ZooKeeperError (MARSHALLINGERROR or a
// dropped connection); nothing in this layer throws anything else.

export const ProtocolErrorKind = {
  SHORT_INPUT: "SHORT_INPUT",         // a read ran past the end of the record
  BAD_LENGTH: "BAD_LENGTH",           // a length field is negative (other than -1) or too large
  FRAME_TOO_LARGE: "FRAME_TOO_LARGE", // a frame header declares more than maxBufferSize
  BAD_FRAME: "BAD_FRAME",             // a frame whose content does not fit its declared shape
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
} as const;
export type ProtocolErrorKind = (typeof ProtocolErrorKind)[keyof typeof ProtocolErrorKind];

export class ProtocolError extends Error {
  readonly kind: ProtocolErrorKind;
  constructor(kind: ProtocolErrorKind, message: string) {
    super(message);
    this.name = "ProtocolError";
    this.kind = kind;
  }
}
