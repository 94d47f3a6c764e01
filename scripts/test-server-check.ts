// Checks of the server a test run is given (run by scripts/test-all.mjs; node --import tsx).
//
//   test-server-check.ts capacity N    open N sessions at once (the most the suite holds at a time is about 250,
//                                      recipes-big's 200 beside another file's); exit 1, saying what to set, when the
//                                      server refuses some: a stock zoo.cfg allows 60 per client address
//                                      (maxClientCnxns)
//   test-server-check.ts snapshot FILE write the top-level znodes of ZK_CONNECT's server to FILE (before a run)
//   test-server-check.ts check FILE    list the top-level znodes that are new since FILE, each with its descendant
//                                      count; exit 1 when there is any (the run left them behind)
//   test-server-check.ts sweep         delete the tests' own roots older than a day: top-level znodes named
//                                      t-<tag>-<8 hex digits> (the names every test root has) and nothing else
//
// A user's server given by ZK_CONNECT is left as the run found it: the tests delete their roots in teardown,
// pass or fail; `sweep` removes what an interrupted run (kill -9, a power cut) could not.
import { readFileSync, writeFileSync } from "node:fs";
import { ZooKeeper } from "../src/index.ts";

const TEST_ROOT = /^t-[a-z0-9-]+-[0-9a-f]{8}$/;
const DAY_MS = 24 * 60 * 60 * 1000;

const [command, file] = process.argv.slice(2);
const connectString = process.env.ZK_CONNECT;
if (!connectString || !["capacity", "snapshot", "check", "sweep"].includes(command ?? "") || (command !== "sweep" && !file)) {
  process.stderr.write("usage: ZK_CONNECT=host:port node --import tsx scripts/test-server-check.ts capacity N | snapshot FILE | check FILE | sweep\n");
  process.exit(2);
}
if (command === "capacity") process.exitCode = (await capacity(Number(file))) ? 0 : 1;
else await onServer();

async function onServer(): Promise<void> {
  const zk = await ZooKeeper.connect(connectString!, { sessionTimeout: 10_000, trackEnsemble: false });
  try {
    const top = (await zk.getChildren("/")).filter((name) => name !== "zookeeper").sort();
    if (command === "snapshot") {
      writeFileSync(file!, JSON.stringify(top));
    } else if (command === "check") {
      const before = new Set<string>(JSON.parse(readFileSync(file!, "utf8")) as string[]);
      const left = top.filter((name) => !before.has(name));
      for (const name of left) console.log(`  /${name}: ${await descendants(zk, `/${name}`)} descendants`);
      console.log(`[leftovers] ${left.length} top-level znode(s) left on ${connectString} by this run`);
      process.exitCode = left.length === 0 ? 0 : 1;
    } else {
      let swept = 0;
      for (const name of top.filter((n) => TEST_ROOT.test(n))) {
        const stat = await zk.exists(`/${name}`);
        if (stat === null || Date.now() - Number(stat.ctime) < DAY_MS) continue;
        await zk.deleteRecursive(`/${name}`);
        swept++;
      }
      console.log(`[leftovers] swept ${swept} test root(s) older than a day from ${connectString}`);
    }
  } finally {
    await zk.close();
  }
}

/** Opens `n` sessions at once; true when the server took them all (it says what to set when not). */
async function capacity(n: number): Promise<boolean> {
  const tries = await Promise.allSettled(Array.from({ length: n }, () => ZooKeeper.connect(connectString!, { sessionTimeout: 10_000, connectTimeout: 10_000, trackEnsemble: false })));
  const open = tries.flatMap((t) => (t.status === "fulfilled" ? [t.value] : []));
  await Promise.all(open.map((c) => c.close()));
  const refused = tries.find((t): t is PromiseRejectedResult => t.status === "rejected");
  if (refused === undefined) {
    console.log(`[server] ${connectString} took ${n} sessions at once`);
    return true;
  }
  console.log(`[server] ${connectString} took ${open.length} of ${n} sessions at once (${String(refused.reason instanceof Error ? refused.reason.message : refused.reason)}); ` +
    `the tests hold up to about ${n} at a time: set maxClientCnxns=0 (no limit per client address; a stock zoo.cfg allows 60) in the server's zoo.cfg and restart it, or run the tests without ZK_CONNECT (they start their own servers)`);
  return false;
}

/** The number of znodes below `path`, by walking it (getAllChildrenNumber is 3.6+). */
async function descendants(zk: ZooKeeper, path: string): Promise<number> {
  let n = 0;
  for (const child of await zk.getChildren(path).catch(() => [] as string[])) {
    const p = `${path}/${child}`;
    n += 1 + (await descendants(zk, p));
  }
  return n;
}
