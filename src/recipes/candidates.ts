// Candidate znode names, as Apache Curator's LeaderLatch writes them: `_c_<uuid>-latch-<10-digit seq>`.
// Order is by the number after the LAST "latch-", never by the whole name: prefixes differ between
// participants (each has its own protection uuid), so sorting whole names would rank by uuid.

export const LATCH = "latch-";

export interface Candidate {
  /** The child's name under the election path. */
  name: string;
  /** The sequence number after the last "latch-". */
  sequence: number;
}

/** The protection prefix of one create attempt; a retried create finds its node by it. */
export function protectedPrefix(uuid: string): string {
  return `_c_${uuid}-`;
}

/** The sequence of a candidate name, or undefined for children that are not candidates. */
export function sequenceOf(name: string): number | undefined {
  const i = name.lastIndexOf(LATCH);
  if (i < 0) return undefined;
  const digits = name.slice(i + LATCH.length);
  if (!/^\d{1,10}$/.test(digits)) return undefined;
  return Number(digits);
}

/** Children that are candidates, in election order (ties, possible only with hand-made names, by name). */
export function sortCandidates(children: readonly string[]): Candidate[] {
  const out: Candidate[] = [];
  for (const name of children) {
    const sequence = sequenceOf(name);
    if (sequence !== undefined) out.push({ name, sequence });
  }
  return out.sort((a, b) => a.sequence - b.sequence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
