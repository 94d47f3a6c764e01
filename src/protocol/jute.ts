// Jute binary encoding (ZooKeeper's BinaryInputArchive/BinaryOutputArchive): big-endian ints and longs,
// length-prefixed buffers, strings and vectors where a length of -1 means null.
import { ProtocolError, ProtocolErrorKind } from "./errors.ts";

const utf8Encoder = new TextEncoder();
// Not fatal: the Java writer emits CESU-8 for characters outside the BMP in free-form strings; those
// decode to U+FFFD instead of failing the whole reply.
// ignoreBOM keeps a leading U+FEFF: in a node name or data it is a character, not a byte-order mark.
const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Default jute.maxbuffer of both server and Java client. */
export const DEFAULT_MAX_BUFFER = 0xfffff;

export class JuteWriter {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;

  constructor(initialCapacity = 256) {
    this.buf = new Uint8Array(initialCapacity);
    this.view = new DataView(this.buf.buffer);
  }

  get length(): number {
    return this.pos;
  }

  private ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  int(v: number): this {
    this.ensure(4);
    this.view.setInt32(this.pos, v);
    this.pos += 4;
    return this;
  }

  long(v: bigint): this {
    this.ensure(8);
    this.view.setBigInt64(this.pos, v);
    this.pos += 8;
    return this;
  }

  bool(v: boolean): this {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
    return this;
  }

  byte(v: number): this {
    this.ensure(1);
    this.view.setInt8(this.pos++, v);
    return this;
  }

  buffer(v: Uint8Array | null): this {
    if (v === null) return this.int(-1);
    this.ensure(4 + v.length);
    this.view.setInt32(this.pos, v.length);
    this.buf.set(v, this.pos + 4);
    this.pos += 4 + v.length;
    return this;
  }

  ustring(v: string | null): this {
    if (v === null) return this.int(-1);
    // Worst case 3 bytes per UTF-16 unit; encodeInto avoids an intermediate array.
    this.ensure(4 + v.length * 3);
    const { written } = utf8Encoder.encodeInto(v, this.buf.subarray(this.pos + 4));
    this.view.setInt32(this.pos, written);
    this.pos += 4 + written;
    return this;
  }

  vector<T>(items: readonly T[] | null, write: (w: JuteWriter, item: T) => void): this {
    if (items === null) return this.int(-1);
    this.int(items.length);
    for (const item of items) write(this, item);
    return this;
  }

  /** Reserves the 4-byte frame length; finishFrame patches it. */
  beginFrame(): number {
    const at = this.pos;
    this.int(0);
    return at;
  }

  finishFrame(at: number): void {
    this.view.setInt32(at, this.pos - at - 4);
  }

  /** A copy of the bytes written so far. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** The bytes written so far without copying; valid until the next write or reset. */
  written(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }
}

export class JuteReader {
  private readonly buf: Uint8Array;
  private readonly view: DataView;
  private pos: number;
  private readonly end: number;
  /** Largest length accepted for one buffer, string or vector. */
  readonly maxLength: number;

  constructor(buf: Uint8Array, offset = 0, end = buf.length, maxLength = DEFAULT_MAX_BUFFER * 2) {
    this.buf = buf;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = offset;
    this.end = end;
    this.maxLength = maxLength;
  }

  get offset(): number {
    return this.pos;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number, what: string): void {
    if (this.pos + n > this.end) {
      throw new ProtocolError(
        ProtocolErrorKind.SHORT_INPUT,
        `short input: ${what} needs ${n} bytes at offset ${this.pos}, ${this.end - this.pos} left`,
      );
    }
  }

  int(): number {
    this.need(4, "int");
    const v = this.view.getInt32(this.pos);
    this.pos += 4;
    return v;
  }

  long(): bigint {
    this.need(8, "long");
    const v = this.view.getBigInt64(this.pos);
    this.pos += 8;
    return v;
  }

  /** A long that is known to fit a double exactly (times in ms). */
  longNumber(): number {
    return Number(this.long());
  }

  bool(): boolean {
    this.need(1, "boolean");
    return this.buf[this.pos++] !== 0;
  }

  byte(): number {
    this.need(1, "byte");
    return this.view.getInt8(this.pos++);
  }

  private length(what: string): number {
    const n = this.int();
    if (n < -1 || n > this.maxLength) {
      throw new ProtocolError(ProtocolErrorKind.BAD_LENGTH, `bad ${what} length ${n} at offset ${this.pos - 4}`);
    }
    return n;
  }

  buffer(): Uint8Array | null {
    const n = this.length("buffer");
    if (n === -1) return null;
    this.need(n, "buffer");
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  ustring(): string | null {
    const n = this.length("string");
    if (n === -1) return null;
    this.need(n, "string");
    const s = utf8Decoder.decode(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return s;
  }

  /** A string field the protocol never sends as null; null reads as "". */
  string(): string {
    return this.ustring() ?? "";
  }

  vector<T>(read: (r: JuteReader) => T): T[] | null {
    const n = this.length("vector");
    if (n === -1) return null;
    // Every element takes at least one byte, so a count beyond the bytes left is malformed; checking
    // here stops a hostile count from driving a huge loop or allocation.
    if (n > this.remaining) {
      throw new ProtocolError(ProtocolErrorKind.SHORT_INPUT, `vector of ${n} elements cannot fit in ${this.remaining} bytes`);
    }
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = read(this);
    return out;
  }
}
