// Small helpers shared by the client-*.test.ts files (real servers, no mocks).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CreateMode, ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import type { WatchedEvent } from "../../src/index.ts";

import { fourLetterWord } from "../support/zk-server.ts";

export { hold, until } from "../support/wait.ts";

/** Asserts that `p` rejects with a ZooKeeperError of `codeName`; returns the error. */
export async function rejectsWith(p: Promise<unknown>, codeName: string): Promise<ZooKeeperError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ZooKeeperError, `expected a ZooKeeperError, got ${String(e)}`);
    assert.equal(e.codeName, codeName, `expected ${codeName}, got ${e.message}`);
    return e;
  }
  assert.fail(`expected a rejection with ${codeName}, but it resolved`);
}

/** A watcher that records its events. */
/**
 * An event's numbers and path: without its zxid (which only 3.9+ servers fill in), for comparing across server
 * lines, and without typeName/stateName (derived from the numbers; client-errors.test.ts checks they match).
 */
export type EventShape = Pick<WatchedEvent, "type" | "state" | "path">;

/** Records events as shapes, and their zxids apart. */
export function recorder(): { events: EventShape[]; zxids: (bigint | undefined)[]; watcher: (e: WatchedEvent) => void } {
  const events: EventShape[] = [];
  const zxids: (bigint | undefined)[] = [];
  return { events, zxids, watcher: ({ type, state, path, zxid }) => (events.push({ type, state, path }), zxids.push(zxid)) };
}

export const uniqueRoot = (tag: string): string => `/t-${tag}-${randomUUID().slice(0, 8)}`;

/**
 * Deletes a test root and everything below it, in a file's teardown, so a server given by ZK_CONNECT is left as
 * the run found it. Only NONODE passes (the root was never made, or it was a container the server removed once
 * empty); any other failure rejects (NOAUTH on a node whose ACL the session lacks: authenticate first), so a
 * teardown that leaves nodes behind fails its file instead of passing silently.
 */
export async function removeRoot(zk: ZooKeeper, root: string): Promise<void> {
  await zk.deleteRecursive(root).catch((e: unknown) => {
    if (!(e instanceof ZooKeeperError && e.code === ErrorCode.NONODE)) throw e;
  });
}

/** `fn` on a session of its own to `connectString`, closed after it whatever `fn` did (making or removing a root). */
export async function onSession<T>(connectString: string, fn: (zk: ZooKeeper) => Promise<T>): Promise<T> {
  const zk = await ZooKeeper.connect(connectString, { sessionTimeout: 10_000 });
  try {
    return await fn(zk);
  } finally {
    await zk.close();
  }
}

/**
 * Why the server at `connectString` (its first host) refuses the four-letter word `word`, or null when it answers:
 * a server given by ZK_CONNECT may keep the stock `4lw.commands.whitelist` (srvr only); the test servers allow
 * every word. A file skips its cases that read the word then, saying so.
 */
export async function fourLetterWordOff(connectString: string, word: string): Promise<string | null> {
  const [host, port] = connectString.split(",")[0]!.replace(/\/.*$/, "").split(":");
  const text = await fourLetterWord(host!, Number(port), word);
  return /not in the whitelist|not executed/.test(text) ? `${text.trim()} (4lw.commands.whitelist)` : null;
}

/**
 * Why TTL nodes cannot be made on the server of `zk`, or null when they can (probed with one TTL node under
 * `parent`, removed at once). The test servers enable them; a server given by ZK_CONNECT may be stock, which
 * answers UNIMPLEMENTED: a file skips its TTL cases then, saying so.
 */
export async function ttlNodesOff(zk: ZooKeeper, parent: string): Promise<string | null> {
  try {
    await zk.delete(await zk.create(`${parent}/ttl-probe-`, null, { mode: CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL, ttl: 60_000 }));
    return null;
  } catch (e) {
    if (e instanceof ZooKeeperError && e.code === ErrorCode.UNIMPLEMENTED) return e.message;
    throw e;
  }
}
