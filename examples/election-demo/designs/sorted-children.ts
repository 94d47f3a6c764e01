// Design 1, "register an ephemeral node per machine, sort the children, the first is master".
// Every machine watches the children, so every change wakes every machine; nothing tells a master
// that its link is gone, so it goes on being master; a create whose reply was lost is simply retried.
import type { Watcher } from "../../../src/index.ts";
import { CreateMode, EventType } from "../../../src/index.ts";
import { createRetrying, type Design } from "./machine.ts";

export const sortedChildren: Design = async ({ zk, dir, id, report }) => {
  let isMaster = false;
  const mine = await createRetrying(zk, `${dir}/n_`, id, CreateMode.EPHEMERAL_SEQUENTIAL);
  report.own(mine);

  const onChildren: Watcher = (event) => {
    if (event.type !== EventType.NodeChildrenChanged) return;
    report.watch(event.path);
    void elect();
  };
  const elect = async (): Promise<void> => {
    const children = (await zk.getChildren(dir, onChildren)).sort();
    const first = `${dir}/${children[0]}` === mine;
    if (first && !isMaster) report.master();
    if (!first && isMaster) report.stepDown("not first");
    isMaster = first;
  };

  await elect();
  return () => isMaster;
};
