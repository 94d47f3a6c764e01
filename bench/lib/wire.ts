// What the two hand-written ends of the wire in bench/ share (the raw client and the loopback stand-in):
// opcodes from ZooKeeper's ZooDefs.OpCode, and a big-endian int as its own 4-byte buffer.
export const OP = { create: 1, delete: 2, exists: 3, getData: 4, setData: 5, ping: 11, removeWatches: 18, closeSession: -11 } as const;

/** `n` as a 4-byte big-endian Buffer. */
export function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
