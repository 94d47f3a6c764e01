// zookeeper-ts on Node (plain JavaScript, the built package): connect, create an ephemeral node,
// watch it, change it, read it back, close. Usage: ZK_CONNECT=127.0.0.1:2181 node examples/node/main.mjs
import { CreateMode, EventType, ZooKeeper, eventTypeName } from "zookeeper-ts";

const connect = process.env.ZK_CONNECT ?? "127.0.0.1:2181";
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
console.log(`node ${process.version}: session 0x${zk.sessionId.toString(16)}, timeout ${zk.negotiatedTimeout} ms`);

const path = await zk.create(`/example-node-${process.pid}`, "hello", { mode: CreateMode.EPHEMERAL });
const changed = new Promise((resolve) => zk.getData(path, resolve));
await zk.setData(path, "hello again");
const event = await changed;
const { data, stat } = await zk.getData(path);
console.log(`${eventTypeName(event.type)} on ${event.path}; data "${new TextDecoder().decode(data)}" version ${stat.version}`);
if (event.type !== EventType.NodeDataChanged) process.exitCode = 1;
await zk.close();
console.log("ok");
