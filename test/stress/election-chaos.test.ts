// Leader election under chaos, long version: at least 200 randomized leadership changes among
// participant processes on a 3-server ensemble (tickTime 500, sessions 2000 ms). Each change is a
// resign, a clean close, a kill -9 or SIGSTOP of the leader, or a kill -9 of the server the leader is
// connected to. Checks: no two leadership intervals overlap, no leader action (WORK line) falls in
// another's leadership, a resumed leader steps down before acting, failover within 1 s (resign/close)
// or the session timeout + 1 s (crashes), and each znode deletion wakes at most one participant.
// CHAOS_CHANGES, CHAOS_SEED (replay), CHAOS_RUNTIMES=node,bun,deno override the defaults.
import { chaosSuite } from "../support/chaos/chaos-suite.ts";

chaosSuite({
  title: "leader election chaos (stress)",
  pathPrefix: "/chaos-stress",
  changes: 200,
  runtimes: "node",
  size: 4,
  weights: { resign: 35, close: 20, kill: 17, stop: 12, server: 16 },
  timeoutMs: 900_000,
});
