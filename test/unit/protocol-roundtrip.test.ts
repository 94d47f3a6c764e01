// Property tests over every record and both directions of every op: encode then decode gives the same
// value and consumes exactly the encoding; every truncation and random garbage fail only with ProtocolError.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import fc from "fast-check";
import { JuteReader, JuteWriter, Ops, ProtocolError, ProtocolErrorKind } from "../../src/protocol/index.ts";
import { type RecordCase, recordCases } from "../support/arbitraries.ts";

const RUNS = 200;

function encode(c: RecordCase, value: unknown): Uint8Array {
  // A tiny initial capacity makes every case exercise the writer's growth path.
  const w = new JuteWriter(1);
  c.write(w, value);
  return w.toBytes();
}

/** Copies `bytes` into the middle of a larger buffer so decoding runs at a non-zero byteOffset. */
function embedded(bytes: Uint8Array, pad: number): Uint8Array {
  const big = new Uint8Array(bytes.length + 2 * pad).fill(0xa5);
  big.set(bytes, pad);
  return big.subarray(pad, pad + bytes.length);
}

function expectProtocolError(fn: () => unknown, kinds: readonly string[], what: () => string): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  // Messages are built only on failure: this runs for every cut point of every sample.
  if (caught === undefined) assert.fail(`${what()}: decoded without an error`);
  if (!(caught instanceof ProtocolError)) assert.fail(`${what()}: threw ${String(caught)} instead of ProtocolError`);
  if (!kinds.includes(caught.kind)) assert.fail(`${what()}: kind ${caught.kind} not in ${kinds.join("/")}`);
}

/** Thousands of expected throws per case: skipping stack capture keeps them cheap. */
function withoutStacks(fn: () => void): void {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    fn();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

describe("protocol round-trips", () => {
  it("covers every op of the table in both directions", () => {
    const names = new Set(recordCases.map((c) => c.name));
    for (const op of Object.keys(Ops)) {
      assert.ok(names.has(`${op} request`) && names.has(`${op} response`), op);
    }
  });

  for (const c of recordCases) {
    it(`${c.name}: decode(encode(v)) equals v and consumes every byte`, () => {
      fc.assert(
        fc.property(c.arb, fc.nat(7), (value, pad) => {
          const bytes = encode(c, value);
          const r = new JuteReader(embedded(bytes, pad));
          const back = c.read(r);
          assert.equal(r.remaining, 0, "bytes left over");
          assert.equal(r.offset, bytes.length);
          assert.deepStrictEqual(back, value);
          // Encoding is deterministic: the decoded value re-encodes to the same bytes.
          assert.deepStrictEqual(encode(c, back), bytes);
        }),
        { numRuns: RUNS },
      );
    });

    it(`${c.name}: every truncation throws SHORT_INPUT or BAD_LENGTH`, () => {
      const kinds = [ProtocolErrorKind.SHORT_INPUT, ProtocolErrorKind.BAD_LENGTH];
      withoutStacks(() =>
        fc.assert(
          fc.property(c.arb, (value) => {
            const bytes = encode(c, value);
            for (let i = 0; i < bytes.length; i++) {
              if (c.optionalLastByte && i === bytes.length - 1) {
                // A reply without the readOnly byte is legal (old clients); it reads as readOnly=false.
                const back = c.read(new JuteReader(bytes, 0, i)) as { readOnly: boolean };
                assert.equal(back.readOnly, false);
                continue;
              }
              // Both ways of bounding the input, alternating: an `end` index, and a shorter view of the bytes.
              const reader = i % 2 === 0 ? new JuteReader(bytes, 0, i) : new JuteReader(bytes.subarray(0, i));
              expectProtocolError(() => c.read(reader), kinds, () => `${c.name} cut at ${i}/${bytes.length}`);
            }
          }),
          { numRuns: RUNS },
        ),
      );
    });

    it(`${c.name}: random bytes decode or throw ProtocolError, nothing else`, () => {
      withoutStacks(() =>
        fc.assert(
          fc.property(fc.uint8Array({ maxLength: 96 }), (junk) => {
            try {
              c.read(new JuteReader(junk));
            } catch (e) {
              assert.ok(e instanceof ProtocolError, `${c.name}: threw ${String(e)}`);
            }
          }),
          { numRuns: RUNS },
        ),
      );
    });
  }
});
