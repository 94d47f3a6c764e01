// Where zkts's documentation is (docs/ is not in the npm package: the repository's copy). Its version is the
// package's VERSION (src/client/version.ts), re-exported by the public index.

/** The repository (package.json "repository", as a browser URL). */
const REPOSITORY = "https://github.com/zookeeper-ts/zookeeper-ts";

/** A guide of the repository's docs/ directory, on the default branch. */
export const docUrl = (file: string): string => `${REPOSITORY}/blob/HEAD/docs/${file}`;
