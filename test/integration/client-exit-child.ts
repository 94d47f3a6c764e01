// Child process for client-session.test.ts: connects, does some work (with a watch and a persistent
// watch still registered), closes, and prints "closed". The parent measures how long the process
// then takes to exit on its own: a leaked timer or socket would keep it alive.
import { AddWatchMode, CreateMode, ZooKeeper } from "../../src/index.ts";

const [connect, root] = [process.argv[2]!, process.argv[3]!];
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
await zk.create(root, "x", { mode: CreateMode.EPHEMERAL });
await zk.getData(root, () => {});
await zk.addWatch(root, AddWatchMode.PERSISTENT, () => {});
await Promise.all(Array.from({ length: 50 }, () => zk.exists(root)));
await zk.close();
process.stdout.write("closed\n");
