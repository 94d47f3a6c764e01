// What every design in this folder gets from the machine process that runs it (../machine.ts), and
// the one idiom all the blog posts share for a lost connection: try the same call again.
import type { CreateMode, ZooKeeper } from "../../../src/index.ts";
import { ErrorCode, isZooKeeperError } from "../../../src/index.ts";

export interface Report {
  /** This machine now acts as master. */
  master(): void;
  /** This machine stopped acting as master. */
  stepDown(reason: string): void;
  /** One of this machine's watches was delivered (the herd count). */
  watch(path: string | null): void;
  /** The znode this machine believes is its own (its candidate, or /master once it won). */
  own(path: string): void;
}

export interface Machine {
  zk: ZooKeeper;
  /** The election's parent znode (exists before the machines start). */
  dir: string;
  id: string;
  report: Report;
}

/** A design joins the election and returns what the machine asks before every act: "am I master?" */
export type Design = (m: Machine) => Promise<() => boolean>;

/** The posts' answer to CONNECTIONLOSS on a create: create again (no check whether the first one landed). */
export async function createRetrying(zk: ZooKeeper, path: string, data: string, mode: CreateMode): Promise<string> {
  for (;;) {
    try {
      return await zk.create(path, data, { mode });
    } catch (e) {
      if (!isZooKeeperError(e, ErrorCode.CONNECTIONLOSS)) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
