// Byte helpers shared by the layers (the SASL mechanisms, Kerberos, four-letter words).

/** The parts one after another in a new array. */
export function concatBytes(...parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
