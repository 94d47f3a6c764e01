// `npm run demo -- --compare` end to end (Node only): the demo runs as its own process with a throwaway
// server (ZK_CONNECT unset, so sessions are the demo's 2 s whatever the shared server allows), must end
// by itself, print the comparison table and verdicts, and leave none of its processes running. The
// naive designs' numbers are whatever the run measured; LeaderElection's row must show no split brain,
// one wake-up per change and no orphans, and a master after every fault.
import { spawn } from "node:child_process";
import console from "node:console";
import assert from "node:assert/strict";
import { describe, it } from "../support/bdd.ts";
import { REPO_DIR } from "../support/processes/line-process.ts";
import type { CompareResult } from "../../examples/election-demo/compare-report.ts";
import { DESIGN_NAMES } from "../../examples/election-demo/designs/index.ts";

const HEAD = ["design", "split brain", "wake-ups/change", "orphans", "failover kill -9", "failover blackhole", "master after lost reply"];

function runDemo(): Promise<{ code: number | null; out: string; seconds: number }> {
  const env = { ...process.env };
  delete env.ZK_CONNECT;
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn("node", ["--import", "tsx", "examples/election-demo/main.ts", "--compare", "--json"], { cwd: REPO_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (out += s));
    child.on("exit", (code) => resolve({ code, out, seconds: (performance.now() - started) / 1000 }));
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

describe("npm run demo -- --compare", () => {
  it("prints one table of the four designs; LeaderElection: 0 ms split brain, 1 wake-up per change, 0 orphans", async () => {
    const { code, out, seconds } = await runDemo();
    assert.equal(code, 0, out.slice(-4000));
    const json = out.split("\n").find((l) => l.startsWith("COMPARE-JSON "));
    assert.ok(json, `no COMPARE-JSON line in: ${out.slice(-3000)}`);
    const r = JSON.parse(json.slice("COMPARE-JSON ".length)) as CompareResult;

    // The table: a header, a rule, one row per design in order, each with every column.
    const lines = out.split("\n");
    const head = lines.findIndex((l) => l.startsWith("| design "));
    assert.ok(head >= 0, out.slice(-3000));
    const cells = (l: string) => l.split("|").slice(1, -1).map((c) => c.trim());
    assert.deepEqual(cells(lines[head]), HEAD);
    assert.match(lines[head + 1], /^\|-+(\|-+)+\|$/);
    const rows = lines.slice(head + 2, head + 2 + DESIGN_NAMES.length).map(cells);
    assert.deepEqual(rows.map((row) => row[0]), DESIGN_NAMES);
    for (const row of rows) assert.equal(row.length, HEAD.length);
    assert.deepEqual(r.designs.map((d) => d.design), DESIGN_NAMES);
    for (const name of DESIGN_NAMES) assert.ok(lines.some((l) => l.startsWith(`${name}: `)), `no verdict for ${name}`);

    // Every row's numbers are measured ones, and the table shows exactly those numbers.
    for (const [i, d] of r.designs.entries()) {
      assert.ok(d.splitBrainMs >= 0 && d.orphans >= 0 && d.wakeupsPerChange >= 0, JSON.stringify(d));
      assert.equal(d.wakeupsPerChange, (d.wakeups.crash + d.wakeups.blackhole) / 2);
      assert.equal(rows[i][3], String(d.orphans));
      assert.equal(rows[i][2], `${Number(d.wakeupsPerChange.toFixed(1))} (${d.wakeups.crash}+${d.wakeups.blackhole})`);
    }

    const le = r.designs.find((d) => d.design === "leader-election")!;
    const leRow = rows[DESIGN_NAMES.indexOf("leader-election")];
    assert.equal(le.splitBrainMs, 0, JSON.stringify(le));
    assert.deepEqual(le.wakeups, { crash: 1, blackhole: 1 }, JSON.stringify(le));
    assert.equal(le.orphans, 0);
    assert.deepEqual(leRow.slice(1, 4), ["0 ms", "1 (1+1)", "0"]);
    assert.ok(le.failoverMs.crash !== null && le.failoverMs.blackhole !== null && le.failoverMs.lostReply !== null, JSON.stringify(le.failoverMs));
    assert.equal(le.staleActsAfterHeal, 0, "the blackholed leader did not act after its link came back");
    assert.deepEqual(le.errors, []);

    // Nothing the demo started is still running: 4 designs × 5 machines (+ restarts) and the server.
    assert.ok(r.pids.length >= DESIGN_NAMES.length * 5 + 1, `pids: ${r.pids.join(",")}`);
    assert.deepEqual(r.pids.filter(alive), [], "processes left running");
    console.log(`demo --compare: ${seconds.toFixed(1)} s (the demo's own count: ${r.seconds.toFixed(1)} s)`);
  }, 240_000);
});
