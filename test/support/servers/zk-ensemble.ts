// An ensemble's servers seen together: each one's mode, the single leader, a quorum. The plain ensemble
// (zk-server.ts) is this; the partitioned one (zk-partition.ts) adds its network namespaces and forwarders.
// connectOn: a session on one chosen server of an ensemble.
import { ZooKeeper, type ConnectOptions } from "../../../src/index.ts";
import { until } from "../wait.ts";
import type { ZkEnsemble, ZkServer } from "./zk-types.ts";

export class EnsembleOf<S extends ZkServer> implements ZkEnsemble {
  readonly servers: S[];
  readonly connectString: string;

  constructor(servers: S[]) {
    this.servers = servers;
    this.connectString = servers.map((s) => s.connectString).join(",");
  }

  /** srvr Mode of each server (null when stopped, paused or not serving), in the order of `servers`. */
  modes(): Promise<(string | null)[]> {
    return Promise.all(this.servers.map((s) => (s.running && !s.paused ? s.mode() : Promise.resolve(null))));
  }

  /** The one server that reports "leader", once exactly one does. */
  async leader(timeoutMs = 60_000): Promise<S> {
    let modes: (string | null)[] = [];
    let leader: S | undefined;
    const one = async (): Promise<boolean> => {
      modes = await this.modes();
      const leaders = this.servers.filter((_, i) => modes[i] === "leader");
      leader = leaders.length === 1 ? leaders[0] : undefined;
      return leader !== undefined;
    };
    await until("a single leader", one, timeoutMs, 100).catch(() => {
      throw new Error(`no single leader after ${timeoutMs} ms; modes: ${JSON.stringify(modes)}`);
    });
    return leader!;
  }

  /** Every running, unpaused server serves (leader or follower) and exactly one of them leads. */
  async waitForQuorum(timeoutMs = 60_000): Promise<void> {
    let modes: (string | null)[] = [];
    const quorum = async (): Promise<boolean> => {
      modes = await this.modes();
      const up = this.servers.filter((s) => s.running && !s.paused).length;
      const serving = modes.filter((m) => m === "leader" || m === "follower").length;
      return modes.filter((m) => m === "leader").length === 1 && serving === up;
    };
    await until("a quorum", quorum, timeoutMs, 100).catch(() => {
      throw new Error(`no quorum after ${timeoutMs} ms; modes: ${JSON.stringify(modes)}`);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.servers.map((s) => s.close()));
  }
}

/** A session whose first server is `server`, one of the ensemble's at `connectString` (hosts are shuffled: retry until it lands there). */
export async function connectOn(server: ZkServer, connectString: string, opts: ConnectOptions = {}): Promise<ZooKeeper> {
  for (let i = 0; i < 40; i++) {
    const zk = await ZooKeeper.connect(connectString, { sessionTimeout: 20_000, connectTimeout: 30_000, ...opts });
    if (zk.remoteAddress === server.connectString) return zk;
    await zk.close();
  }
  throw new Error(`no session landed on ${server.connectString} in 40 tries`);
}
