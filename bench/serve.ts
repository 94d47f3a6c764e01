// Starts one standalone server for manual bench runs and prints its connect string; SIGTERM/SIGINT stop it.
// Usage: npx tsx bench/serve.ts  →  ZK_CONNECT=<printed> npm run bench
import { startStandalone } from "../test/support/servers/zk-server.ts";

const server = await startStandalone();
process.stdout.write(`${server.connectString} pid=${server.pid}\n`);
const stop = async (): Promise<void> => {
  await server.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
setInterval(() => {}, 1 << 30);
