// zkts watch: a persistent (or recursive) watch, one line per event, until --count events or Ctrl-C.
// Once the watch is registered on the server it says so on stderr (`zkts watch: watching PATH`, or with
// --json `{"event":"watching","path":PATH}`), so a script can wait for that line before changing the
// node; stdout carries only the events.
import { eventTypeName } from "../index.ts";
import { type Run, intOption } from "./command.ts";
import { toJson } from "./output.ts";

export const commands: Record<string, Run> = {
  async watch(ctx, a) {
    const limit = intOption(a, "count", "watch --count N", 1);
    const p = a.positionals[0];
    const recursive = a.values.r === true;
    const events = ctx.zk.watch(p, { recursive, signal: ctx.signal })[Symbol.asyncIterator]();
    // addWatch is on its way; the server answers a session's requests in order, so once a sync sent after
    // it is answered, the addWatch answer has been handled too (its promise chain settles within the same
    // turn: one macrotask later it has). A failed addWatch is not announced (the loop below throws it), nor a
    // failed sync (the link dropped: unknown).
    let next = events.next();
    let failed = false;
    next.catch(() => (failed = true));
    const synced = await ctx.zk.sync(p).then(() => true, () => false);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const placed = synced && !failed;
    if (placed) {
      if (ctx.out.json) ctx.out.note(toJson({ event: "watching", path: p, recursive }));
      else ctx.out.note(`zkts watch: watching ${p}${recursive ? " and its subtree" : ""}`);
    }
    let seen = 0;
    try {
      for (;;) {
        const r = await next;
        if (r.done) return;
        const type = eventTypeName(r.value.type);
        ctx.out.result({ type, path: r.value.path }, `${type} ${r.value.path}`);
        if (limit !== undefined && ++seen >= limit) return;
        next = events.next();
      }
    } finally {
      await events.return?.();
    }
  },
};
