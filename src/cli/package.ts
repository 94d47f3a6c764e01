// What zkts says about itself: its version, read at run time from the package's own package.json (the
// first one named zookeeper-ts above the running script: src/cli under tsx, Bun or Deno, dist/esm/cli
// when built or installed; the bin link is followed), and where its documentation is (docs/ is not in
// the npm package: the repository's copy).
import * as fs from "node:fs";
import * as path from "node:path";

/** The repository (package.json "repository", as a browser URL). */
const REPOSITORY = "https://github.com/zookeeper-ts/zookeeper-ts";

/** A guide of the repository's docs/ directory, on the default branch. */
export const docUrl = (file: string): string => `${REPOSITORY}/blob/HEAD/docs/${file}`;

/** The version of the zookeeper-ts package this zkts belongs to, or "unknown" when no package.json says. */
export function packageVersion(script: string | undefined = process.argv[1]): string {
  if (!script) return "unknown";
  let dir: string;
  try {
    dir = path.dirname(fs.realpathSync(script));
  } catch {
    return "unknown";
  }
  for (;;) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "zookeeper-ts" && typeof pkg.version === "string") return pkg.version;
    } catch {
      // none here (or unreadable): look further up
    }
    const up = path.dirname(dir);
    if (up === dir) return "unknown";
    dir = up;
  }
}
