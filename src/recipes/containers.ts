// Creates a path and its missing ancestors as CONTAINER nodes, so an abandoned recipe path is reaped
// by the server once its last child goes.
import type { ZooKeeper } from "../client/index.ts";
import { isZooKeeperError } from "../client/index.ts";
import { CreateMode, ErrorCode } from "../protocol/constants.ts";

export async function ensureContainers(zk: ZooKeeper, path: string): Promise<void> {
  let current = "";
  for (const part of path.split("/").filter(Boolean)) {
    current += `/${part}`;
    try {
      await zk.create(current, null, { mode: CreateMode.CONTAINER });
    } catch (e) {
      if (isZooKeeperError(e, ErrorCode.NODEEXISTS)) continue;
      // The server checks the parent's CREATE permission before existence: an existing node may say NOAUTH.
      if (isZooKeeperError(e, ErrorCode.NOAUTH) && (await zk.exists(current)) !== null) continue;
      throw e;
    }
  }
}

/** Runs `create`; when the parent is missing (never made, or a container reaped meanwhile) makes it and retries. */
export async function createWithParents<T>(zk: ZooKeeper, parent: string, create: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await create();
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.NONODE) || attempt >= 5) throw e;
      await ensureContainers(zk, parent);
    }
  }
}
