import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Heavy load, chaos and million-frame fuzzing run separately: `npm run test:stress`.
    exclude: ["test/stress/**", "**/node_modules/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Real servers are started per file; two cores cannot run many JVMs at once.
    maxWorkers: 2,
  },
});
