// Child process for the leak checks of test/integration/hostile-faults.test.ts: connects through the
// parent's fault proxy, keeps requests going while the parent injects a fault, closes the client and
// then does nothing. With no leaked timer or socket the process exits by itself right after close.
// Usage: node --import tsx leak-child.ts <connectString> <busyMs> [control]. Prints one JSON line per
// step. `control` leaks a 10 s timer on purpose, so the parent can show that its check can fail.
import process from "node:process";
import { ZooKeeper } from "../../src/index.ts";
import { hold } from "../support/wait.ts";

const [connectString, busyArg, control] = process.argv.slice(2);
const busyMs = Number(busyArg ?? 1500);
const say = (o: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(o)}\n`);
};
let unhandled = 0;
process.on("unhandledRejection", () => unhandled++);

const zk = await ZooKeeper.connect(connectString!, { sessionTimeout: 4000, connectTimeout: 10_000 });
say({ step: "ready", sessionId: zk.sessionId.toString(16) });
const outcomes: Record<string, number> = {};
const deadline = performance.now() + busyMs;
while (performance.now() < deadline) {
  // Several in flight at once, so the fault finds requests on the wire.
  const batch = await Promise.allSettled(Array.from({ length: 5 }, () => zk.getData("/")));
  for (const r of batch) {
    const key = r.status === "fulfilled" ? "ok" : ((r.reason as { codeName?: string }).codeName ?? "other");
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  // The workload's pace after a failed batch (time, not a fact): the next batch still finds the fault,
  // queued while disconnected or on the new link, without spinning on immediate rejections.
  if (batch.some((r) => r.status === "rejected")) await hold(50);
}
await zk.close();
say({ step: "closed", state: zk.state, outcomes, unhandled, at: Date.now() });
if (control === "control") setTimeout(() => {}, 10_000);
