// zookeeper-ts on Deno, imported by its JSR name as a user would (`deno add jsr:@zookeeper-ts/zookeeper-ts`);
// here examples/deno/deno.json maps that name to this repository's sources. A transaction and the version check.
// Usage: ZK_CONNECT=127.0.0.1:2181 npx deno run --config examples/deno/deno.json -A examples/deno/main.ts
import process from "node:process";
import { ErrorCode, ZooKeeper, ZooKeeperError } from "@zookeeper-ts/zookeeper-ts";

const deno = (globalThis as { Deno?: { version: { deno: string } } }).Deno;

const connect = process.env.ZK_CONNECT ?? "127.0.0.1:2181";
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
console.log(`deno ${deno?.version.deno}: session 0x${zk.sessionId.toString(16)}`);

const path = `/example-deno-${process.pid}`;
await zk.transaction().create(path, "v0").setData(path, "v1").commit();
try {
  // Stale version: the whole transaction fails and nothing in it is applied.
  await zk.transaction().setData(path, "v2", 0).delete(path).commit();
  throw new Error("expected BADVERSION");
} catch (e) {
  if (!(e instanceof ZooKeeperError) || e.code !== ErrorCode.BADVERSION) throw e;
  console.log(`rejected as expected: ${e.message}`);
}
const { data } = await zk.getData(path);
console.log(`data is still "${new TextDecoder().decode(data ?? new Uint8Array())}"`);
await zk.delete(path);
await zk.close();
console.log("ok");
