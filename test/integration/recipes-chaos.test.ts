// Leader election under chaos, short version (~20 leadership changes; the 200-change run is
// test/stress/election-chaos.test.ts): participant processes on a 3-server ensemble are resigned,
// closed, killed -9, SIGSTOPped, or lose their server to kill -9, and no two leaderships overlap.
// Participants rotate through the three runtimes (stamps are mapped onto one clock by syncClock).
import { chaosSuite } from "../support/chaos/chaos-suite.ts";

chaosSuite({
  title: "leader election chaos (short)",
  pathPrefix: "/chaos",
  changes: 20,
  runtimes: "node,bun,deno",
  size: 3,
  weights: { resign: 30, close: 20, kill: 20, stop: 15, server: 15 },
  timeoutMs: 300_000,
});
