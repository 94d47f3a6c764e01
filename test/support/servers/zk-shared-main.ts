// Runs one standalone server for another process or by hand: prints {"connectString","pid","dir"} as one JSON
// line, then serves until SIGINT or SIGTERM (also with stdin closed: `</dev/null`, or in the background).
//   --port N              the client port (default a free one); a port in use fails the start
//   --until-stdin-closes  also stop when stdin ends: for a parent process (scripts/test-all.mjs,
//                         test-lines.mjs, readme-samples.mjs), whose death then stops the server too
import { parseArgs } from "node:util";
import { startStandalone } from "./zk-server.ts";

const { values } = parseArgs({ options: { port: { type: "string" }, "until-stdin-closes": { type: "boolean" } }, strict: true });
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) {
  process.stderr.write(`zk-shared-main: --port must be a port number (1-65535), got ${JSON.stringify(values.port)}\n`);
  process.exit(2);
}
// The signals are handled from the start: one that comes while the server starts stops it once it is up.
let stopping = false;
const started = startStandalone({ clientPort: port });
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await (await started).close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
const server = await started;
process.stdout.write(JSON.stringify({ connectString: server.connectString, pid: server.pid, dir: server.dir }) + "\n");
// Nothing else holds the event loop open once stdin is closed: this does, until a signal stops the server.
setInterval(() => {}, 1 << 30);
if (values["until-stdin-closes"]) {
  process.stdin.resume();
  process.stdin.on("end", stop);
  process.stdin.on("close", stop);
}
