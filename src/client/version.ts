// The package's version, as a constant: a library cannot find its own package.json the same way from src (tsx,
// Bun, Deno, JSR), dist/esm and dist/cjs, and a bundler drops it. test/unit/version.test.ts checks that it equals
// package.json's and jsr.json's, so a release that bumps them and not this fails there.

/** The version of zookeeper-ts this is (as in package.json): `zkts --version` prints it, and the OpenTelemetry bridge
 * gives it as its instrumentation scope's version. */
export const VERSION = "0.1.0";
