// `await using` with the package's classes (test/package/consumer-types.test.ts), on a lib that predates explicit
// resource management (ES2022): the package's .d.ts reference lib esnext.disposable (scripts/build.mjs).
import { ZooKeeper } from "zookeeper-ts";
import { Lock } from "zookeeper-ts/recipes";

export async function scoped(): Promise<void> {
  await using zk = await ZooKeeper.connect("127.0.0.1:2181");
  await using lock = new Lock(zk, "/lock");
  await lock.acquire();
  const disposable: AsyncDisposable = zk;
  void disposable;
}
