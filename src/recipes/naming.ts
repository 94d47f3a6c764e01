// Contender znode names of the three protocols the recipes speak, as the other clients write them:
//   Curator LeaderLatch        `_c_<uuid>-latch-<10-digit seq>`  (ordered by the number after the last "latch-")
//   Curator InterProcessMutex  `_c_<uuid>-lock-<10-digit seq>`   (LeaderSelector too; after the last "lock-")
//   kazoo Lock / Election      `<uuid hex>__lock__<10-digit seq>` (kazoo 2.8 matches `__lock__(-?\d{10})$`)
//   Curator InterProcessReadWriteLock  `_c_<uuid>-__READ__<seq>` / `_c_<uuid>-__WRIT__<seq>` (ordered by what follows
//                              the last marker of either kind, i.e. the sequence: readers and writers in one queue)
//   kazoo ReadLock / WriteLock `<uuid hex>__rlock__<seq>` / `<uuid hex>__lock__<seq>` (a WriteLock is a kazoo Lock name)
// Order is by the sequence, never by the whole name: every contender has its own uuid prefix.
import { randomUUID } from "node:crypto";

type NamingKind = "curator-latch" | "curator-lock" | "kazoo" | "curator-read" | "curator-write" | "kazoo-read" | "kazoo-write" | "curator-lease";

export interface Naming {
  readonly kind: NamingKind;
  /** A fresh protection prefix: a create whose reply was lost is found by it (Curator and kazoo alike). */
  newPrefix(): string;
  /** The name to create (EPHEMERAL_SEQUENTIAL appends the sequence). */
  nodeName(prefix: string): string;
  /** The sequence of a contender name, or undefined for children that are not contenders. */
  sequenceOf(name: string): number | undefined;
}

function curator(kind: NamingKind, marker: string): Naming {
  return {
    kind,
    newPrefix: () => `_c_${randomUUID()}-`,
    nodeName: (prefix) => `${prefix}${marker}`,
    sequenceOf: (name) => digitsAfter(name, name.lastIndexOf(marker), marker.length),
  };
}

const KAZOO_MARK = "__lock__";

export const NAMINGS: Readonly<Record<"curator-latch" | "curator-lock" | "kazoo", Naming>> = {
  "curator-latch": curator("curator-latch", "latch-"),
  "curator-lock": curator("curator-lock", "lock-"),
  kazoo: {
    kind: "kazoo",
    newPrefix: () => `${randomUUID().replaceAll("-", "")}${KAZOO_MARK}`,
    nodeName: (prefix) => prefix,
    // kazoo's pattern is anchored at the end: exactly ten digits after the last marker.
    sequenceOf: (name) => {
      const i = name.lastIndexOf(KAZOO_MARK);
      return name.length - i - KAZOO_MARK.length === 10 ? digitsAfter(name, i, KAZOO_MARK.length) : undefined;
    },
  },
};

/** Curator InterProcessSemaphoreV2's lease znodes under `<path>/leases`: `_c_<uuid>-lease-<10-digit seq>`. */
export const CURATOR_LEASE: Naming = curator("curator-lease", "lease-");

/** The two sides of a read-write lock: names that sort together, and which names are writers. */
interface ReadWriteNaming {
  readonly read: Naming;
  readonly write: Naming;
  /** True for a writer's name (readers wait only for writers before them; writers for everything before them). */
  isWriter(name: string): boolean;
}

const CURATOR_READ = "__READ__";
const CURATOR_WRITE = "__WRIT__";
const KAZOO_READ = "__rlock__";

/** Curator sorts by what follows the last `__READ__` or `__WRIT__`; kazoo matches `(__lock__|__rlock__)(\d{10})$`. */
function readWrite(kind: "curator" | "kazoo"): ReadWriteNaming {
  const sequenceOf =
    kind === "curator"
      ? (name: string): number | undefined => {
          const r = name.lastIndexOf(CURATOR_READ);
          const w = name.lastIndexOf(CURATOR_WRITE);
          return digitsAfter(name, Math.max(r, w), CURATOR_READ.length);
        }
      : (name: string): number | undefined => {
          const w = name.lastIndexOf(KAZOO_MARK);
          const r = name.lastIndexOf(KAZOO_READ);
          const at = Math.max(r, w);
          const mark = at === r ? KAZOO_READ.length : KAZOO_MARK.length;
          return at >= 0 && name.length - at - mark === 10 ? digitsAfter(name, at, mark) : undefined;
        };
  const side = (sideKind: NamingKind, marker: string): Naming =>
    kind === "curator"
      ? { kind: sideKind, newPrefix: () => `_c_${randomUUID()}-`, nodeName: (prefix) => `${prefix}${marker}`, sequenceOf }
      : { kind: sideKind, newPrefix: () => `${randomUUID().replaceAll("-", "")}${marker}`, nodeName: (prefix) => prefix, sequenceOf };
  const writeMark = kind === "curator" ? CURATOR_WRITE : KAZOO_MARK;
  const readMark = kind === "curator" ? CURATOR_READ : KAZOO_READ;
  return {
    read: side(kind === "curator" ? "curator-read" : "kazoo-read", readMark),
    write: side(kind === "curator" ? "curator-write" : "kazoo-write", writeMark),
    isWriter: (name) => sequenceOf(name) !== undefined && name.lastIndexOf(writeMark) > name.lastIndexOf(readMark),
  };
}

export const READ_WRITE: Readonly<Record<LockNaming, ReadWriteNaming>> = { curator: readWrite("curator"), kazoo: readWrite("kazoo") };

function digitsAfter(name: string, at: number, markLength: number): number | undefined {
  if (at < 0) return undefined;
  const digits = name.slice(at + markLength);
  return /^\d{1,10}$/.test(digits) ? Number(digits) : undefined;
}

interface Candidate {
  /** The child's name under the recipe path. */
  name: string;
  sequence: number;
}

/** Children that are contenders under `naming`, in order (ties, possible only with hand-made names, by name). */
export function sortByNaming(naming: Naming, children: readonly string[]): Candidate[] {
  const out: Candidate[] = [];
  for (const name of children) {
    const sequence = naming.sequenceOf(name);
    if (sequence !== undefined) out.push({ name, sequence });
  }
  return out.sort((a, b) => a.sequence - b.sequence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Whose election a LeaderElection joins: Curator LeaderLatch, Curator LeaderSelector (a mutex), kazoo Election (a kazoo Lock). */
export type ElectionProtocol = "curator-latch" | "curator-selector" | "kazoo";
/** Whose lock a Lock speaks: Curator InterProcessMutex or kazoo Lock. */
export type LockNaming = "curator" | "kazoo";

export function electionNaming(protocol: ElectionProtocol): Naming | undefined {
  switch (protocol) {
    case "curator-latch":
      return NAMINGS["curator-latch"];
    case "curator-selector":
      return NAMINGS["curator-lock"];
    case "kazoo":
      return NAMINGS.kazoo;
    default:
      return undefined;
  }
}

export function lockNaming(naming: LockNaming): Naming | undefined {
  return naming === "curator" ? NAMINGS["curator-lock"] : naming === "kazoo" ? NAMINGS.kazoo : undefined;
}
