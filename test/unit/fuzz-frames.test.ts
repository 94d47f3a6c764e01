// Hostile bytes from a server: the frame decoder and every reply decoder fed with frames derived from
// the golden Java 3.8.0 recording (bit flips, truncations, hostile length fields, splices, random
// bytes). Only ProtocolError may come out, no Uint8Array larger than the frame limit is ever made,
// nothing decoded is longer than its frame, and every case finishes in bounded time.
// FUZZ_RUNS (default 100000) sets the total number of cases across the properties.
import console from "node:console";
import { readFileSync } from "node:fs";
import process from "node:process";
import { describe, it } from "../support/bdd.ts";
import { concat, recordingAllocations, unhex } from "../support/bytes.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  FrameDecoder,
  JuteReader,
  Ops,
  ProtocolError,
  Xid,
  opSpec,
  readConnectResponse,
  readReplyHeader,
  readWatcherEvent,
} from "../../src/protocol/index.ts";

const TOTAL = Number(process.env.FUZZ_RUNS ?? 100_000);
// Small on purpose: larger than every golden frame (≤ 251 bytes), so valid frames pass and
// mutated length prefixes routinely exceed it.
const MAX_FRAME = 512;
// "Nothing hangs": a generous bound per case (other processes and GC pauses share 2 cores). The average per
// case is printed, not asserted: speed is measured, not tested (it depends on what else the machine runs).
const MAX_CASE_MS = 2000;

interface Golden {
  conn: number;
  dir: string;
  label: string;
  opcode: number | null;
  hex: string;
}
interface ServerFrame {
  conn: number;
  bytes: Uint8Array; // with the length prefix
  connect: boolean;
  opcode: number | null;
}

const golden = JSON.parse(readFileSync(new URL("../../fixtures/frames/java-3.8.0.json", (import.meta as { url: string }).url), "utf8")) as { frames: Golden[] };
const seenConn = new Set<number>();
const serverFrames: ServerFrame[] = golden.frames
  .filter((f) => f.dir === "s2c")
  .map((f) => {
    const connect = !seenConn.has(f.conn);
    seenConn.add(f.conn);
    return { conn: f.conn, bytes: unhex(f.hex), connect, opcode: f.opcode };
  });
const streams: Uint8Array[] = [...seenConn].map((c) => concat(serverFrames.filter((f) => f.conn === c).map((f) => f.bytes)));
const replyDecoders = Object.values(Ops).map((s) => s.readResponse as (r: JuteReader) => unknown);

// --- mutations ---

type Mutation =
  | { k: "flip"; bits: number[] }
  | { k: "truncate"; at: number }
  | { k: "int"; at: number; value: number | "len" | "len+1" }
  | { k: "splice"; other: number; cutA: number; cutB: number }
  | { k: "insert"; at: number; bytes: Uint8Array }
  | { k: "erase"; at: number; n: number };

const hostileInts = fc.constantFrom<number | "len" | "len+1">(-(2 ** 31), -2, -1, 0, 1, 4, 15, 16, MAX_FRAME, MAX_FRAME + 1, 2 ** 31 - 1, 0x100000, "len", "len+1");
const frac = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ k: fc.constant("flip" as const), bits: fc.array(fc.nat(), { minLength: 1, maxLength: 8 }) }),
  fc.record({ k: fc.constant("truncate" as const), at: frac }).map((m) => ({ k: m.k, at: m.at }) as Mutation),
  fc.record({ k: fc.constant("int" as const), at: fc.nat(), value: fc.oneof(hostileInts, fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })) }),
  fc.record({ k: fc.constant("splice" as const), other: fc.nat(), cutA: fc.nat(), cutB: fc.nat() }),
  fc.record({ k: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 12 }) }),
  fc.record({ k: fc.constant("erase" as const), at: fc.nat(), n: fc.integer({ min: 1, max: 8 }) }),
) as fc.Arbitrary<Mutation>;

function mutate(input: Uint8Array, m: Mutation, pool: readonly Uint8Array[]): Uint8Array {
  const b = Uint8Array.from(input);
  const n = b.length;
  switch (m.k) {
    case "flip":
      if (n > 0) for (const bit of m.bits) b[(bit >> 3) % n]! ^= 1 << (bit & 7);
      return b;
    case "truncate":
      return b.subarray(0, Math.floor((m.at as number) * n));
    case "int": {
      if (n < 4) return b;
      // Length fields sit on 4-byte boundaries of the payload most of the time: favour them.
      const at = m.at % 2 === 0 ? ((m.at >> 1) % Math.floor(n / 4)) * 4 : (m.at >> 1) % (n - 3);
      const v = m.value === "len" ? n - at - 4 : m.value === "len+1" ? n - at - 3 : m.value;
      new DataView(b.buffer).setInt32(at, v | 0);
      return b;
    }
    case "splice": {
      const other = pool[m.other % pool.length]!;
      return concat([b.subarray(0, m.cutA % (n + 1)), other.subarray(m.cutB % (other.length + 1))]);
    }
    case "insert": {
      const at = m.at % (n + 1);
      return concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
    }
    case "erase": {
      const at = m.at % (n + 1);
      return concat([b.subarray(0, at), b.subarray(at + m.n)]);
    }
  }
}

// --- the checks ---

/** The largest length of any array, byte array or string inside a decoded value. */
function largest(v: unknown, depth = 0): number {
  if (depth > 20) throw new Error("decoded value nests too deep");
  if (typeof v === "string") return v.length;
  if (v instanceof Uint8Array) return v.length;
  if (Array.isArray(v)) return Math.max(v.length, ...v.map((x) => largest(x, depth + 1)));
  if (v !== null && typeof v === "object") return Math.max(0, ...Object.values(v).map((x) => largest(x, depth + 1)));
  return 0;
}

/** Decodes one server payload the way the connection does; `alt` picks a second, arbitrary reply decoder. */
function decodeServerPayload(payload: Uint8Array, connect: boolean, opcode: number | null, alt: number): unknown[] {
  const out: unknown[] = [];
  const reader = () => new JuteReader(payload, 0, payload.length, MAX_FRAME * 2);
  if (connect) {
    out.push(readConnectResponse(reader()));
    return out;
  }
  const r = reader();
  const h = readReplyHeader(r);
  out.push(h);
  if (h.xid === Xid.NOTIFICATION) out.push(readWatcherEvent(r));
  else if (h.xid >= 0 && opcode !== null) {
    const spec = opSpec(opcode);
    if (spec) out.push(spec.readResponse(r));
  }
  // Whatever the header says, every reply decoder must survive the body too.
  const r2 = reader();
  if (r2.remaining >= 16) readReplyHeader(r2);
  out.push(replyDecoders[alt % replyDecoders.length]!(r2));
  return out;
}

interface Outcome {
  frames: number;
  errors: number;
}

/** Feeds `stream` in chunks to a decoder with MAX_FRAME and decodes each frame; only ProtocolError may escape. */
function runStream(stream: Uint8Array, cuts: readonly number[], firstIsConnect: boolean, opcode: (i: number) => number | null, alt: number): Outcome {
  const sizes: number[] = [];
  const res: Outcome = { frames: 0, errors: 0 };
  const started = performance.now();
  recordingAllocations(() => {
    const d = new FrameDecoder(MAX_FRAME);
    const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
    let from = 0;
    try {
      for (const to of [...points, stream.length]) {
        for (const f of d.push(stream.subarray(from, to))) {
          assert.ok(f.length <= MAX_FRAME, `frame of ${f.length} bytes passed a ${MAX_FRAME} limit`);
          const i = res.frames++;
          try {
            for (const v of decodeServerPayload(f, firstIsConnect && i === 0, opcode(i), alt + i)) {
              assert.ok(largest(v) <= f.length, `decoded a field longer than its ${f.length}-byte frame`);
            }
          } catch (e) {
            if (!(e instanceof ProtocolError)) throw e;
            res.errors++;
          }
        }
        assert.ok(d.buffered <= MAX_FRAME + 4, `decoder holds ${d.buffered} bytes`);
        from = to;
      }
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      res.errors++;
    }
  }, sizes);
  const big = sizes.filter((s) => s > MAX_FRAME);
  assert.deepEqual(big, [], `allocations beyond ${MAX_FRAME}: ${big.join(",")}`);
  const ms = performance.now() - started;
  assert.ok(ms < MAX_CASE_MS, `one case took ${ms.toFixed(1)} ms`);
  return res;
}

function quiet(fn: () => void, runs: number): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0; // tens of thousands of expected throws: skip stack capture
  const t0 = performance.now();
  try {
    fn();
  } finally {
    Error.stackTraceLimit = limit;
  }
  const avg = (performance.now() - t0) / runs;
  console.log(`[fuzz-frames] ${runs} cases, ${avg.toFixed(3)} ms per case on average`);
}

describe("fuzzing the frame and reply decoders with mutated golden frames", () => {
  const share = { frame: Math.ceil(TOTAL * 0.6), stream: Math.ceil(TOTAL * 0.3), random: Math.ceil(TOTAL * 0.1) };
  const pool = serverFrames.map((f) => f.bytes);

  it("the golden server frames themselves decode cleanly (control)", () => {
    assert.ok(serverFrames.length > 80, `only ${serverFrames.length} server frames`);
    for (const s of streams) {
      const out = runStream(s, [1, 7, 50], true, () => null, 0);
      assert.ok(out.frames > 0);
    }
    let ok = 0;
    for (const f of serverFrames) {
      const payload = f.bytes.subarray(4);
      if (f.connect) readConnectResponse(new JuteReader(payload));
      else {
        const r = new JuteReader(payload);
        const h = readReplyHeader(r);
        if (h.xid === Xid.NOTIFICATION) readWatcherEvent(r);
        else if (h.xid >= 0 && h.err === 0 && f.opcode !== null) opSpec(f.opcode)?.readResponse(r);
        if (h.xid >= 0 && h.err === 0) assert.equal(r.remaining, 0, `opcode ${f.opcode}: ${r.remaining} bytes left`);
      }
      ok++;
    }
    assert.equal(ok, serverFrames.length);
  });

  it(`single frames, 1-3 mutations each (${share.frame} cases)`, () => {
    let errors = 0;
    quiet(() =>
      fc.assert(
        fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 3 }), fc.array(fc.nat(), { maxLength: 4 }), fc.nat(), (pick, muts, cuts, alt) => {
          const base = serverFrames[pick % serverFrames.length]!;
          const bytes = muts.reduce((b, m) => mutate(b, m, pool), base.bytes);
          errors += runStream(bytes, cuts, base.connect, () => base.opcode, alt).errors;
        }),
        { numRuns: share.frame },
      ),
      share.frame,
    );
    // The mutations must actually reach the error paths (a fuzzer that never fails is not fuzzing).
    process.stdout.write(`single frames: ${errors} rejections in ${share.frame} cases\n`);
    assert.ok(errors > share.frame / 4, `only ${errors} rejections in ${share.frame} cases`);
  }, 600_000);

  it(`whole connection streams, mutated and re-chunked (${share.stream} cases)`, () => {
    let errors = 0;
    quiet(() =>
      fc.assert(
        fc.property(fc.nat(), fc.array(mutation, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { maxLength: 8 }), fc.nat(), (pick, muts, cuts, alt) => {
          const s = streams[pick % streams.length]!;
          const bytes = muts.reduce((b, m) => mutate(b, m, pool), s);
          // Opcodes are unknown after a mutation: each frame gets an arbitrary decoder via alt.
          errors += runStream(bytes, cuts, true, (i) => (alt + i) % 2 === 0 ? null : 4, alt).errors;
        }),
        { numRuns: share.stream },
      ),
      share.stream,
    );
    process.stdout.write(`streams: ${errors} rejections in ${share.stream} cases\n`);
    assert.ok(errors > share.stream / 4, `only ${errors} rejections in ${share.stream} cases`);
  }, 600_000);

  it(`random bytes behind a valid or hostile length prefix (${share.random} cases)`, () => {
    quiet(() =>
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), fc.oneof(fc.constant(-1), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), fc.boolean(), fc.nat(), (junk, len, connect, alt) => {
          const b = new Uint8Array(4 + junk.length);
          new DataView(b.buffer).setInt32(0, len === -1 ? junk.length : len);
          b.set(junk, 4);
          runStream(b, [alt], connect, () => alt % 110, alt);
        }),
        { numRuns: share.random },
      ),
      share.random,
    );
  }, 600_000);
});
