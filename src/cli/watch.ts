// zkts watch: a persistent (or recursive) watch, one line per event, until --count events or Ctrl-C.
import { eventTypeName } from "../index.ts";
import { intOption } from "./args.ts";
import type { Run } from "./commands.ts";

export const commands: Record<string, Run> = {
  async watch(ctx, a) {
    const limit = intOption(a, "count", "watch --count N", 1);
    const p = a.positionals[0];
    let seen = 0;
    const events = ctx.zk.watch(p, { recursive: a.values.r === true, signal: ctx.signal });
    for await (const ev of events) {
      const type = eventTypeName(ev.type);
      ctx.out.result({ type, path: ev.path }, `${type} ${ev.path}`);
      if (limit !== undefined && ++seen >= limit) break;
    }
  },
};
