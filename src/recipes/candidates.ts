// Reading the contenders of an election or lock path: their ids (the znodes' data, as Curator's
// LeaderLatch/LeaderSelector and kazoo's Election write them) in protocol order; the first leads.
import type { ZooKeeper } from "../client/index.ts";
import { isZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { NAMINGS, sortByNaming, type Naming } from "./naming.ts";

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

/** The election path's children; none when the path is gone (a container reaped after its last child). */
export async function childrenOrNone(zk: ZooKeeper, path: string): Promise<string[]> {
  try {
    return await zk.getChildren(path);
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return [];
    throw e;
  }
}

/** Every candidate under `path` with its id (the znode's data), in order; the first leads. */
export async function readParticipants(zk: ZooKeeper, path: string, naming: Naming = NAMINGS["curator-latch"]): Promise<Participant[]> {
  const read = await Promise.all(
    sortByNaming(naming, await childrenOrNone(zk, path)).map(async (c) => {
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
