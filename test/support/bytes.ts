// Byte helpers for the protocol tests: hex in and out (whitespace in hex is ignored), concatenation,
// and an allocation recorder.
export const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
export const unhex = (s: string): Uint8Array => Uint8Array.from(s.replace(/\s+/g, "").match(/../g) ?? [], (h) => parseInt(h, 16));

export function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * Runs fn while recording, into `sizes`, the length of every `new Uint8Array(number)` made anywhere, by
 * swapping the global constructor for a recording subclass (the decoders resolve the global at call time).
 */
export function recordingAllocations<T>(fn: () => T, sizes: number[]): T {
  const Real = globalThis.Uint8Array;
  class Recording extends Real {
    constructor(...args: unknown[]) {
      if (typeof args[0] === "number") sizes.push(args[0]);
      super(...(args as [number]));
    }
  }
  globalThis.Uint8Array = Recording as Uint8ArrayConstructor;
  try {
    return fn();
  } finally {
    globalThis.Uint8Array = Real;
  }
}
