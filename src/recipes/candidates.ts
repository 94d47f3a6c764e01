// Candidate znode names, as Apache Curator's LeaderLatch writes them: `_c_<uuid>-latch-<10-digit seq>`.
// Order is by the number after the LAST "latch-", never by the whole name: prefixes differ between
// participants (each has its own protection uuid), so sorting whole names would rank by uuid.

import type { ZooKeeper } from "../client/index.ts";
import { isZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";

export const LATCH = "latch-";
const decoder = new TextDecoder("utf-8", { ignoreBOM: true }); // ids keep a leading U+FEFF

/** A candidate of an election as read from the server. */
export interface Participant {
  /** The participant id stored in its znode. */
  id: string;
  /** The candidate znode's full path. */
  path: string;
  /** Its sequence number: the lowest leads. */
  sequence: number;
  /** True for the first candidate (the leader). */
  isLeader: boolean;
}

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

/** Every candidate under `path` with its id (the znode's data), in election order; the first leads. */
export async function readParticipants(zk: ZooKeeper, path: string): Promise<Participant[]> {
  let children: string[];
  try {
    children = await zk.getChildren(path);
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return [];
    throw e;
  }
  const read = await Promise.all(
    sortCandidates(children).map(async (c) => {
      const full = `${path}/${c.name}`;
      try {
        const { data } = await zk.getData(full);
        return { id: data ? decoder.decode(data) : "", path: full, sequence: c.sequence, isLeader: false };
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.NONODE)) return null; // left meanwhile
        throw e;
      }
    }),
  );
  const out = read.filter((p): p is Participant => p !== null);
  if (out.length > 0) out[0].isLeader = true;
  return out;
}
