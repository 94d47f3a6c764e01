// VERSION (src/client/version.ts) is what `zkts --version` prints and the OpenTelemetry bridge's scope version: it
// must be the version the package is published as, on npm (package.json) and on JSR (jsr.json).
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { VERSION } from "../../src/index.ts";

const version = (file: string): unknown => (JSON.parse(readFileSync(new URL(`../../${file}`, import.meta.url), "utf8")) as { version?: unknown }).version;

describe("VERSION", () => {
  it("equals package.json's and jsr.json's version", () => {
    assert.equal(VERSION, version("package.json"));
    assert.equal(VERSION, version("jsr.json"));
  });
});
