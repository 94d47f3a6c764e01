// Creates a path and its missing ancestors as CONTAINER nodes, so an abandoned recipe path is reaped
// by the server once its last child goes; on a server without containers (3.4) as persistent nodes.
// Like Curator, each level is checked with exists first: an existing node is never created again
// (3.4 answers even a container create of an existing node with UNIMPLEMENTED).
import type { ZooKeeper } from "../client/index.ts";
import { isZooKeeperError } from "../client/index.ts";
import { CreateMode, ErrorCode } from "../protocol/constants.ts";

export async function ensureContainers(zk: ZooKeeper, path: string): Promise<void> {
  let current = "";
  for (const part of path.split("/").filter(Boolean)) {
    current += `/${part}`;
    if ((await zk.exists(current)) !== null) continue;
    const mode = zk.serverFeatures.containers ? CreateMode.CONTAINER : CreateMode.PERSISTENT;
    try {
      await zk.create(current, null, { mode });
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
      // An ancestor reaped between our exists and our create (NONODE again): the next attempt makes it anew.
      await ensureContainers(zk, parent).catch((err: unknown) => {
        if (!isZooKeeperError(err, ErrorCode.NONODE)) throw err;
      });
    }
  }
}
