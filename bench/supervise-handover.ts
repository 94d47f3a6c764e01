// Handover time of `zkts elect` and `zkts lock` after the child exits by itself (issue 31): from the leader's
// (holder's) child's exit to the start of the next candidate's child, each time written by the child itself
// (a shell script: `date +%s%N` as its last and first act), median of --rounds (default 10).
//   node --import tsx bench/supervise-handover.ts [--rounds 10] [--commands elect,lock]
//   bun bench/supervise-handover.ts          deno run -A bench/supervise-handover.ts
// zkts runs under the runtime running this script (test/support/processes/cli-run.ts: the source under Bun and Deno, a
// bundle under Node). Each round: two supervisors wait at PATH (the second one's znode is in place), the
// leader's child is told to exit 0, its supervisor resigns and exits 0, the other one's child starts; then a
// fresh supervisor joins as the next candidate. The server is ZK_CONNECT or one standalone ZooKeeper started
// for the run (tickTime 2000).
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ZooKeeper } from "../src/index.ts";
import { RUNTIME, startCli, type CliProcess } from "../test/support/processes/cli-run.ts";
import { startStandalone } from "../test/support/servers/zk-server.ts";
import { until } from "../test/support/wait.ts";

const { values: opt } = parseArgs({
  options: { rounds: { type: "string", default: "10" }, commands: { type: "string", default: "elect,lock" } },
});
const ROUNDS = Number(opt.rounds);
const log = (m: string): void => void process.stderr.write(`[handover] ${m}\n`);

// $1: the run's directory. Writes "start PID NS" first and "end PID NS" just before it exits (when stop.PID appears).
const CHILD = `#!/bin/sh
dir=$1
echo "start $$ $(date +%s%N)" >> "$dir/times"
while [ ! -e "$dir/stop.$$" ]; do sleep 0.02; done
echo "end $$ $(date +%s%N)" >> "$dir/times"
exit 0
`;

interface Times {
  starts: { pid: number; ns: bigint }[];
  ends: Map<number, bigint>;
}

function readTimes(dir: string): Times {
  const file = join(dir, "times");
  const t: Times = { starts: [], ends: new Map() };
  if (!existsSync(file)) return t;
  for (const line of readFileSync(file, "utf8").split("\n").slice(0, -1)) {
    const [kind, pid, ns] = line.split(" ");
    if (kind === "start") t.starts.push({ pid: Number(pid), ns: BigInt(ns) });
    else t.ends.set(Number(pid), BigInt(ns));
  }
  return t;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function measure(connect: string, zk: ZooKeeper, command: "elect" | "lock"): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), "zkts-handover-"));
  const path = `/bench-handover-${command}-${process.pid}`;
  const running: CliProcess[] = [];
  const join_ = async (): Promise<void> => {
    const before = (await zk.exists(path)) ? (await zk.getChildren(path)).length : 0;
    const cli = await startCli(["--server", connect, command, path, "--", "sh", join(dir, "child.sh"), dir], { killAfterMs: 600_000 });
    running.push(cli);
    await until(`${command} supervisor #${running.length} to queue`, async () => (await zk.exists(path)) !== null && (await zk.getChildren(path)).length > before, 20_000);
  };
  try {
    writeFileSync(join(dir, "child.sh"), CHILD, { mode: 0o755 });
    await join_();
    await until("the first child", () => readTimes(dir).starts.length === 1, 20_000);
    await join_();
    const handovers: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const leader = readTimes(dir).starts[round - 1];
      writeFileSync(join(dir, `stop.${leader.pid}.tmp`), "");
      renameSync(join(dir, `stop.${leader.pid}.tmp`), join(dir, `stop.${leader.pid}`));
      await until(`child #${round + 1}`, () => readTimes(dir).starts.length === round + 1, 20_000);
      const t = readTimes(dir);
      const end = t.ends.get(leader.pid);
      if (end === undefined) throw new Error(`child ${leader.pid} wrote no end time`);
      const ms = Number(t.starts[round].ns - end) / 1e6;
      handovers.push(ms);
      log(`${command} round ${round}: ${ms.toFixed(1)} ms`);
      const done = await running[round - 1].done;
      if (done.code !== 0) throw new Error(`supervisor #${round} exited ${done.code}: ${done.err}`);
      if (round < ROUNDS) await join_();
    }
    const last = readTimes(dir).starts[ROUNDS];
    writeFileSync(join(dir, `stop.${last.pid}`), "");
    await running[ROUNDS].done;
    return handovers;
  } finally {
    for (const c of running) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGTERM");
    await Promise.all(running.map((c) => c.done));
    await zk.deleteRecursive(path).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}

const server = process.env.ZK_CONNECT ? null : await startStandalone();
const connect = process.env.ZK_CONNECT ?? server!.connectString;
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
const lines: string[] = [];
try {
  for (const command of opt.commands.split(",") as ("elect" | "lock")[]) {
    const ms = await measure(connect, zk, command);
    lines.push(
      `${RUNTIME} zkts ${command}: handover after the child's exit, median of ${ms.length}: ${median(ms).toFixed(1)} ms ` +
        `(min ${Math.min(...ms).toFixed(1)}, max ${Math.max(...ms).toFixed(1)}; ${ms.map((x) => x.toFixed(0)).join(" ")})`,
    );
  }
} finally {
  await zk.close();
  await server?.close();
}
process.stdout.write(`${lines.join("\n")}\n`);
