// zkts node commands: ls, get, stat, create, set, delete, sync, count.
import { setMaxListeners } from "node:events";
import { CreateMode, ErrorCode, ZooKeeperError } from "../index.ts";
import { UsageError } from "./errors.ts";
import { type Context, type Parsed, type Run, intOption } from "./command.ts";
import { dataJson, statJson, statLines } from "./output.ts";

const path = (a: Parsed, i = 0): string => a.positionals[i];
const flag = (a: Parsed, k: string): boolean => a.values[k] === true;
const join = (parent: string, child: string): string => (parent === "/" ? `/${child}` : `${parent}/${child}`);

/** Every descendant of `root`, depth-first in sorted order (children read concurrently per level). */
async function descendants(ctx: Context, root: string): Promise<string[]> {
  const kids = (await ctx.zk.getChildren(root, undefined, { signal: ctx.signal })).sort();
  const below = await Promise.all(kids.map((k) => descendants(ctx, join(root, k))));
  return kids.flatMap((k, i) => [join(root, k), ...below[i]]);
}

function createMode(a: Parsed): CreateMode {
  const e = flag(a, "e");
  const s = flag(a, "s");
  const c = flag(a, "c");
  const ttl = a.values.t !== undefined;
  if ([e, c, ttl].filter(Boolean).length > 1) throw new UsageError("create: -e, -c and -t exclude each other");
  if (c && s) throw new UsageError("create: a container cannot be sequential");
  if (ttl) return s ? CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL : CreateMode.PERSISTENT_WITH_TTL;
  if (c) return CreateMode.CONTAINER;
  if (e) return s ? CreateMode.EPHEMERAL_SEQUENTIAL : CreateMode.EPHEMERAL;
  return s ? CreateMode.PERSISTENT_SEQUENTIAL : CreateMode.PERSISTENT;
}

export const commands: Record<string, Run> = {
  async ls(ctx, a) {
    const p = path(a);
    if (flag(a, "R")) {
      // Each level's children are read at once, each read listening on the command's signal (the CLI's own).
      setMaxListeners(0, ctx.signal);
      const all = await descendants(ctx, p);
      ctx.out.result(all, all);
    } else {
      const kids = (await ctx.zk.getChildren(p, undefined, { signal: ctx.signal })).sort();
      ctx.out.result(kids, kids);
    }
  },

  async get(ctx, a) {
    const { data, stat } = await ctx.zk.getData(path(a), undefined, { signal: ctx.signal });
    if (ctx.out.json) {
      ctx.out.result({ path: path(a), ...dataJson(data), ...(flag(a, "s") ? { stat: statJson(stat) } : {}) }, []);
      return;
    }
    ctx.out.raw(data ?? new Uint8Array(0));
    if (flag(a, "s")) for (const l of statLines(stat)) ctx.out.note(l);
  },

  async stat(ctx, a) {
    const stat = await ctx.zk.exists(path(a), undefined, { signal: ctx.signal });
    if (stat === null) throw new ZooKeeperError(ErrorCode.NONODE, undefined, { op: "stat", path: path(a) });
    ctx.out.result(statJson(stat), statLines(stat));
  },

  async create(ctx, a) {
    const mode = createMode(a);
    const ttl = intOption(a, "t", "create -t TTL", 1);
    const created = await ctx.zk.create(path(a), a.positionals[1] ?? null, { mode, ttl, createParents: flag(a, "p"), signal: ctx.signal });
    ctx.out.result({ path: created }, created);
  },

  async set(ctx, a) {
    const stat = await ctx.zk.setData(path(a), a.positionals[1], intOption(a, "v", "set -v VERSION"), { signal: ctx.signal });
    if (ctx.out.json) ctx.out.result(statJson(stat), []);
  },

  async delete(ctx, a) {
    const version = intOption(a, "v", "delete -v VERSION");
    if (flag(a, "r")) {
      if (version !== undefined) throw new UsageError("delete: -r and -v exclude each other");
      await ctx.zk.deleteRecursive(path(a), { signal: ctx.signal });
    } else await ctx.zk.delete(path(a), version, { signal: ctx.signal });
  },

  async sync(ctx, a) {
    await ctx.zk.sync(path(a), { signal: ctx.signal });
  },

  async count(ctx, a) {
    const n = await ctx.zk.getAllChildrenNumber(path(a), { signal: ctx.signal });
    ctx.out.result(n, String(n));
  },
};
