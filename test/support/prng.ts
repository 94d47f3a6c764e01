// One seeded PRNG (mulberry32) for every randomized test, so a failing run is replayed from its seed.
export function rng(seed: number): () => number {
  let a = seed >>> 0 || 0x9e3779b9; // seed 0 would start the sequence on a fixed point
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
