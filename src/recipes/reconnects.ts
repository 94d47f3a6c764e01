// A recipe's calls across reconnects: the ended-session errors, waiting to be connected again, and the deletes and
// lookups that must outlive a lost reply.
import type { SessionState, ZooKeeper } from "../client/index.ts";
import { ZooKeeperError, isZooKeeperError } from "../client/index.ts";
import { ErrorCode } from "../protocol/constants.ts";

/** The states a session never leaves: a recipe waiting on one of them gives up. */
export const TERMINAL: ReadonlySet<SessionState> = new Set(["expired", "closed", "authFailed"]);

/**
 * The error of a recipe call on a session that has ended, as the client gives it: SESSIONEXPIRED for an expired
 * or closed client (never retried by withRetry), AUTHFAILED after refused credentials; CONNECTIONLOSS otherwise.
 */
export function endedSession(state: SessionState, op: string, path?: string): ZooKeeperError {
  if (state === "expired") return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the session has expired; connect a new client", { op, path });
  if (state === "closed") return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the client is closed (close() was called); connect a new client", { op, path });
  if (state === "authFailed") return new ZooKeeperError(ErrorCode.AUTHFAILED, "authentication failed; the client is finished", { op, path });
  return new ZooKeeperError(ErrorCode.CONNECTIONLOSS, `the session is ${state}`, { op, path });
}

/** Resolves once the session is connected (read-write); rejects when it has ended. */
export function untilConnected(zk: ZooKeeper): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = (state: SessionState): boolean => {
      if (state === "connected") resolve();
      else if (TERMINAL.has(state)) {
        reject(endedSession(state, "recipe"));
      } else return false;
      return true;
    };
    if (check(zk.state)) return;
    const listener = (state: SessionState): void => {
      if (check(state)) zk.off("state", listener);
    };
    zk.on("state", listener);
  });
}

/**
 * After a CONNECTIONLOSS: waits for the session to be connected again. The session reads "disconnected"
 * before a call fails with CONNECTIONLOSS, so one that still reads "connected" is being closed (close()
 * shows the state before it until the end): its next state is the end, and a retry loop never spins.
 */
export async function afterConnectionLoss(zk: ZooKeeper): Promise<void> {
  if (zk.state === "connected") await new Promise<void>((r) => zk.once("state", () => r()));
  await untilConnected(zk);
}

/** Deletes a node, retrying across reconnects; done when it is gone or the session (and so its ephemerals) ended. */
export async function deleteNode(zk: ZooKeeper, path: string): Promise<void> {
  for (;;) {
    try {
      await zk.delete(path);
      return;
    } catch (e) {
      if (isZooKeeperError(e, ErrorCode.NONODE)) return;
      if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
      try {
        await afterConnectionLoss(zk);
      } catch {
        return;
      }
    }
  }
}

/** After a lost create reply: the child of `parent` whose name starts with `prefix`, if the create went through. */
export async function findProtected(zk: ZooKeeper, parent: string, prefix: string): Promise<string | null> {
  try {
    await zk.sync(parent); // the server we reached may lag the one that ran the create
    const name = (await zk.getChildren(parent)).find((c) => c.startsWith(prefix));
    return name === undefined ? null : `${parent}/${name}`;
  } catch (e) {
    if (isZooKeeperError(e, ErrorCode.NONODE)) return null;
    throw e;
  }
}
