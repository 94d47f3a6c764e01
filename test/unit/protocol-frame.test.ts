// FrameDecoder: identical frames however the stream is chunked, and a hostile length prefix fails at
// once, before any buffer of that size exists. Plus the byte-exact constant frames (a 4-byte big-endian
// length that does not count itself, then the payload): the ping (xid -2, opcode 11) and a new session's
// ConnectRequest.
import { describe, it } from "../support/bdd.ts";
import { concat, hex, recordingAllocations, unhex } from "../support/bytes.ts";
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import fc from "fast-check";
import {
  DEFAULT_MAX_BUFFER,
  FrameDecoder,
  JuteWriter,
  OpCode,
  PING_FRAME,
  ProtocolError,
  ProtocolErrorKind,
  encodeFrame,
  encodeRequest,
  writeConnectRequest,
} from "../../src/protocol/index.ts";

function frameOf(payload: Uint8Array): Uint8Array {
  return encodeFrame((w) => {
    for (const b of payload) w.byte(b << 24 >> 24);
  });
}

/** Feeds the chunks and copies each frame out at once (frames may be views valid only for that call). */
function decodeChunks(chunks: readonly Uint8Array[], d = new FrameDecoder()): string[] {
  const frames: string[] = [];
  for (const c of chunks) for (const f of d.push(c)) frames.push(hex(f));
  assert.equal(d.buffered, 0, "a complete stream leaves nothing buffered");
  return frames;
}

// Payload sizes chosen to hit empty frames, frames shorter than a header, and multi-chunk frames.
const payloads: Uint8Array[] = [0, 1, 3, 4, 5, 8, 17, 0, 64, 2, 300, 0].map((n, i) =>
  Uint8Array.from({ length: n }, (_, j) => (i * 31 + j * 7) & 0xff),
);
const stream = concat([...payloads.map(frameOf), PING_FRAME]);
const expected = [...payloads, PING_FRAME.subarray(4)].map(hex);

/** The length of every `new Uint8Array(number)` made while fn runs. */
function allocations(fn: () => void): number[] {
  const sizes: number[] = [];
  recordingAllocations(fn, sizes);
  return sizes;
}

function decodeError(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `threw ${String(e)}`);
    return e;
  }
  assert.fail("no error thrown");
}

describe("FrameDecoder", () => {
  it("decodes the whole stream in one chunk", () => {
    assert.deepStrictEqual(decodeChunks([stream]), expected);
  });

  it("yields identical frames when the stream is split at every byte boundary", () => {
    for (let i = 0; i <= stream.length; i++) {
      assert.deepStrictEqual(decodeChunks([stream.subarray(0, i), stream.subarray(i)]), expected, `split at ${i}`);
    }
  });

  it("yields identical frames fed byte by byte", () => {
    const d = new FrameDecoder();
    const frames: string[] = [];
    for (let i = 0; i < stream.length; i++) {
      for (const f of d.push(stream.subarray(i, i + 1))) frames.push(hex(f));
      assert.ok(d.buffered <= 301, "never holds more than one unfinished frame");
    }
    assert.deepStrictEqual(frames, expected);
    assert.equal(d.buffered, 0);
  });

  it("yields identical frames for random chunkings, including empty chunks", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: stream.length }), { maxLength: 40 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), stream.length];
        const chunks = points.slice(1).map((end, k) => stream.slice(points[k], end));
        assert.deepStrictEqual(decodeChunks(chunks), expected);
      }),
      { numRuns: 300 },
    );
  });

  it("yields identical frames for random payloads and random chunkings", () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 70 }), { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }),
        (frames, sizes) => {
          const s = concat(frames.map(frameOf));
          const chunks: Uint8Array[] = [];
          for (let at = 0, k = 0; at < s.length; k++) {
            const n = sizes[k % sizes.length]!;
            chunks.push(s.slice(at, at + n));
            at += n;
          }
          assert.deepStrictEqual(decodeChunks(chunks), frames.map(hex));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("hands out plain Uint8Array views of a Buffer chunk: the frame's bytes, no copy, no Buffer species", () => {
    const chunk = Buffer.from(stream); // what node:net gives (Bun and Deno too)
    const frames = new FrameDecoder().push(chunk);
    assert.deepStrictEqual(frames.map(hex), expected);
    for (const f of frames) {
      assert.equal(Object.getPrototypeOf(f), Uint8Array.prototype, "a plain Uint8Array, not a Buffer");
      assert.equal(f.buffer, chunk.buffer, "a view of the chunk, not a copy");
    }
  });

  it("each(): the frames of a chunk in place (no object per frame), those before a bad length, and a stop on false", () => {
    const d = new FrameDecoder();
    const seen: string[] = [];
    const chunk = Buffer.from(stream);
    d.each(chunk, (bytes, start, end) => {
      assert.equal(Object.getPrototypeOf(bytes), Uint8Array.prototype, "a plain Uint8Array, not a Buffer");
      assert.equal(bytes.buffer, chunk.buffer, "the chunk's memory, not a copy");
      seen.push(hex(bytes.subarray(start, end)));
      return true;
    });
    assert.deepStrictEqual(seen, expected);
    // Two good frames, then a length over the bound: the two are handed out, then the error, for good.
    const good = concat([frameOf(Uint8Array.of(1)), frameOf(Uint8Array.of(2, 3))]);
    const bad = new FrameDecoder(16);
    const before: string[] = [];
    const err = decodeError(() => bad.each(concat([good, unhex("00000011")]), (b, s, e) => (before.push(hex(b.subarray(s, e))), true)));
    assert.equal(err.kind, ProtocolErrorKind.FRAME_TOO_LARGE);
    assert.deepStrictEqual(before, ["01", "0203"]);
    assert.equal(decodeError(() => bad.each(good, () => true)), err);
    // false stops at that frame: the rest of the chunk is not looked at (not even its bad length).
    const stopped: string[] = [];
    new FrameDecoder(16).each(concat([good, unhex("00000011")]), (b, s, e) => (stopped.push(hex(b.subarray(s, e))), false));
    assert.deepStrictEqual(stopped, ["01"]);
  });

  it("ignores empty pushes", () => {
    const d = new FrameDecoder();
    assert.deepStrictEqual(d.push(new Uint8Array(0)), []);
    assert.deepStrictEqual(d.push(stream.subarray(0, 2)), []);
    assert.deepStrictEqual(d.push(new Uint8Array(0)), []);
    assert.equal(d.buffered, 2);
  });

  it("passes frames of exactly maxFrameSize, whole and split", () => {
    for (const max of [16, DEFAULT_MAX_BUFFER]) {
      const payload = Uint8Array.from({ length: max }, (_, j) => j & 0xff);
      const s = frameOf(payload);
      const half = s.length >> 1;
      for (const chunks of [[s], [s.subarray(0, 3), s.subarray(3)], [s.subarray(0, half), s.subarray(half)]]) {
        const d = new FrameDecoder(max);
        const out = chunks.flatMap((c) => d.push(c).map((f) => f.slice()));
        assert.equal(out.length, 1);
        assert.equal(out[0]!.length, max);
        assert.deepStrictEqual(out[0], payload);
      }
    }
  });

  const hostile: Array<[string, number, string]> = [
    ["2^31-1", DEFAULT_MAX_BUFFER, "7fffffff"],
    ["-1", DEFAULT_MAX_BUFFER, "ffffffff"],
    ["-5", DEFAULT_MAX_BUFFER, "fffffffb"],
    ["-2^31", DEFAULT_MAX_BUFFER, "80000000"],
    ["maxFrameSize+1 (default)", DEFAULT_MAX_BUFFER, "00100000"],
    ["maxFrameSize+1 (16)", 16, "00000011"],
  ];
  for (const [name, max, header] of hostile) {
    it(`rejects a declared length of ${name} within the 4-byte push, without buffering it`, () => {
      const d = new FrameDecoder(max);
      const err = decodeError(() => d.push(unhex(header)));
      assert.equal(err.kind, ProtocolErrorKind.FRAME_TOO_LARGE);
      assert.match(err.message, /frame length -?\d+ is outside 0\.\.\d+/);
      // Had the decoder allocated for the declared length it would hold the header at least; it holds ≤ 4.
      assert.ok(d.buffered <= 4, `buffered ${d.buffered}`);
      // The stream cannot be re-synchronised: every later push rethrows the same error.
      assert.equal(decodeError(() => d.push(frameOf(new Uint8Array(1)))), err);
      assert.equal(decodeError(() => d.push(new Uint8Array(0))), err);
      assert.ok(d.buffered <= 4);
    });
  }

  it("never allocates for a rejected length (allocation recorder with a positive control)", () => {
    // Control: a 100-byte frame split after its header is buffered in a 100-byte allocation, so the
    // recorder does see the decoder's allocations.
    const control = allocations(() => {
      const d = new FrameDecoder();
      d.push(frameOf(new Uint8Array(100)).subarray(0, 10));
    });
    assert.ok(control.includes(100), `control allocations: ${control.join(",")}`);
    for (const [, max, header] of hostile) {
      const sizes = allocations(() => {
        const d = new FrameDecoder(max);
        decodeError(() => d.push(unhex(header)));
        decodeError(() => d.push(new Uint8Array(8)));
      });
      assert.ok(sizes.every((n) => n <= 64), `${header}: allocated ${sizes.join(",")}`);
    }
  });

  it("rejects a hostile header split across pushes, and one that follows good frames", () => {
    const d = new FrameDecoder();
    assert.deepStrictEqual(d.push(unhex("7f")), []);
    assert.deepStrictEqual(d.push(unhex("ffff")), []);
    assert.equal(d.buffered, 3);
    const err = decodeError(() => d.push(unhex("ff 00 00 00")));
    assert.equal(err.kind, ProtocolErrorKind.FRAME_TOO_LARGE);
    assert.ok(d.buffered <= 4);

    const e = new FrameDecoder();
    assert.equal(e.push(PING_FRAME).length, 1);
    const err2 = decodeError(() => e.push(concat([PING_FRAME, unhex("7fffffff"), new Uint8Array(64)])));
    assert.equal(err2.kind, ProtocolErrorKind.FRAME_TOO_LARGE);
    assert.ok(e.buffered <= 4);
  });
});

describe("constant frames", () => {
  it("PING_FRAME is 00 00 00 08 ff ff ff fe 00 00 00 0b", () => {
    assert.equal(hex(PING_FRAME), "00000008fffffffe0000000b");
    assert.equal(hex(encodeRequest(-2, OpCode.ping)), hex(PING_FRAME));
  });

  it("encodes the worked ConnectRequest example byte for byte", () => {
    const frame = encodeFrame((w: JuteWriter) =>
      writeConnectRequest(w, {
        protocolVersion: 0,
        lastZxidSeen: 0n,
        timeOut: 30000,
        sessionId: 0n,
        passwd: new Uint8Array(16),
        readOnly: false,
      }),
    );
    const want = "0000002d" + "00000000" + "0000000000000000" + "00007530" + "0000000000000000" + "00000010" + "00".repeat(16) + "00";
    assert.equal(hex(frame), want);
    assert.equal(frame.length, 49);
  });
});
