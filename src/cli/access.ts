// zkts commands about access and the session: getacl, setacl, whoami, ephemerals.
import { UsageError } from "./errors.ts";
import { type Run, intOption } from "./command.ts";
import { aclText, parseAcl, permsText, statJson } from "./output.ts";

export const commands: Record<string, Run> = {
  async getacl(ctx, a) {
    const { acl } = await ctx.zk.getACL(a.positionals[0], { signal: ctx.signal });
    ctx.out.result(acl.map((e) => ({ scheme: e.id.scheme, id: e.id.id, perms: permsText(e.perms) })), acl.map(aclText));
  },

  async setacl(ctx, a) {
    let acl;
    try {
      acl = parseAcl(a.positionals[1]);
    } catch (e) {
      throw new UsageError(`setacl: ${(e as Error).message}`);
    }
    const stat = await ctx.zk.setACL(a.positionals[0], acl, intOption(a, "v", "setacl -v VERSION"), { signal: ctx.signal });
    if (ctx.out.json) ctx.out.result(statJson(stat), []);
  },

  async whoami(ctx) {
    const ids = await ctx.zk.whoAmI({ signal: ctx.signal });
    ctx.out.result(ids, ids.map((i) => `${i.scheme}:${i.id}`));
  },

  async ephemerals(ctx, a) {
    const paths = (await ctx.zk.getEphemerals(a.positionals[0] ?? "/", { signal: ctx.signal })).sort();
    ctx.out.result(paths, paths);
  },
};
