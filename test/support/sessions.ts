// Sessions for a test file on a real server, and what tests check with them (no mocks).
// SharedSessions: sessions on the shared test server: client() opens one (10 s session timeout unless told),
// proxy() puts a fault proxy in front of the server; hooks() (call inside the describe) finds the server before
// the tests and, after them, runs the file's teardown, closes every session, then every proxy. A test may close
// a client itself (closing twice is harmless).
// Besides: a unique test root and its removal, a session for one step (onSession), a call's expected error
// (rejectsWith), an event recorder, and probes for what a server given by ZK_CONNECT may refuse (four-letter
// words, TTL nodes).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { beforeAll, afterAll } from "./bdd.ts";
import { CreateMode, ErrorCode, ZooKeeper, ZooKeeperError, type ConnectOptions, type WatchedEvent } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "./fakes/fault-proxy.ts";
import { fourLetterWord, sharedServer } from "./servers/zk-server.ts";

/** ZooKeeper.connect's options, and where to: another connect string (a proxy's) and/or a chroot. */
export type SessionOptions = ConnectOptions & { connectString?: string; chroot?: string };

export class SharedSessions {
  /** The shared server's connect string, once hooks()' beforeAll has run. */
  connectString = "";
  private readonly clients: ZooKeeper[] = [];
  private readonly proxies: FaultProxy[] = [];

  /** teardown: what the file does with its sessions still open once its tests are over (deleting its nodes). */
  hooks(teardown?: () => Promise<unknown>): void {
    beforeAll(async () => {
      this.connectString = (await sharedServer()).connectString;
    }, 60_000);
    afterAll(async () => {
      await teardown?.();
      await Promise.all(this.clients.map((zk) => zk.close()));
      await Promise.all(this.proxies.map((p) => p.close()));
    }, 30_000);
  }

  /**
   * One sync round trip on every open session: whatever the server sent any of them before now (a
   * notification above all) has been delivered when this resolves. Use it where a test would otherwise
   * sleep and then assert that nothing (more) happened.
   */
  async settled(): Promise<void> {
    await Promise.all(this.clients.filter((zk) => zk.state === "connected").map((zk) => zk.sync("/")));
  }

  async client(options: SessionOptions = {}): Promise<ZooKeeper> {
    const { connectString = this.connectString, chroot = "", ...connect } = options;
    const zk = await ZooKeeper.connect(`${connectString}${chroot}`, { sessionTimeout: 10_000, ...connect });
    this.clients.push(zk);
    return zk;
  }

  /** A fault proxy in front of the shared server's first host. */
  async proxy(): Promise<FaultProxy> {
    const [host, port] = this.connectString.split(",")[0]!.split("/")[0]!.split(":");
    const proxy = await startFaultProxy(host!, Number(port));
    this.proxies.push(proxy);
    return proxy;
  }
}

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
  const text = await fourLetterWordAt(connectString, word);
  return /not in the whitelist|not executed/.test(text) ? `${text.trim()} (4lw.commands.whitelist)` : null;
}

/** A four-letter word's answer from the first server of `connectString` (its chroot ignored). */
export function fourLetterWordAt(connectString: string, word: string, timeoutMs?: number): Promise<string> {
  const [host, port] = connectString.split(",")[0]!.replace(/\/.*$/, "").split(":");
  return fourLetterWord(host!, Number(port), word, timeoutMs);
}

/** The paths the first server of `connectString` watches for `zk`'s session, from `wchc`. */
export async function serverWatches(connectString: string, zk: ZooKeeper): Promise<string[]> {
  const text = await fourLetterWordAt(connectString, "wchc");
  const id = `0x${zk.sessionId.toString(16)}`;
  const block = text.split(/\n(?=0x)/).find((b) => b.trim().split(/\s/)[0] === id);
  return block ? block.split("\n").slice(1).map((l) => l.trim()).filter(Boolean) : [];
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
