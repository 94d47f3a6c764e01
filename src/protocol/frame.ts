// Framing: every message is a 4-byte big-endian length and then that many bytes. FrameDecoder turns
// arbitrary chunks into whole frames without re-concatenating its input: a frame that arrives whole
// is handed out as a view of its chunk, a split one is copied once into a buffer of its exact size.
import { OpCode, Xid } from "./constants.ts";
import { ProtocolError, ProtocolErrorKind } from "./errors.ts";
import { DEFAULT_MAX_BUFFER, JuteWriter, frameArenaWriter } from "./jute.ts";

export class FrameDecoder {
  readonly maxFrameSize: number;
  /** A length prefix split across chunks, gathered (made by the first such split). */
  private header: Uint8Array | null = null;
  private headerFill = 0;
  private frame: Uint8Array | null = null;
  private frameFill = 0;
  private failed: ProtocolError | null = null;

  constructor(maxFrameSize = DEFAULT_MAX_BUFFER) {
    this.maxFrameSize = maxFrameSize;
  }

  /** Bytes held for an unfinished frame. */
  get buffered(): number {
    return this.headerFill + this.frameFill;
  }

  /**
   * Feeds one chunk; returns the frames it completed (payloads without the length prefix). Views
   * into `chunk` are only valid until the caller is done with this call's frames. After a bad
   * length the decoder stays failed: the stream cannot be re-synchronised.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    this.each(chunk, (bytes, start, end) => {
      out.push(bytes.subarray(start, end));
      return true;
    });
    return out;
  }

  /**
   * Feeds one chunk and calls `onFrame(bytes, start, end)` for each frame it completes, in order: the payload is
   * bytes[start, end), `bytes` a plain Uint8Array (a view of the whole chunk, or the copy of a frame that came
   * in pieces), valid during the call. No object per frame: the connection's path (push() is built on it).
   * `onFrame` returning false stops the loop (the rest of the chunk is dropped: the link is being closed).
   * Throws a ProtocolError for a bad length, after the frames before it; the decoder then stays failed.
   */
  each(chunk: Uint8Array, onFrame: (bytes: Uint8Array, start: number, end: number) => boolean): void {
    if (this.failed) throw this.failed;
    // A plain Uint8Array view, also of a Node Buffer chunk, made once per chunk: Buffer's subarray goes through
    // the species constructor (a FastBuffer), and so would every string read from the frame; Buffer's slice
    // does not even copy.
    // (Object.getPrototypeOf is a runtime call in V8; the constructor is a plain property load.)
    const bytes = chunk.constructor === Uint8Array ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const end = bytes.length;
    let off = 0;
    while (off < end) {
      if (this.frame === null) {
        let len: number;
        if (this.headerFill === 0 && end - off >= 4) {
          len = ((bytes[off]! << 24) | (bytes[off + 1]! << 16) | (bytes[off + 2]! << 8) | bytes[off + 3]!) | 0;
          off += 4;
        } else {
          const h = (this.header ??= new Uint8Array(4));
          while (this.headerFill < 4 && off < end) h[this.headerFill++] = bytes[off++]!;
          if (this.headerFill < 4) break;
          len = ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) | 0;
          this.headerFill = 0;
        }
        this.checkLength(len);
        if (end - off >= len) {
          const start = off;
          off += len;
          if (!onFrame(bytes, start, off)) return;
        } else {
          // Allocation happens only after the length passed the bound check above.
          this.frame = new Uint8Array(len);
          this.frameFill = 0;
        }
      } else {
        const take = Math.min(this.frame.length - this.frameFill, end - off);
        this.frame.set(bytes.subarray(off, off + take), this.frameFill);
        this.frameFill += take;
        off += take;
        if (this.frameFill === this.frame.length) {
          const whole = this.frame;
          this.frame = null;
          this.frameFill = 0;
          if (!onFrame(whole, 0, whole.length)) return;
        }
      }
    }
  }

  private checkLength(len: number): void {
    if (len < 0 || len > this.maxFrameSize) {
      this.failed = new ProtocolError(
        ProtocolErrorKind.FRAME_TOO_LARGE,
        `frame length ${len} is outside 0..${this.maxFrameSize} (maxBufferSize)`,
      );
      throw this.failed;
    }
  }
}

/**
 * The writer frames are encoded with unless one is given. Encoding is synchronous and runs no caller code, and
 * every frame is handed out by toBytes (written in place in the frames arena: no copy), so one per process does: a
 * writer per session or per frame was two buffers outside V8's heap to allocate, account and sweep per connect + close.
 */
export const frameWriter: JuteWriter = frameArenaWriter();

/** Encodes one length-prefixed frame whose payload `write` produces (from `value`: a record's writer needs no closure). */
export function encodeFrame<T>(write: (w: JuteWriter, value: T) => void, value?: T, w: JuteWriter = frameWriter): Uint8Array {
  w.reset();
  const at = w.beginFrame();
  write(w, value as T);
  w.finishFrame(at);
  return w.toBytes();
}

/**
 * Encodes RequestHeader + body as one frame. Every request goes through here: the header (xid, type;
 * records.ts writeRequestHeader) is written in place, with no closure or header object per call.
 */
export function encodeRequest<T>(
  xid: number,
  type: number,
  write?: (w: JuteWriter, body: T) => void,
  body?: T,
  w: JuteWriter = frameWriter,
): Uint8Array {
  w.reset();
  const at = w.beginFrame();
  w.int(xid).int(type);
  if (write) write(w, body as T);
  w.finishFrame(at);
  return w.toBytes();
}

/** The ping frame never changes: 00 00 00 08 ff ff ff fe 00 00 00 0b. */
export const PING_FRAME: Uint8Array = encodeRequest(Xid.PING, OpCode.ping);
