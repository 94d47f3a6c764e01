// zkts leader / members / semaphore / partition: read a LeaderElection (or Curator LeaderLatch) election, a
// GroupMember group, a Semaphore (Curator's or kazoo's layout) and a SetPartitioner (kazoo's layout) through the
// recipes' own reading where they have one (participants(), members(), contenders()), without joining any.
import { ErrorCode, GroupMember, LeaderElection, Lock, type LockNaming, type ZooKeeper, isZooKeeperError } from "../index.ts";
import { Failure } from "./errors.ts";
import { type Context, type Parsed, type Run, intOption } from "./command.ts";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

export const commands: Record<string, Run> = {
  async leader(ctx, a) {
    // Never started: participants() only reads the election's children and their data.
    const election = new LeaderElection(ctx.zk, a.positionals[0], { id: "" });
    const all = await election.participants();
    if (all.length === 0) throw new Failure(`no leader (${a.positionals[0]})`);
    const shown = a.values.all === true ? all : all.slice(0, 1);
    ctx.out.result(a.values.all === true ? shown : shown[0], shown.map((p) => p.id));
  },

  async members(ctx, a) {
    const group = new GroupMember(ctx.zk, a.positionals[0], { id: "zkts" }); // never joined: members() only reads
    const members = await group.members();
    ctx.out.result(members.map((m) => ({ id: m.id, data: m.data === null ? null : decoder.decode(m.data) })), members.map((m) => m.id));
  },

  semaphore,
  partition,
};

const hex = (n: bigint): string => `0x${n.toString(16)}`;
const shownId = (id: string): string => (id === "" || /\s/.test(id) ? JSON.stringify(id) : id);
const name = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

/** A child of `parent` as read: null when it went away meanwhile. */
interface Node {
  path: string;
  id: string;
  czxid: bigint;
  session: bigint;
}

/** The children of `parent` with their data (ids) and owners, oldest first; none when `parent` is gone. */
async function readNodes(zk: ZooKeeper, parent: string, signal: AbortSignal): Promise<Node[]> {
  let kids: string[];
  try {
    kids = await zk.getChildren(parent, undefined, { signal });
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return [];
    throw e;
  }
  const read = await Promise.all(
    kids.map(async (k): Promise<Node | null> => {
      const path = parent === "/" ? `/${k}` : `${parent}/${k}`;
      try {
        const { data, stat } = await zk.getData(path, undefined, { signal });
        return { path, id: data ? decoder.decode(data) : "", czxid: stat.czxid, session: stat.ephemeralOwner };
      } catch (e) {
        if (isZooKeeperError(e, ErrorCode.NONODE)) return null; // released meanwhile
        throw e;
      }
    }),
  );
  return read.filter((n): n is Node => n !== null).sort((a, b) => (a.czxid < b.czxid ? -1 : a.czxid > b.czxid ? 1 : 0));
}

/** A mutex contender in the order of its layout (the first holds the mutex), with its session. */
async function mutexQueue(zk: ZooKeeper, path: string, naming: LockNaming, signal: AbortSignal): Promise<Node[]> {
  const contenders = await new Lock(zk, path, { naming }).contenders(); // only reads
  const read = await Promise.all(
    contenders.map(async (c): Promise<Node | null> => {
      const stat = await zk.exists(c.path, undefined, { signal });
      return stat === null ? null : { path: c.path, id: c.id, czxid: stat.czxid, session: stat.ephemeralOwner };
    }),
  );
  return read.filter((n): n is Node => n !== null);
}

const KAZOO_LEASE = /^[0-9a-f]{32}$/; // kazoo Semaphore: `<path>/<uuid4 hex>`

/**
 * The layout of the semaphore at `path`, told from what is there: Curator InterProcessSemaphoreV2 keeps `locks` (its
 * mutex) and `leases` below the path; kazoo's Semaphore keeps leases named by a uuid's hex below it, its mutex
 * beside it (`<path>-__lock__`) and its max_leases as the path's data. Null when nothing tells (no leases, no mutex).
 */
async function semaphoreLayout(zk: ZooKeeper, path: string, kids: string[], data: string, signal: AbortSignal): Promise<LockNaming | null> {
  if (kids.includes("leases") || kids.includes("locks")) return "curator";
  if (kids.length > 0) {
    if (kids.every((k) => KAZOO_LEASE.test(k))) return "kazoo";
    throw new Failure(`${path} is not a semaphore of either layout (children: ${kids.slice(0, 5).join(", ")}${kids.length > 5 ? ", ..." : ""}); --naming tells which`);
  }
  if (/^\s*\d+\s*$/.test(data) || (await zk.exists(`${path}-__lock__`, undefined, { signal })) !== null) return "kazoo";
  return null;
}

/**
 * kazoo's Semaphore (2.8, Python 3) hands its identifier, already bytes, to its mutex's Lock, which stores `str()` of
 * it: the waiters' mutex znodes hold `b'<id>'`. Shown as the id its lease will carry.
 */
function unwrapBytes(id: string): string {
  const m = /^b'([^'\\]*)'$/.exec(id) ?? /^b"([^"\\]*)"$/.exec(id);
  return m ? m[1] : id;
}

interface Lease {
  id: string;
  path: string;
  session: string;
}

interface Waiter extends Lease {
  /** Curator: the lease znode that the mutex holder made and that waits for a free lease. */
  lease?: string;
}

async function semaphore(ctx: Context, a: Parsed): Promise<void> {
  const path = a.positionals[0];
  const zk = ctx.zk;
  const { data } = await zk.getData(path, undefined, { signal: ctx.signal }); // NONODE: no semaphore here
  const text = data ? decoder.decode(data) : "";
  const kids = await zk.getChildren(path, undefined, { signal: ctx.signal });
  const given = a.values.naming;
  const layout: LockNaming | null = given === "curator" || given === "kazoo" ? given : await semaphoreLayout(zk, path, kids, text, ctx.signal);
  const told = intOption(a, "permits", "semaphore --permits N", 1);
  const stored = layout === "kazoo" && /^\s*\d+\s*$/.test(text) ? Number(text) : null; // Curator does not store it
  if (told !== undefined && stored !== null && told !== stored) throw new Failure(`${path} stores ${stored} permits (kazoo's max_leases); --permits says ${told}`);
  const permits = stored ?? told ?? null;
  let leases: Node[] = [];
  let queue: Node[] = [];
  let pending: Node | undefined;
  if (layout === "curator") {
    [leases, queue] = await Promise.all([readNodes(zk, `${path}/leases`, ctx.signal), mutexQueue(zk, `${path}/locks`, "curator", ctx.signal)]);
    // Curator's acquire makes its lease znode while holding the mutex, and holds the mutex while that lease waits
    // for a free one: the newest lease znode of the mutex holder's session is waiting, not held. Without the permits
    // that is a guess (the holder may have just made a lease that fits, or hold an older one of the same session);
    // with them it is exact: the newest waits only while there are more lease znodes than permits.
    const newest = leases[leases.length - 1];
    const over = told === undefined || leases.length > told;
    if (over && queue.length > 0 && newest !== undefined && newest.session === queue[0].session) pending = leases.pop();
  } else if (layout === "kazoo") {
    [leases, queue] = await Promise.all([readNodes(zk, path, ctx.signal), mutexQueue(zk, `${path}-__lock__`, "kazoo", ctx.signal)]);
  }
  const lease = (n: Node): Lease => ({ id: layout === "kazoo" ? unwrapBytes(n.id) : n.id, path: n.path, session: hex(n.session) });
  // Curator's mutex znodes carry its client's default data (the host's address), its lease znodes the semaphore's
  // node data: the mutex holder with a lease waiting is named by that lease.
  const waiters: Waiter[] = queue.map((n, i) => (i === 0 && pending ? { ...lease(n), id: pending.id, lease: pending.path } : lease(n)));
  const kind =
    layout === "curator" ? `Curator InterProcessSemaphoreV2, ${told !== undefined ? `${told} permits (--permits)` : "permits not stored"}`
    : layout === "kazoo" ? `kazoo Semaphore, ${stored !== null ? `${stored} permits (max_leases)` : told !== undefined ? `${told} permits (--permits)` : "permits not stored"}`
    : "nothing there (no leases, no mutex), layout unknown";
  const plain = [
    `semaphore ${path}: ${kind}`,
    `leases (${leases.length}):`,
    ...leases.map((n) => `  ${shownId(lease(n).id)}  ${name(n.path)}`),
    `waiters (${waiters.length}):`,
    ...waiters.map((w, i) => `  ${shownId(w.id)}  ${name(w.path)}${i === 0 ? `  holds the mutex${w.lease ? `; its lease ${name(w.lease)} waits for a free one` : ""}` : ""}`),
  ];
  ctx.out.result({ path, layout, permits, leases: leases.map(lease), waiters }, plain);
}

/** The items of --set: comma-separated znode names (checked by parseCommand). */
function setOption(a: Parsed): string[] | undefined {
  const v = a.values.set;
  return typeof v === "string" ? v.split(",").filter((s) => s !== "") : undefined;
}

async function partition(ctx: Context, a: Parsed): Promise<void> {
  const path = a.positionals[0];
  const set = setOption(a);
  const zk = ctx.zk;
  await zk.getData(path, undefined, { signal: ctx.signal }); // NONODE: no partitioner here
  // kazoo's layout: the party `<path>/party/<uuid hex>-<id>` (a ShallowParty), each item's kazoo Lock at `<path>/locks/<item>`.
  // kazoo's own members lock their items with no identifier (empty data): an item's holder is the party member of
  // the lock znode's session, and only a holder outside the party is named by the data (ours writes the id there).
  const partyNodes = await readNodes(zk, `${path}/party`, ctx.signal);
  const party = partyNodes.map((n) => name(n.path).slice(name(n.path).indexOf("-") + 1));
  const bySession = new Map(partyNodes.map((n, i) => [n.session, party[i]]));
  let locked: string[] = [];
  try {
    locked = await zk.getChildren(`${path}/locks`, undefined, { signal: ctx.signal });
  } catch (e) {
    if (!isZooKeeperError(e, ErrorCode.NONODE)) throw e;
  }
  const items = [...new Set([...(set ?? []), ...locked])].sort(byCodePoint);
  const queues = await Promise.all(
    items.map(async (item) => (locked.includes(item) ? (await mutexQueue(zk, `${path}/locks/${item}`, "kazoo", ctx.signal)).map((n) => ({ id: bySession.get(n.session) ?? n.id })) : [])),
  );
  const members = new Map<string, { id: string; items: string[]; waiting: string[]; inParty: boolean }>();
  const member = (id: string): { id: string; items: string[]; waiting: string[]; inParty: boolean } => {
    let m = members.get(id);
    if (!m) members.set(id, (m = { id, items: [], waiting: [], inParty: party.includes(id) }));
    return m;
  };
  for (const id of [...party].sort(byCodePoint)) member(id);
  const unheld: string[] = [];
  items.forEach((item, i) => {
    const q = queues[i];
    if (q.length === 0) return void unheld.push(item);
    member(q[0].id).items.push(item);
    for (const w of q.slice(1)) member(w.id).waiting.push(item);
  });
  const all = [...members.values()];
  const plain = [
    `partition ${path}: ${party.length} member${party.length === 1 ? "" : "s"}, ${items.length} item${items.length === 1 ? "" : "s"}`,
    ...all.map(
      (m) =>
        `  ${shownId(m.id)}  ${m.items.length > 0 ? m.items.join(" ") : "(none)"}${m.waiting.length > 0 ? `  (waiting for ${m.waiting.join(" ")})` : ""}${m.inParty ? "" : "  (not in the party)"}`,
    ),
    ...(unheld.length > 0 ? [`unheld: ${unheld.join(" ")}`] : []),
  ];
  ctx.out.result({ path, members: all, unheld }, plain);
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
