import { defineConfig } from "vitest/config";

// `npm run test:stress`: the heavy cases (load, the 200-change election chaos run, a million fuzzed
// frames), one file at a time so they do not compete for the two cores.
export default defineConfig({
  test: {
    include: ["test/stress/**/*.test.ts"],
    testTimeout: 900_000,
    hookTimeout: 300_000,
    pool: "forks",
    maxWorkers: 1,
    fileParallelism: false,
  },
});
