import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Real servers are started per file; two cores cannot run many JVMs at once.
    maxWorkers: 2,
  },
});
