// Helpers for the ensemble-*.test.ts files (partitioned real ensembles, test/support/zk-partition.ts).
import { ZooKeeper, type ConnectOptions } from "../../src/index.ts";
import type { LocalServer } from "../support/zk-local.ts";

/** A session whose first server is `server` (hosts are shuffled: retry until it lands there). */
export async function connectOn(server: LocalServer, connectString: string, opts: ConnectOptions = {}): Promise<ZooKeeper> {
  for (let i = 0; i < 40; i++) {
    const zk = await ZooKeeper.connect(connectString, { sessionTimeout: 20_000, connectTimeout: 30_000, ...opts });
    if (zk.remoteAddress === server.connectString) return zk;
    await zk.close();
  }
  throw new Error(`no session landed on ${server.connectString} in 40 tries`);
}

/** Scenario table rows, printed by each file's afterAll (and copied into the engineer's note). */
export interface Row {
  scenario: string;
  expected: string;
  observed: string;
}

export function printTable(title: string, rows: Row[]): void {
  const lines = [`\n${title}`, "| scenario | expected | observed |", "|---|---|---|", ...rows.map((r) => `| ${r.scenario} | ${r.expected} | ${r.observed} |`)];
  console.log(lines.join("\n"));
}
