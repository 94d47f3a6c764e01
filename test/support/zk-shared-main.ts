// Runs one standalone server for another process (scripts/test-all.mjs, the harness test):
// prints {"connectString","pid","dir"} as one JSON line, then serves until stdin closes.
import { startStandalone } from "./zk-server.ts";

const server = await startStandalone();
process.stdout.write(JSON.stringify({ connectString: server.connectString, pid: server.pid, dir: server.dir }) + "\n");
process.stdin.resume();
const stop = async () => {
  await server.close();
  process.exit(0);
};
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
