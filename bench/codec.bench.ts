// Codec micro-benchmarks (mitata): ns per encode/decode of the records on the hot path.
// Run: npx tsx bench/codec.bench.ts  (also: npx bun bench/codec.bench.ts, npx deno run -A bench/codec.bench.ts)
import { bench, do_not_optimize, group, run, summary } from "mitata";
import { OpCode, Xid } from "../src/protocol/constants.ts";
import { encodeRequest } from "../src/protocol/frame.ts";
import { JuteReader, JuteWriter } from "../src/protocol/jute.ts";
import { Ops } from "../src/protocol/ops.ts";
import { type Stat, readReplyHeader, readWatcherEvent, writeReplyHeader, writeWatcherEvent } from "../src/protocol/records.ts";

const path = "/bench/zookeeper-ts/node";
const stat: Stat = {
  czxid: 0x100000002n, mzxid: 0x100000abcn, ctime: 1_700_000_000_000, mtime: 1_700_000_000_123, version: 42, cversion: 0,
  aversion: 0, ephemeralOwner: 0n, dataLength: 100, numChildren: 0, pzxid: 0x100000002n,
};
const data = new Uint8Array(100).fill(97);

// Replies as the client meets them: frames inside a larger socket chunk (off-heap Buffer).
function inChunk(build: (w: JuteWriter) => void): Uint8Array {
  const w = new JuteWriter();
  build(w);
  const chunk = Buffer.alloc(w.length + 64);
  chunk.set(w.written(), 32);
  return chunk.subarray(32, 32 + w.length);
}
const getDataReply = inChunk((w) => {
  writeReplyHeader(w, { xid: 7, zxid: 0x100000abcn, err: 0 });
  Ops.getData.writeResponse(w, { data, stat });
});
const eventFrame = inChunk((w) => {
  writeReplyHeader(w, { xid: Xid.NOTIFICATION, zxid: -1n, err: 0 });
  writeWatcherEvent(w, { type: 3, state: 3, path: "/bench/w/1234" });
});

const writer = new JuteWriter();
summary(() => {
  group("encode", () => {
    bench("RequestHeader + GetDataRequest → frame (fresh writer)", () => {
      do_not_optimize(encodeRequest(7, OpCode.getData, Ops.getData.writeRequest, { path, watch: false }));
    });
    bench("RequestHeader + GetDataRequest → frame (reused writer)", () => {
      do_not_optimize(encodeRequest(7, OpCode.getData, Ops.getData.writeRequest, { path, watch: false }, writer));
    });
    bench("WatcherEvent → frame (reused writer)", () => {
      writer.reset();
      writeReplyHeader(writer, { xid: Xid.NOTIFICATION, zxid: -1n, err: 0 });
      writeWatcherEvent(writer, { type: 3, state: 3, path: "/bench/w/1234" });
      do_not_optimize(writer.toBytes());
    });
  });
  group("decode", () => {
    bench("ReplyHeader + GetDataResponse (100 B)", () => {
      const r = new JuteReader(getDataReply);
      do_not_optimize(readReplyHeader(r));
      do_not_optimize(Ops.getData.readResponse(r));
    });
    bench("ReplyHeader + WatcherEvent", () => {
      const r = new JuteReader(eventFrame);
      do_not_optimize(readReplyHeader(r));
      do_not_optimize(readWatcherEvent(r));
    });
  });
});

await run({ colors: process.stdout.isTTY === true });
