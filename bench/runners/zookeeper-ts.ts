// Runner for zookeeper-ts (this repository). Same file under Node (tsx), Bun and Deno.
import { CreateMode, ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { type Done, type Driver, type Session, main } from "./harness.ts";

const ok = (d: Done) => (): void => d(null);
const fail = (d: Done) => (e: Error): void => d(e);

function adapt(zk: ZooKeeper): Session {
  return {
    get: (path, d) => void zk.getData(path).then(ok(d), fail(d)),
    set: (path, data, d) => void zk.setData(path, data).then(ok(d), fail(d)),
    createEphSeq: (prefix, data, d) =>
      void zk.create(prefix, data, { mode: CreateMode.EPHEMERAL_SEQUENTIAL }).then((p) => d(null, p), fail(d)),
    ensure: (path, data, ephemeral, d) =>
      void zk.create(path, data, { mode: ephemeral ? CreateMode.EPHEMERAL : CreateMode.PERSISTENT }).then(ok(d), (e: Error) =>
        d(e instanceof ZooKeeperError && e.code === ErrorCode.NODEEXISTS ? null : e),
      ),
    remove: (path, d) => void zk.delete(path).then(ok(d), fail(d)),
    watchData: (path, onChange, d) => void zk.getData(path, () => onChange()).then(ok(d), fail(d)),
    close: () => zk.close(),
  };
}

export const driver: Driver = {
  peer: "zookeeper-ts",
  connect: async (cs) => adapt(await ZooKeeper.connect(cs, { sessionTimeout: 30_000 })),
};

const runtime = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";
await main(driver, runtime);
