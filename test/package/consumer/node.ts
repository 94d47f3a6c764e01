// With @types/node (test/package/consumer-types.test.ts): a node:tls ConnectionOptions object fits `tls` as it is,
// and the package's emitters are EventEmitters to node:events' helpers (`once`, `on`).
import { once } from "node:events";
import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { ZooKeeper, type TlsOptions } from "zookeeper-ts";
import { LeaderElection } from "zookeeper-ts/recipes";

export async function withNodeTypes(): Promise<void> {
  const fromNode: ConnectionOptions = {
    ca: readFileSync("ca.pem"),
    cert: readFileSync("client.pem"),
    key: [{ pem: readFileSync("client.key"), passphrase: "secret" }],
    servername: "zk.internal",
    minVersion: "TLSv1.2",
    checkServerIdentity: () => undefined,
  };
  const zk = await ZooKeeper.connect("127.0.0.1:2281", { tls: fromNode });
  const ours: TlsOptions = { ca: readFileSync("ca.pem"), pfx: [{ buf: readFileSync("client.p12"), passphrase: "secret" }] };
  await ZooKeeper.connect("127.0.0.1:2281", { tls: ours });
  const [state] = await once(zk, "state");
  const election = new LeaderElection(zk, "/election", { id: "n1" });
  await election.start();
  await once(election, "elected");
  console.log(state);
  await zk.close();
}
