// Deno without --allow-net: connect() rejects at once (not after connectTimeout) with a message naming the
// missing permission. Usage: npx deno run --config examples/deno/deno.json --no-prompt --allow-env examples/deno/no-net.ts
import process from "node:process";
import { ErrorCode, ZooKeeper, isZooKeeperError } from "@zookeeper-ts/zookeeper-ts";

const connect = process.env.ZK_CONNECT ?? "127.0.0.1:2181";
// A connect timeout far longer than the run: a client that retried would time out, and say "timed out".
const outcome = await ZooKeeper.connect(connect, { connectTimeout: 600_000 }).then(
  async (zk) => (await zk.close(), new Error("connected without the net permission")),
  (e: unknown) => e,
);
if (!isZooKeeperError(outcome, ErrorCode.CONNECTIONLOSS) || !/--allow-net/.test(outcome.message) || /timed out|no session established/.test(outcome.message)) {
  console.error("expected CONNECTIONLOSS naming --allow-net, got:", outcome);
  process.exit(1);
}
console.log(`rejected at once: ${outcome.message}`);
console.log("ok");
