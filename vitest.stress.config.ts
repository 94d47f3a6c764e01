import { defineConfig } from "vitest/config";

// `npm run test:stress`: the heavy cases (load, the 200-change election chaos run, a million fuzzed
// frames). Two groups, one after the other (sequence.groupOrder):
// - "latency": the files that assert failover bounds (the election chaos run, the recipes torture), one
//   at a time, alone on the two cores, so that a bound they miss is the client's doing, not a neighbour's;
// - then "history" beside "load": none of these asserts a latency (only that every call settles, within
//   tens of seconds), and the history run spends most of its wall time in fixed spells (the faults and
//   the workload between them) that a neighbour does not lengthen. Projects of a group are queued in name
//   order, so the history file takes one worker first and the load files pass through the other, one at
//   a time while the history runs.
// A new file lands in "load"; one that asserts a latency belongs in "latency"'s include.
const LATENCY = ["test/stress/election-chaos.test.ts", "test/stress/recipes-torture.test.ts"];
const HISTORY = ["test/stress/history-linearizable.test.ts"];

export default defineConfig({
  test: {
    testTimeout: 900_000,
    hookTimeout: 300_000,
    pool: "forks",
    projects: [
      // groupOrder 1, not 0: vitest runs a single-worker project of group 0 last, after every group.
      { extends: true, test: { name: "latency", include: LATENCY, maxWorkers: 1, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: "history", include: HISTORY, maxWorkers: 2, sequence: { groupOrder: 2 } } },
      {
        extends: true,
        test: {
          name: "load",
          include: ["test/stress/**/*.test.ts"],
          exclude: [...LATENCY, ...HISTORY, "**/node_modules/**"],
          maxWorkers: 2,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
