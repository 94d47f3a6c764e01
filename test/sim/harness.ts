// Runs async code that uses the public API against the model on simulated time: the scheduler
// advances while the code's promise is pending (each await resolves inside a scheduler step).
import { ZooKeeper, type ConnectOptions } from "../../src/index.ts";
import type { InternalOptions } from "../../src/client/zookeeper.ts";
import { ZkModel, type ServerLine } from "./model.ts";
import { SimNet } from "./net.ts";
import { Sched } from "./sched.ts";

let runs = 0; // host names unique to each run (the client's per host:port memory of servers is process-wide)

export async function underSim<T>(seed: number, body: (connect: (o?: ConnectOptions) => Promise<ZooKeeper>) => Promise<T>, limitMs = 120_000, line: ServerLine = "3.9"): Promise<T> {
  const s = new Sched(seed);
  const model = new ZkModel(() => s.now, s.random, { line });
  const net = new SimNet(s, model);
  const restore = s.install();
  let n = 0;
  try {
    const tick = (): void => {
      model.tick();
      s.at(model.tickTime, "server", tick);
    };
    s.at(model.tickTime, "server", tick);
    const connect = (o: ConnectOptions = {}): Promise<ZooKeeper> => {
      const actor = `c${n++}`;
      const opts: InternalOptions = { sessionTimeout: 4000, ...o, dialer: net.dialer(actor), servers: net.servers, clock: s.clock };
      return ZooKeeper.connect(`sim-${++runs}:2181`, opts);
    };
    let done = false;
    const p = body(connect).finally(() => (done = true));
    p.catch(() => {});
    while (!done && s.now < limitMs) await s.run(s.now + 10);
    if (!done) throw new Error(`sim: the body did not finish within ${limitMs} simulated ms`);
    return await p;
  } finally {
    restore();
  }
}
