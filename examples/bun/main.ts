// zookeeper-ts on Bun, imported by its package name as a user would (`bun add zookeeper-ts`; here the
// repository's own package, built with `npm run build`): a persistent recursive watch as an async iterator.
// Usage: npm run build && ZK_CONNECT=127.0.0.1:2181 npx bun examples/bun/main.ts
import { Op, ZooKeeper, eventTypeName } from "zookeeper-ts";

const connect = process.env.ZK_CONNECT ?? "127.0.0.1:2181";
await using zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
const bun = (globalThis as { Bun?: { version: string } }).Bun;
console.log(`bun ${bun?.version}: session 0x${zk.sessionId.toString(16)}, package from ${import.meta.resolve("zookeeper-ts")}`);

const root = `/example-bun-${process.pid}`;
const stop = new AbortController();
const seen: string[] = [];
const watching = (async () => {
  for await (const ev of zk.watch(root, { recursive: true, signal: stop.signal })) {
    seen.push(`${eventTypeName(ev.type)} ${ev.path}`);
    if (seen.length === 4) stop.abort();
  }
})();
await new Promise((r) => setTimeout(r, 50)); // let the watch register before the changes
await zk.create(root, "r");
await zk.create(`${root}/a`, "1");
await zk.setData(`${root}/a`, "2");
await zk.multi([Op.delete(`${root}/a`)]);
await watching;
await zk.delete(root);
console.log(seen.join("\n"));
if (seen.length !== 4) process.exit(1);
console.log("ok");
