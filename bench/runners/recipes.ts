// Workloads semaphore, readLock and writeLock, zookeeper-ts only (Curator's are bench/java/CuratorRecipesBench.java,
// kazoo's are in kazoo_runner.py): one uncontended holder takes and gives back a Semaphore lease (permits=2) or one
// side of a ReadWriteLock, back to back, on the Curator layout. Same CLI and JSON line as the other runners:
//   recipes.ts <connectString> <semaphore|readLock|writeLock> [ms=3000 warmupMs=1000 permits=2 root=/x]
import { ZooKeeper } from "../../src/index.ts";
import { ReadWriteLock, Semaphore } from "../../src/recipes/index.ts";
import { serialLoop, summarize } from "./harness.ts";
import { parseParams } from "./params.ts";

const WORKLOADS = ["semaphore", "readLock", "writeLock"];
const [cs, workload, ...rest] = process.argv.slice(2);
if (!cs || !WORKLOADS.includes(workload)) {
  process.stderr.write("usage: recipes.ts <connectString> <semaphore|readLock|writeLock> [ms=3000 warmupMs=1000 permits=2 root=/path]\n");
  process.exit(2);
}
const params = parseParams(rest);
const root = params.root ?? `/bench/recipes-${process.pid}`;
const zk = await ZooKeeper.connect(cs, { sessionTimeout: 30_000 });
let acquireRelease: () => Promise<void>;
if (workload === "semaphore") {
  const sem = new Semaphore(zk, `${root}/semaphore`, { permits: params.permits ?? 2 });
  acquireRelease = async () => (await sem.acquire()).release();
} else {
  const rw = new ReadWriteLock(zk, `${root}/rwlock`);
  const side = workload === "readLock" ? rw.readLock : rw.writeLock;
  acquireRelease = async () => {
    await side.acquire();
    await side.release();
  };
}

const w = await serialLoop(params.warmupMs ?? 1000, params.ms ?? 3000, acquireRelease);
await zk.close();
const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
process.stdout.write(JSON.stringify(summarize(w, { peer: "zookeeper-ts", runtime, workload, params })) + "\n");
process.exit(0);
