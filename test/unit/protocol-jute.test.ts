// Jute encoding details that random round-trips do not pin down (BinaryOutputArchive/BinaryInputArchive,
// the records of zookeeper.jute, MultiOperationRecord in the Apache ZooKeeper sources): exact bytes,
// null versus empty, bounds on lengths, tolerated server quirks.
import { describe, it } from "../support/bdd.ts";
import { hex, recordingAllocations, unhex } from "../support/bytes.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  JuteReader,
  JuteWriter,
  OpCode,
  ProtocolError,
  encodeFrame,
  frameBytes,
  ProtocolErrorKind,
  readConnectResponse,
  readMultiRequest,
  readMultiResponse,
  readStat,
  writeReplyHeader,
  writeStat,
  writeMultiRequest,
  writeMultiResponse,
} from "../../src/protocol/index.ts";

const written = (fn: (w: JuteWriter) => void): string => {
  const w = new JuteWriter(2);
  fn(w);
  return hex(w.toBytes());
};

function kindOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `threw ${String(e)}`);
    return e.kind;
  }
  return "no error";
}

describe("Jute primitives", () => {
  it("writes ints and longs big-endian two's complement", () => {
    assert.equal(written((w) => w.int(-2).int(0x7fffffff).int(-0x80000000)), "fffffffe7fffffff80000000");
    assert.equal(written((w) => w.long(-1n).long(0x0100000000000001n)), "ffffffffffffffff0100000000000001");
    assert.equal(written((w) => w.long(-(2n ** 63n))), "8000000000000000");
    assert.equal(new JuteReader(unhex("8000000000000000")).long(), -(2n ** 63n));
  });

  it("keeps a leading U+FEFF in strings (a character, not a byte-order mark)", () => {
    // Found by the round-trip property test: TextDecoder drops a leading BOM unless told not to.
    const bytes = unhex(written((w) => w.ustring("\uFEFFnode").ustring("\uFEFF")));
    assert.equal(hex(bytes), "00000007efbbbf6e6f646500000003efbbbf");
    const r = new JuteReader(bytes);
    assert.equal(r.ustring(), "\uFEFFnode");
    assert.equal(r.ustring(), "\uFEFF");
  });

  it("keeps session ids above 2^53 exact", () => {
    const id = 0x0100_0007_2dad_0001n;
    assert.equal(new JuteReader(unhex(written((w) => w.long(id)))).long(), id);
  });

  it("writes booleans as 01/00 and reads any non-zero byte as true", () => {
    assert.equal(written((w) => w.bool(true).bool(false)), "0100");
    const r = new JuteReader(unhex("00 01 02 ff"));
    assert.deepStrictEqual([r.bool(), r.bool(), r.bool(), r.bool()], [false, true, true, true]);
  });

  it("distinguishes null (-1) from empty (0) for buffers, strings and vectors", () => {
    assert.equal(written((w) => w.buffer(null).buffer(new Uint8Array(0)).ustring(null).ustring("")), "ffffffff00000000ffffffff00000000");
    assert.equal(written((w) => w.vector(null, () => {}).vector([], () => {})), "ffffffff00000000");
    const r = new JuteReader(unhex("ffffffff 00000000 ffffffff 00000000 ffffffff 00000000 ffffffff"));
    assert.equal(r.buffer(), null);
    assert.deepStrictEqual(r.buffer(), new Uint8Array(0));
    assert.equal(r.ustring(), null);
    assert.equal(r.ustring(), "");
    assert.equal(r.vector((x) => x.int()), null);
    assert.deepStrictEqual(r.vector((x) => x.int()), []);
    assert.equal(r.string(), "", "string() reads a null the protocol never sends as empty");
  });

  it("counts string lengths in UTF-8 bytes, with 4-byte sequences outside the BMP", () => {
    assert.equal(written((w) => w.ustring("é😀")), "00000006c3a9f09f9880");
    assert.equal(new JuteReader(unhex("00000006c3a9f09f9880")).ustring(), "é😀");
  });

  it("tolerates CESU-8 from the Java writer (surrogates as two 3-byte sequences) without failing", () => {
    // U+1F600 as the Java writer emits it in free-form strings: ed a0 bd ed b8 80.
    const s = new JuteReader(unhex("00000008 41 eda0bd edb880 42")).ustring()!;
    assert.equal(s[0], "A");
    assert.equal(s[s.length - 1], "B");
    assert.ok(s.includes("\ufffd"));
  });

  it("rejects negative lengths other than -1 and lengths above maxLength with BAD_LENGTH", () => {
    assert.equal(kindOf(() => new JuteReader(unhex("fffffffe")).buffer()), ProtocolErrorKind.BAD_LENGTH);
    assert.equal(kindOf(() => new JuteReader(unhex("80000000")).ustring()), ProtocolErrorKind.BAD_LENGTH);
    assert.equal(kindOf(() => new JuteReader(unhex("fffffffb")).vector((r) => r.int())), ProtocolErrorKind.BAD_LENGTH);
    assert.equal(kindOf(() => new JuteReader(unhex("7fffffff")).buffer()), ProtocolErrorKind.BAD_LENGTH);
    const small = (h: string): JuteReader => new JuteReader(unhex(h), 0, undefined, 4);
    assert.equal(kindOf(() => small("00000005 0102030405").buffer()), ProtocolErrorKind.BAD_LENGTH);
    assert.deepStrictEqual(small("00000004 01020304").buffer(), unhex("01020304"));
  });

  it("rejects a vector count larger than the bytes left before reading any element", () => {
    let calls = 0;
    const r = new JuteReader(unhex("00100000 00000001"));
    assert.equal(kindOf(() => r.vector((x) => (calls++, x.int()))), ProtocolErrorKind.SHORT_INPUT);
    assert.equal(calls, 0);
  });

  it("honours offset and end, and reads views with a non-zero byteOffset", () => {
    const big = unhex("ee ee 00000001 00000002 ee");
    const r = new JuteReader(big, 2, 10);
    assert.deepStrictEqual([r.int(), r.int(), r.remaining], [1, 2, 0]);
    assert.equal(kindOf(() => r.byte()), ProtocolErrorKind.SHORT_INPUT);
    const view = new JuteReader(big.subarray(6, 10));
    assert.equal(view.int(), 2);
  });

  it("returns buffers that do not alias the input", () => {
    const input = unhex("00000002 0a0b");
    const b = new JuteReader(input).buffer()!;
    input[4] = 0;
    assert.deepStrictEqual(b, unhex("0a0b"));
  });

  it("grows the writer from a capacity of 1 and patches frame lengths", () => {
    const w = new JuteWriter(1);
    const at = w.beginFrame();
    w.ustring("x".repeat(1000));
    w.finishFrame(at);
    const out = w.toBytes();
    assert.equal(out.length, 1008);
    assert.equal(hex(out.subarray(0, 8)), "000003ec000003e8");
    w.reset();
    assert.equal(w.length, 0);
  });
});

describe("fixed-size records", () => {
  it("Stat is 68 bytes, fields in declaration order", () => {
    const stat = {
      czxid: 1n, mzxid: 2n, ctime: 3, mtime: 4, version: 5, cversion: 6, aversion: 7,
      ephemeralOwner: -(2n ** 63n), dataLength: 9, numChildren: 10, pzxid: 11n,
    };
    const h = written((w) => writeStat(w, stat));
    assert.equal(h.length / 2, 68);
    assert.equal(
      h,
      "0000000000000001" + "0000000000000002" + "0000000000000003" + "0000000000000004" +
        "00000005" + "00000006" + "00000007" + "8000000000000000" + "00000009" + "0000000a" + "000000000000000b",
    );
    assert.deepStrictEqual(readStat(new JuteReader(unhex(h))), stat);
  });

  it("ReplyHeader is 16 bytes: xid, zxid, err", () => {
    assert.equal(written((w) => writeReplyHeader(w, { xid: -1, zxid: -1n, err: -101 })), "ffffffff" + "ffffffffffffffff" + "ffffff9b");
  });

  it("reads a 36-byte ConnectResponse (no readOnly byte) as readOnly=false", () => {
    const body = "00000000 00002710 0100000000000001 00000010" + "ab".repeat(16);
    const c = readConnectResponse(new JuteReader(unhex(body)));
    assert.equal(c.readOnly, false);
    assert.equal(c.timeOut, 10000);
    assert.equal(c.sessionId, 0x0100000000000001n);
    const ro = readConnectResponse(new JuteReader(unhex(body + "01")));
    assert.equal(ro.readOnly, true);
  });
});

// The reader puts ints together from bytes and the writer copies short ASCII strings itself (speed, issue 14);
// these pin both against the platform's own DataView and TextEncoder.
describe("Jute primitives against DataView and TextEncoder", () => {
  const int64 = fc.bigInt(-(2n ** 63n), 2n ** 63n - 1n);

  it("reads every int, long and byte as DataView does (zero, signs, 2^63 edges)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (bytes) => {
        const view = new DataView(bytes.buffer);
        const at = (): JuteReader => new JuteReader(bytes);
        assert.equal(at().int(), view.getInt32(0));
        assert.equal(at().long(), view.getBigInt64(0));
        assert.equal(at().byte(), view.getInt8(0));
      }),
      { numRuns: 2000, examples: [[new Uint8Array(8)], [new Uint8Array(8).fill(0xff)], [unhex("ffffffff00000000")], [unhex("00000000ffffffff")], [unhex("8000000000000000")], [unhex("7fffffffffffffff")]] },
    );
  });

  it("reads repeated longs and longs that share their low bits as DataView does (the reader reuses BigInts it made)", () => {
    // Few distinct high and low halves, so values repeat and collide in the reader's slots in every order.
    const half = fc.constantFrom(0, 1, -1, 64, 65, 0x7fffffff, -0x80000000, 0x12345640);
    fc.assert(
      fc.property(fc.array(fc.tuple(half, half), { minLength: 1, maxLength: 40 }), (pairs) => {
        const bytes = new Uint8Array(pairs.length * 8);
        const view = new DataView(bytes.buffer);
        pairs.forEach(([hi, lo], i) => {
          view.setInt32(i * 8, hi);
          view.setInt32(i * 8 + 4, lo);
        });
        const r = new JuteReader(bytes);
        for (let i = 0; i < pairs.length; i++) assert.equal(r.long(), view.getBigInt64(i * 8));
      }),
      { numRuns: 2000 },
    );
  });

  it("hands out byte fields as copies of their own: right bytes, no two overlapping, none changed by the next read", () => {
    // Small fields are cut from shared pools: check contents, independence and lengths around the pool's limits.
    const field = fc.oneof(fc.constant(null), fc.uint8Array({ maxLength: 80 }), fc.uint8Array({ minLength: 1000, maxLength: 1100 }));
    fc.assert(
      fc.property(fc.array(field, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 40 }), (fields, repeat) => {
        const w = new JuteWriter();
        for (let k = 0; k < repeat; k++) for (const f of fields) w.buffer(f);
        const bytes = w.toBytes();
        const r = new JuteReader(bytes);
        const got: (Uint8Array | null)[] = [];
        for (let k = 0; k < repeat; k++) for (let i = 0; i < fields.length; i++) got.push(r.buffer());
        got.forEach((g, i) => assert.deepEqual(g, fields[i % fields.length]));
        bytes.fill(0xee); // the frame's bytes are the reader's to reuse: copies must not be views of them
        got.forEach((g, i) => assert.deepEqual(g, fields[i % fields.length]));
        for (const g of got) g?.fill(0x55); // and writing one copy changes no other
        got.forEach((g, i) => assert.equal(g?.every((b) => b === 0x55) ?? null, fields[i % fields.length] === null ? null : true));
      }),
      { numRuns: 300 },
    );
  });

  it("hands out plain Uint8Arrays also after the global Uint8Array was replaced while a pool was made", () => {
    // Bun runs every test file in one process: the allocation-recording helper of another file must not leak
    // its subclass into what the reader hands out later (it did: deepStrictEqual against plain arrays failed).
    const w = new JuteWriter();
    for (let i = 0; i < 40; i++) w.buffer(new Uint8Array(900).fill(i)); // more than one pool's worth
    const bytes = w.toBytes();
    const read: (Uint8Array | null)[] = [];
    recordingAllocations(() => {
      const r = new JuteReader(bytes);
      for (let i = 0; i < 40; i++) read.push(r.buffer());
    }, []);
    const after = new JuteReader(bytes).buffer()!;
    for (const f of [...read, after]) assert.equal(Object.getPrototypeOf(f), Uint8Array.prototype);
    assert.deepEqual(after, new Uint8Array(900).fill(0));
  });

  it("reads byte fields on after a caller transferred (detached) the buffer behind one", () => {
    const w = new JuteWriter();
    w.buffer(new Uint8Array([1, 2, 3])).buffer(new Uint8Array([4, 5]));
    const r = new JuteReader(w.toBytes());
    const first = r.buffer()!;
    structuredClone(first.buffer, { transfer: [first.buffer as ArrayBuffer] });
    assert.equal(first.byteLength, 0, "the transfer detached it");
    assert.deepEqual(r.buffer(), new Uint8Array([4, 5]));
  });

  it("writes frames in place in the frames arena: the bytes a copying writer makes, none changed by later frames, takes or a detach", () => {
    // The frames writer writes each frame after what the arena handed out and hands out a view of it (no copy):
    // a frame that outgrows the rest of a 64 KB block moves to a new one, one over 8 KB goes to the writer's own buffer.
    const step = fc.oneof(
      fc.record({ kind: fc.constant("frame" as const), parts: fc.array(fc.oneof(fc.integer({ min: 0, max: 9000 }), fc.string({ maxLength: 40 })), { maxLength: 6 }), fill: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant("take" as const), n: fc.integer({ min: 1, max: 9000 }), fill: fc.integer({ min: 0, max: 255 }) }),
      fc.record({ kind: fc.constant("detach" as const), which: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        let kept: { bytes: Uint8Array; want: string }[] = [];
        for (const st of steps) {
          if (st.kind === "frame") {
            const write = (w: JuteWriter): void => {
              for (const p of st.parts) {
                if (typeof p === "string") w.ustring(p);
                else w.buffer(new Uint8Array(p).fill(st.fill)).int(p);
              }
            };
            const bytes = encodeFrame(write);
            const want = hex(encodeFrame(write, undefined, new JuteWriter(1)));
            assert.equal(hex(bytes), want);
            kept.push({ bytes, want });
          } else if (st.kind === "take") {
            frameBytes(st.n).fill(st.fill);
          } else if (kept.length > 0) {
            const k = kept[st.which % kept.length]!;
            if (k.bytes.byteLength > 0) structuredClone(k.bytes.buffer, { transfer: [k.bytes.buffer as ArrayBuffer] });
            kept = kept.filter((o) => o.bytes.byteLength > 0); // it, and the frames that shared its block
          }
          for (const k of kept) assert.equal(hex(k.bytes), k.want);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("reads times (longNumber) as Number of the long, negative ones too", () => {
    fc.assert(
      fc.property(fc.oneof(int64, fc.bigInt(-(2n ** 53n), 2n ** 53n)), (v) => {
        const w = new JuteWriter(8);
        w.long(v);
        assert.equal(new JuteReader(w.toBytes()).longNumber(), Number(v));
      }),
      { numRuns: 2000 },
    );
  });

  it("writes every string as TextEncoder does, ASCII or not, short or long, lone surrogates included", () => {
    const enc = new TextEncoder();
    // Code units around every boundary the writer cares about: 0x7f/0x80, Latin-1, 0x7ff/0x800, surrogates.
    const nearBoundary = fc.oneof(fc.integer({ min: 0x60, max: 0x900 }), fc.integer({ min: 0xd700, max: 0xe100 })).map((c) => String.fromCharCode(c));
    const strings = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: nearBoundary, maxLength: 300 }),
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.string({ unit: "binary", maxLength: 300 }),
      fc.tuple(fc.string({ minLength: 250, maxLength: 270 }), fc.string({ unit: "binary", minLength: 1, maxLength: 3 })).map(([a, b]) => a + b),
    );
    fc.assert(
      fc.property(strings, (s) => {
        const w = new JuteWriter(2);
        w.ustring(s).int(7);
        const want = enc.encode(s);
        const got = w.toBytes();
        assert.equal(new DataView(got.buffer, got.byteOffset, got.byteLength).getInt32(0), want.length);
        assert.deepEqual(got.subarray(4, 4 + want.length), want);
        assert.equal(new JuteReader(got, 4 + want.length).int(), 7);
      }),
      { numRuns: 1000, examples: [["é"], ["/a/é"], ["x".repeat(300) + "é"], ["\u0080"], ["\ud800"]] },
    );
  });
});

describe("multi framing (MultiOperationRecord)", () => {
  it("writes MultiHeader{type,false,-1} per op and the {-1,true,-1} terminator", () => {
    const h = written((w) => writeMultiRequest(w, { ops: [{ type: OpCode.check, request: { path: "/a", version: 3 } }] }));
    assert.equal(h, "0000000d00ffffffff" + "000000022f61" + "00000003" + "ffffffff01ffffffff");
    assert.equal(written((w) => writeMultiRequest(w, { ops: [] })), "ffffffff01ffffffff");
  });

  it("writes error results with the code in both header and body", () => {
    const h = written((w) => writeMultiResponse(w, { results: [{ type: OpCode.error, err: -103 }] }));
    assert.equal(h, "ffffffff00ffffff99" + "ffffff99" + "ffffffff01ffffffff");
  });

  it("rejects op types that cannot appear in a multi with BAD_FRAME", () => {
    assert.equal(kindOf(() => readMultiRequest(new JuteReader(unhex("0000000b00ffffffff")))), ProtocolErrorKind.BAD_FRAME);
    assert.equal(kindOf(() => readMultiResponse(new JuteReader(unhex("0000006400ffffffff")))), ProtocolErrorKind.BAD_FRAME);
  });

  it("fails a multi without terminator with SHORT_INPUT", () => {
    assert.equal(kindOf(() => readMultiResponse(new JuteReader(unhex("0000000200ffffffff")))), ProtocolErrorKind.SHORT_INPUT);
  });
});
