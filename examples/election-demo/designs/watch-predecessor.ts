// Design 3, "ephemeral-sequential candidates; on NodeDeleted, getChildren, sort, and exists-watch the
// predecessor". No herd, but: nothing tells a master that its link is gone; a create whose reply was
// lost is retried (the first node stays, owned by this session, in front of its own); and an exists
// on a predecessor that left between getChildren and exists returns null, which nobody checks.
import type { Watcher } from "../../../src/index.ts";
import { CreateMode, EventType } from "../../../src/index.ts";
import { createRetrying, type Design } from "./machine.ts";

export const watchPredecessor: Design = async ({ zk, dir, id, report }) => {
  let isMaster = false;
  const mine = await createRetrying(zk, `${dir}/n_`, id, CreateMode.EPHEMERAL_SEQUENTIAL);
  report.own(mine);

  const onPredecessor: Watcher = (event) => {
    if (event.type !== EventType.NodeDeleted) return;
    report.watch(event.path);
    void check();
  };
  const check = async (): Promise<void> => {
    const children = (await zk.getChildren(dir)).sort();
    const index = children.indexOf(mine.slice(dir.length + 1));
    if (index === 0) {
      isMaster = true;
      report.master();
    } else await zk.exists(`${dir}/${children[index - 1]}`, onPredecessor);
  };

  await check();
  return () => isMaster;
};
