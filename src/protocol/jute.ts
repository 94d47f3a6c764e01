// Jute binary encoding (ZooKeeper's BinaryInputArchive/BinaryOutputArchive): big-endian ints and longs,
// length-prefixed buffers, strings and vectors where a length of -1 means null.
import { ProtocolError, ProtocolErrorKind } from "./errors.ts";

const utf8Encoder = new TextEncoder();
// Not fatal: the Java writer emits CESU-8 for characters outside the BMP in free-form strings; those
// decode to U+FFFD instead of failing the whole reply.
// ignoreBOM keeps a leading U+FEFF: in a node name or data it is a character, not a byte-order mark.
const utf8Decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** Strings up to this many UTF-16 units are tried as ASCII byte by byte before the encoder is called. */
const ASCII_LOOP_MAX = 256;

/** Default jute.maxbuffer of both server and Java client. */
export const DEFAULT_MAX_BUFFER = 0xfffff;

// Small byte arrays are cut from shared blocks, as Node cuts small Buffers from its pool: a typed array of its
// own costs an ArrayBuffer, a malloc'ed store outside V8's heap (or a move there when a socket asks for its
// .buffer) and their GC bookkeeping. A block is never reused: once its views are gone, GC frees it. Views
// start at multiples of 8. Views are made with the Uint8Array of this module's load, so a view stays a
// Uint8Array even where the global was replaced later on (a test that records allocations does, and Bun runs
// every test file in one process).
const BlockArray = Uint8Array;

export class Arena {
  /** The largest request served from a block; anything longer gets an array of its own. */
  readonly max: number;
  private readonly size: number;
  // The block's ArrayBuffer, not a typed array of it: a view made with the constructor is cheaper than
  // subarray() (no species lookup), and a detached block reads byteLength 0.
  private block: ArrayBuffer;
  /** The first byte of the current block not handed out yet (a multiple of 8). */
  at = 0;
  /** The whole current block, as bytes and as a DataView, for a writer that writes in place (made once per block). */
  bytes: Uint8Array | null = null;
  view: DataView | null = null;

  constructor(size: number, max: number) {
    this.size = size;
    this.max = max;
    this.block = new ArrayBuffer(size);
  }

  /**
   * Readies `bytes` and `view` over a block with room from `at` (a block a caller detached is replaced); with
   * `fresh`, over a new block (what is written past `at` of the old one is left behind).
   */
  open(fresh: boolean): void {
    if (fresh || this.block.byteLength === 0) {
      this.block = new ArrayBuffer(this.size);
      this.at = 0;
      this.bytes = null;
    }
    if (this.bytes === null) {
      this.bytes = new BlockArray(this.block);
      this.view = new DataView(this.block);
    }
  }

  /** Hands out [start, end) of the current block, written in place by a writer (see open). */
  commit(start: number, end: number): Uint8Array {
    this.at = (end + 7) & ~7;
    return new BlockArray(this.block, start, end - start);
  }

  /** `n` bytes, not zeroed: a view of the current block, or of a new one when it is full or was detached. */
  take(n: number): Uint8Array {
    if (n > this.max) return new BlockArray(n);
    let at = this.at;
    if (at + n > this.size || this.block.byteLength === 0) {
      this.block = new ArrayBuffer(this.size);
      this.bytes = null;
      at = 0;
    }
    this.at = (at + n + 7) & ~7;
    return new BlockArray(this.block, at, n);
  }

  /** A copy of `src[start, start + n)` that the caller may keep and change (no one else sees its bytes). */
  copy(src: Uint8Array, start: number, n: number): Uint8Array {
    if (n > this.max) return src.slice(start, start + n);
    const out = this.take(n);
    // A byte loop's cost grows with every byte, set() of a subarray costs a fixed setup (a view, a runtime call)
    // whatever the length: the loop only up to the length where they cross (bench/README.md, Profiling).
    if (n <= 16) for (let i = 0; i < n; i++) out[i] = src[start + i]!;
    else out.set(src.subarray(start, start + n));
    return out;
  }
}

// Frames on their way to the socket: 64 KB blocks, up to 8 KB a frame (or a batch of frames).
const frames = new Arena(64 * 1024, 8 * 1024);

// Byte fields read from replies (node data, ACL ids, SASL tokens): 8 KB blocks, up to 1 KB a field (the data
// copy was the largest single cost of a getData reply in the client). So such a field's `.buffer` holds other
// replies' bytes too: read it through byteOffset and byteLength, as with a Node Buffer. A block that a caller
// detached (by transferring it) is replaced.
const fields = new Arena(8 * 1024, 1024);

/** `n` bytes for a frame (or a batch of frames) to write; not zero-filled: the caller writes every byte. */
export function frameBytes(n: number): Uint8Array {
  return frames.take(n);
}

export class JuteWriter {
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  /** Where the bytes being written start in `buf`: 0, or the arena's free offset while writing in place. */
  private base = 0;
  /**
   * The frames arena, for the writer of frames (frameArenaWriter): each frame is written straight into the arena's
   * block after what it handed out, and toBytes() hands out a view of it, with no copy. A frame that does not fit
   * the rest of the block moves to a new one; one over the arena's largest goes to the writer's own buffer.
   */
  private readonly arena: Arena | null;
  /** `buf` is the arena's block (not the writer's own buffer). */
  private inArena = false;
  private own: Uint8Array;
  private ownView: DataView;

  constructor(initialCapacity = 256, arena: Arena | null = null) {
    this.buf = this.own = new Uint8Array(initialCapacity);
    this.view = this.ownView = new DataView(this.buf.buffer);
    this.arena = arena;
  }

  get length(): number {
    return this.pos - this.base;
  }

  private ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    const size = need - this.base; // this frame's bytes once `extra` more are written
    const a = this.arena;
    if (this.inArena && a !== null && size <= a.max) {
      // The rest of the block is too short: the bytes so far go to the start of a new block.
      const written = this.buf.subarray(this.base, this.pos);
      a.open(true);
      a.bytes!.set(written, 0);
      this.useArena(a, written.length);
      return;
    }
    // The writer's own buffer, grown to hold `size`, the bytes so far at its start.
    let cap = Math.max(this.own.length, 1);
    while (cap < size) cap *= 2;
    const next = cap === this.own.length ? this.own : new Uint8Array(cap);
    next.set(this.buf.subarray(this.base, this.pos)); // from the arena's block, or the own buffer outgrown
    this.pos -= this.base;
    this.base = 0;
    this.inArena = false;
    if (next !== this.own) {
      this.own = next;
      this.ownView = new DataView(next.buffer);
    }
    this.buf = this.own;
    this.view = this.ownView;
  }

  /** Writes in place in `a`'s current block from its free offset, `written` bytes of this frame already there. */
  private useArena(a: Arena, written: number): void {
    this.buf = a.bytes!;
    this.view = a.view!;
    this.base = a.at;
    this.pos = a.at + written;
    this.inArena = true;
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
    // Worst case 3 bytes per UTF-16 unit.
    const n = v.length;
    this.ensure(4 + n * 3);
    const buf = this.buf;
    const start = this.pos + 4;
    // Paths are short and nearly always ASCII: copied here they cost less than a call into the encoder
    // (and the subarray it writes into). Anything else goes to encodeInto, which needs no intermediate array.
    let written = 0;
    if (n <= ASCII_LOOP_MAX) {
      while (written < n) {
        const c = v.charCodeAt(written);
        if (c >= 0x80) break;
        buf[start + written++] = c;
      }
    }
    if (written < n) written = utf8Encoder.encodeInto(v, buf.subarray(start)).written;
    this.view.setInt32(this.pos, written);
    this.pos = start + written;
    return this;
  }

  vector<T>(items: readonly T[] | null, write: (w: JuteWriter, item: T) => void): this {
    if (items === null) return this.int(-1);
    this.int(items.length);
    for (const item of items) write(this, item);
    return this;
  }

  /** Reserves the 4-byte frame length; finishFrame patches it. Returns its offset from the start of what is written. */
  beginFrame(): number {
    const at = this.pos - this.base;
    this.int(0);
    return at;
  }

  finishFrame(at: number): void {
    this.view.setInt32(this.base + at, this.pos - this.base - at - 4);
  }

  /**
   * The bytes written so far, to keep: for a frame of up to 8 KB a view of a shared block (see `frameBytes`), written
   * there in place by the frames writer (frameArenaWriter), else a copy. The writer must be reset before it writes again.
   */
  toBytes(): Uint8Array {
    if (this.inArena) {
      this.inArena = false;
      return this.arena!.commit(this.base, this.pos);
    }
    return frames.copy(this.buf, this.base, this.pos - this.base);
  }

  /** The bytes written so far without copying; valid until the next write or reset. */
  written(): Uint8Array {
    return this.buf.subarray(this.base, this.pos);
  }

  reset(): void {
    const a = this.arena;
    if (a !== null) {
      a.open(false);
      this.useArena(a, 0);
      return;
    }
    this.pos = 0;
    // A writer that once held a big frame (up to jute.maxbuffer, 1 MB) does not keep that buffer for good.
    if (this.buf.length > SHRINK_ABOVE) {
      this.buf = this.own = new Uint8Array(256);
      this.view = this.ownView = new DataView(this.buf.buffer);
    }
  }
}

/** The writer of frames to send: written in place in the frames arena (see JuteWriter.arena), for frameWriter. */
export function frameArenaWriter(): JuteWriter {
  return new JuteWriter(256, frames);
}

/** reset() gives back a buffer grown beyond this. */
const SHRINK_ABOVE = 64 * 1024;

// Longs are read through this 8-byte scratch view: a DataView per frame costs more than the frame's other reads
// (its constructor is a C++ builtin); ints are put together from bytes.
const scratch = new DataView(new ArrayBuffer(8));
const scratchBytes = new Uint8Array(scratch.buffer);

// Longs already made, by the low bits of their value: replies repeat the same few zxids (the server's last zxid
// in the header of every read, a node's czxid, mzxid and pzxid in each Stat of it, a write's zxid in both its
// header and its Stat), and a BigInt is immutable, so one made before is handed out again. Slots start as 0n
// and -1n (every persistent node's ephemeralOwner, every notification's zxid before 3.9).
const LONG_SLOTS = 64;
const slotHigh = new Int32Array(LONG_SLOTS);
const slotLow = new Int32Array(LONG_SLOTS);
const slotValue: bigint[] = new Array<bigint>(LONG_SLOTS).fill(0n);
slotHigh[LONG_SLOTS - 1] = slotLow[LONG_SLOTS - 1] = -1;
slotValue[LONG_SLOTS - 1] = -1n;

/** The big-endian int32 at `p` of `b`. */
const int32At = (b: Uint8Array, p: number): number => (b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!;

export class JuteReader {
  private buf: Uint8Array;
  private pos: number;
  private end: number;
  /** Largest length accepted for one buffer, string or vector. */
  readonly maxLength: number;

  constructor(buf: Uint8Array, offset = 0, end = buf.length, maxLength = DEFAULT_MAX_BUFFER * 2) {
    this.buf = buf;
    this.pos = offset;
    this.end = end;
    this.maxLength = maxLength;
  }

  /** Reads `buf` from `offset` to `end` from now on (one reader for every frame of a connection). */
  reset(buf: Uint8Array, offset: number, end: number): this {
    this.buf = buf;
    this.pos = offset;
    this.end = end;
    return this;
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
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return int32At(b, p);
  }

  long(): bigint {
    this.need(8, "long");
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 8;
    const high = int32At(b, p);
    const low = int32At(b, p + 4);
    const slot = low & (LONG_SLOTS - 1);
    if (slotLow[slot] === low && slotHigh[slot] === high) return slotValue[slot]!;
    for (let i = 0; i < 8; i++) scratchBytes[i] = b[p + i]!;
    const value = scratch.getBigInt64(0);
    slotHigh[slot] = high;
    slotLow[slot] = low;
    slotValue[slot] = value;
    return value;
  }

  /** A long that is known to fit a double exactly (times in ms); read as two ints, no BigInt made. */
  longNumber(): number {
    const high = this.int();
    return high * 4294967296 + (this.int() >>> 0);
  }

  bool(): boolean {
    this.need(1, "boolean");
    return this.buf[this.pos++] !== 0;
  }

  byte(): number {
    this.need(1, "byte");
    return (this.buf[this.pos++]! << 24) >> 24;
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
    const out = fields.copy(this.buf, this.pos, n);
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
