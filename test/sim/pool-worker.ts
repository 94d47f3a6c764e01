// A pool worker (a child process forked by pool.ts): runs the chunks of seeds it is sent and answers
// each with a summary. A chunk stops at its first failing seed (the seeds after it cannot be the
// lowest failure). Seeds do not depend on each other, so which worker runs a seed does not matter.
import { runSeed } from "./driver.ts";
import type { ChunkReply, ChunkRequest } from "./pool.ts";

process.on("message", (m: ChunkRequest | "exit") => {
  if (m === "exit") return process.disconnect();
  void (async () => {
    const reply: ChunkReply = { id: m.id, done: 0, steps: 0, known: {}, failure: null, cpuMs: 0 };
    const c0 = process.cpuUsage();
    for (let seed = m.start; seed < m.start + m.count; seed++) {
      // A seed that throws (a driver or model bug) is a failing seed too, not a dead worker.
      const r = await runSeed(seed, m.mutation).catch((e: unknown) => ({ steps: 0, known: [], violations: [`the seed threw: ${(e as Error)?.stack ?? e}`] }));
      reply.done++;
      reply.steps += r.steps;
      for (const k of r.known) reply.known[k] = (reply.known[k] ?? 0) + 1;
      if (r.violations.length > 0) {
        reply.failure = { seed, violations: r.violations };
        break;
      }
    }
    const c = process.cpuUsage(c0);
    reply.cpuMs = (c.user + c.system) / 1000;
    process.send!(reply);
  })();
});
