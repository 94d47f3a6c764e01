// What goes on a fresh connection before user traffic: the stored credentials (AuthPacket, xid -4)
// and the watch re-registration (SetWatches / SetWatches2 in batches of at most 128 K path chars,
// the Java client's limit, so no batch comes near jute.maxbuffer).
import { ErrorCode } from "../../protocol/constants.ts";
import { Ops } from "../../protocol/ops.ts";
import type { Connection } from "../wire/connection.ts";
import { ZooKeeperError } from "../errors.ts";
import type { ServerFeatures } from "./features.ts";
import type { Send } from "../wire/call-record.ts";
import type { Logger } from "../types.ts";
import type { WatchRegistry } from "../watches/watches.ts";

export const SET_WATCHES_BATCH_CHARS = 128 * 1024;

/** A credential remembered for every reconnect, with the callers still waiting for its first answer. */
export interface AuthEntry {
  scheme: string;
  auth: Uint8Array;
  waiters: { resolve(): void; reject(e: Error): void }[];
}

/**
 * How a credential is named in messages, never with its secret: digest `"user:password"` by its user name only
 * (`digest user "alice"`), any other scheme by its name only (its bytes may be a secret).
 */
export function credentialName(scheme: string, auth: Uint8Array): string {
  if (scheme === "digest") {
    const text = new TextDecoder().decode(auth);
    const colon = text.indexOf(":");
    if (colon >= 0) return `digest user ${JSON.stringify(text.slice(0, colon))}`;
  }
  return `${scheme} (credentials not shown)`;
}

/**
 * Sends one AuthPacket on the link being primed or served; `onRefused` runs when the server says no (it then
 * closes the link). A lost link leaves the waiters waiting: the next connection re-sends every stored credential.
 */
export function sendAuth(send: Send, via: Connection, a: AuthEntry, onRefused: (a: AuthEntry) => void): void {
  const onReply = (err: number): void => {
    const waiters = a.waiters.splice(0);
    if (err === 0) {
      for (const w of waiters) w.resolve();
      return;
    }
    const refused = new ZooKeeperError(ErrorCode.AUTHFAILED, `the server refused the ${a.scheme} credentials; the session has ended (authFailed) and the client is finished: every call now fails AUTHFAILED, connect a new client`, { op: "addAuthInfo" });
    for (const w of waiters) w.reject(refused);
    onRefused(a);
  };
  send(Ops.auth, { type: 0, scheme: a.scheme, auth: a.auth }, { op: "addAuthInfo", lane: "own", via, onReply }).catch(() => {});
}

/** Splits the registry's paths into batches, each a SetWatches2 body (persistent lists may be empty). */
export function watchBatches(watches: WatchRegistry, relativeZxid: bigint, limit = SET_WATCHES_BATCH_CHARS): SetWatchesBody[] {
  if (watches.isEmpty) return [];
  const lists = [watches.paths("data"), watches.paths("exist"), watches.paths("child"), watches.paths("persistent"), watches.paths("persistentRecursive")];
  const out: SetWatchesBody[] = [];
  let batch: string[][] = [[], [], [], [], []];
  let chars = 0;
  const flush = (): void => {
    out.push({
      relativeZxid,
      dataWatches: batch[0]!,
      existWatches: batch[1]!,
      childWatches: batch[2]!,
      persistentWatches: batch[3]!,
      persistentRecursiveWatches: batch[4]!,
    });
    batch = [[], [], [], [], []];
    chars = 0;
  };
  lists.forEach((list, kind) => {
    for (const path of list) {
      // Checked before adding, as the Java client does: one long path may push a batch over the limit.
      if (chars >= limit) flush();
      batch[kind]!.push(path);
      chars += path.length;
    }
  });
  if (chars > 0) flush();
  return out;
}

export interface SetWatchesBody {
  relativeZxid: bigint;
  dataWatches: string[];
  existWatches: string[];
  childWatches: string[];
  persistentWatches: string[];
  persistentRecursiveWatches: string[];
}

/**
 * Re-registers every watch on `conn`. Plain SetWatches when a batch has no persistent watch (pre-3.6 servers);
 * none of those to a server older than the one that took them (a downgrade mid-session): SetWatches2 would
 * drop the link.
 */
export function sendSetWatches(send: Send, via: Connection, bodies: SetWatchesBody[], features: ServerFeatures, log: Logger): void {
  if (bodies.length === 0) return; // no watch to re-register (most connections)
  if (!features.persistentWatches && bodies.some((b) => b.persistentWatches.length + b.persistentRecursiveWatches.length > 0)) {
    log.warn(`zookeeper: server ${via.remote} is ZooKeeper ${features.generation}: persistent watches are not re-registered`);
    bodies = bodies.map((b) => ({ ...b, persistentWatches: [], persistentRecursiveWatches: [] }));
  }
  const onReply = (err: number): void => {
    if (err !== 0) log.warn(`zookeeper: re-registering watches failed with error ${err}`);
  };
  for (const body of bodies) {
    const persistent = body.persistentWatches.length + body.persistentRecursiveWatches.length > 0;
    send(persistent ? Ops.setWatches2 : Ops.setWatches, body, { op: "setWatches", lane: "own", via, onReply }).catch(() => {});
  }
}
