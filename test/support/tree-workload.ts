// TreeCache checks: a seeded random workload of creates, setData and deletes under a root, a fresh
// recursive read of the tree, a dump of the cache, and the cache's event stream replayed onto its
// initial snapshot. Trees are compared as "path → data (hex) @ mzxid" maps.
import type { ZooKeeper } from "../../src/index.ts";
import { isZooKeeperError } from "../../src/index.ts";
import type { CachedNode, TreeCache } from "../../src/recipes/index.ts";
import { rng } from "./prng.ts";
import { until } from "./wait.ts";

export type Tree = Map<string, string>;

const hex = (d: Uint8Array | null): string => (d === null ? "null" : Buffer.from(d).toString("hex"));
const key = (n: CachedNode): string => `${hex(n.data)}@${n.stat.mzxid}`;


/** Reads the tree under `root` (the root included) with a sync first. */
export async function freshRead(zk: ZooKeeper, root: string): Promise<Tree> {
  await zk.sync(root);
  const out: Tree = new Map();
  const walk = async (path: string): Promise<void> => {
    try {
      const [got, kids] = await Promise.all([zk.getData(path), zk.getChildren(path)]);
      out.set(path, key(got));
      await Promise.all(kids.map((k) => walk(path === "/" ? `/${k}` : `${path}/${k}`)));
    } catch (e) {
      if (!isZooKeeperError(e, -101)) throw e; // deleted meanwhile (only while writes still run)
    }
  };
  await walk(root);
  return out;
}

async function untilConnected(zk: ZooKeeper): Promise<void> {
  await until("the writer to be connected", () => {
    if (zk.state === "expired" || zk.state === "closed") throw new Error(`the writer's session is ${zk.state}`);
    return zk.state === "connected";
  });
}

export function dump(cache: TreeCache): Tree {
  const out: Tree = new Map();
  for (const p of cache.paths()) out.set(p, key(cache.get(p)!));
  return out;
}

/** Records the cache's events from now on onto `base` (the snapshot at "initialized"). */
export function replayer(cache: TreeCache, base: Tree): { tree: Tree; events: number } {
  const state = { tree: new Map(base), events: 0 };
  cache.on("added", (p, n) => {
    state.events++;
    if (state.tree.has(p)) throw new Error(`added twice: ${p}`);
    state.tree.set(p, key(n));
  });
  cache.on("changed", (p, n) => {
    state.events++;
    if (!state.tree.has(p)) throw new Error(`changed before added: ${p}`);
    if (state.tree.get(p) === key(n)) throw new Error(`repeated change: ${p}`);
    state.tree.set(p, key(n));
  });
  cache.on("removed", (p) => {
    state.events++;
    if (!state.tree.delete(p)) throw new Error(`removed twice: ${p}`);
  });
  return state;
}

export function diff(a: Tree, b: Tree): string[] {
  const out: string[] = [];
  for (const [p, v] of a) if (b.get(p) !== v) out.push(`${p}: ${v} vs ${b.get(p) ?? "absent"}`);
  for (const p of b.keys()) if (!a.has(p)) out.push(`${p}: absent vs ${b.get(p)}`);
  return out.slice(0, 10);
}

/**
 * `count` random changes under `root` (kept to about `width` nodes over three levels), `parallel`
 * at a time; errors from racing changes (NONODE, NODEEXISTS, NOTEMPTY) count as done.
 * Runs until the server has applied `count` changes (at most `parallel - 1` more); returns how many.
 */
export async function randomWorkload(zk: ZooKeeper, root: string, count: number, seed: number, parallel = 16, width = 6): Promise<number> {
  const rand = rng(seed);
  const pick = (): string => {
    let p = root;
    const depth = 1 + Math.floor(rand() * 3);
    for (let i = 0; i < depth; i++) p += `/n${Math.floor(rand() * width)}`;
    return p;
  };
  let applied = 0;
  let next = 0;
  const one = async (): Promise<void> => {
    const path = pick();
    const r = rand();
    try {
      if (r < 0.4) await zk.create(path, `c${next}`);
      else if (r < 0.8) await zk.setData(path, `s${next}`);
      else await zk.delete(path);
      applied++;
    } catch (e) {
      if (isZooKeeperError(e, -4)) return untilConnected(zk); // the writer's server went: uncounted, maybe applied
      if (!(isZooKeeperError(e, -101) || isZooKeeperError(e, -110) || isZooKeeperError(e, -111))) throw e;
    }
  };
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (applied < count) {
        next++;
        await one();
      }
    }),
  );
  return applied;
}
