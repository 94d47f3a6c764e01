// `await using` with the package's classes (test/package/consumer-types.test.ts): the one consumer file that needs a
// lib with explicit resource management (esnext.disposable); the package's .d.ts themselves do not.
import { ZooKeeper } from "zookeeper-ts";
import { Lock } from "zookeeper-ts/recipes";

export async function scoped(): Promise<void> {
  await using zk = await ZooKeeper.connect("127.0.0.1:2181");
  await using lock = new Lock(zk, "/lock");
  await lock.acquire();
  const disposable: AsyncDisposable = zk;
  void disposable;
}
