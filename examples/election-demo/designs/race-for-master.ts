// Design 2, "every machine races to create one ephemeral /master; the losers watch it with exists
// and race again on NodeDeleted". Every deletion wakes every loser; nothing tells a master that its
// link is gone; a create whose reply was lost is retried, and the retry's NODEEXISTS means "I lost".
import type { Watcher } from "../../../src/index.ts";
import { CreateMode, ErrorCode, EventType, isZooKeeperError } from "../../../src/index.ts";
import { createRetrying, type Design } from "./machine.ts";

export const raceForMaster: Design = async ({ zk, dir, id, report }) => {
  let isMaster = false;
  const master = `${dir}/master`;

  const onMaster: Watcher = (event) => {
    if (event.type !== EventType.NodeDeleted) return;
    report.watch(event.path);
    void race();
  };
  const race = async (): Promise<void> => {
    try {
      await createRetrying(zk, master, id, CreateMode.EPHEMERAL);
      isMaster = true;
      report.own(master);
      report.master();
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.NODEEXISTS)) throw e;
      if ((await zk.exists(master, onMaster)) === null) await race(); // gone meanwhile: race again
    }
  };

  await race();
  return () => isMaster;
};
