// zkts elect / zkts lock against a real server, under the runtime running this file: the supervised
// children are shell scripts whose life is observed from outside (a start line each, their pids polled in
// /proc; a zombie counts as gone). Each child, as it starts, also checks that no earlier child is still
// alive, so an overlap is caught at the moment it would begin. No child lifetimes may overlap in any test.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import console from "node:console";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { killClis, startCli, statusEvents, zkts, type CliProcess } from "../support/processes/cli-run.ts";
import { until } from "../support/wait.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";

const SESSION_MS = 4000; // the shared server's minimum (2 × tickTime 2000)

// $1: the test's directory, $2: run (until stop.PID holds an exit status) or ignoreterm (the same, SIGTERM ignored).
const CHILD = `#!/bin/sh
dir=$1
me=$$
: > "$dir/alive.$me"
for f in "$dir"/alive.*; do
  p=\${f##*.}
  [ "$p" = "$me" ] && continue
  st=$(sed -n 's/^.*) \\(.\\).*$/\\1/p' "/proc/$p/stat" 2>/dev/null)
  if [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ] && tr '\\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q child.sh; then
    echo "$me started while $p was alive" >> "$dir/overlap"
  fi
done
echo "$me $(date +%s%3N) \${ZK_FENCING_TOKEN:-none} \${ZK_LEADER_ID:-none}" >> "$dir/starts"
[ "$2" = ignoreterm ] && trap '' TERM
while [ ! -e "$dir/stop.$me" ]; do sleep 0.05; done
exit "$(cat "$dir/stop.$me")"
`;

interface Life {
  pid: number;
  start: number; // ms since the epoch, written by the child itself
  token: bigint;
  id: string;
  end?: number; // first time this process saw it gone (reaped or a zombie)
}

/** Alive: /proc/PID exists and is not a zombie. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** One test's children: their start lines, and their ends as polled in /proc. */
class Children {
  readonly dir = mkdtempSync(join(tmpdir(), "zkts-supervise-"));
  readonly lives: Life[] = [];
  private readonly timer: ReturnType<typeof setInterval>;

  constructor() {
    writeFileSync(join(this.dir, "child.sh"), CHILD, { mode: 0o755 });
    this.timer = setInterval(() => this.poll(), 5);
  }

  command(mode: "run" | "ignoreterm" = "run"): string[] {
    return ["sh", join(this.dir, "child.sh"), this.dir, mode];
  }

  poll(): void {
    const file = join(this.dir, "starts");
    const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").slice(0, -1) : []; // whole lines only
    for (const line of lines.slice(this.lives.length)) {
      const [pid, start, token, id] = line.split(" ");
      this.lives.push({ pid: Number(pid), start: Number(start), token: token === "none" ? -1n : BigInt(token), id });
    }
    const now = Date.now();
    for (const l of this.lives) if (l.end === undefined && !alive(l.pid)) l.end = now;
  }

  async started(n: number, timeoutMs = 20_000): Promise<Life> {
    await until(`child #${n} to start`, () => (this.poll(), this.lives.length >= n), timeoutMs);
    return this.lives[n - 1];
  }

  async gone(l: Life, timeoutMs = 20_000): Promise<number> {
    await until(`child ${l.pid} to be gone`, () => (this.poll(), l.end !== undefined), timeoutMs, 5);
    return l.end!;
  }

  /** Makes a child exit by itself with `status`. */
  stop(l: Life, status: number): void {
    writeFileSync(join(this.dir, `stop.${l.pid}.tmp`), String(status));
    renameSync(join(this.dir, `stop.${l.pid}.tmp`), join(this.dir, `stop.${l.pid}`));
  }

  /**
   * No child saw an earlier one alive as it started; the polled intervals agree; tokens grow (`sameTerm`: a
   * leader that kept its znode through a short disconnect leads again with the same token).
   */
  assertSerial(sameTerm = false): void {
    this.poll();
    const overlap = join(this.dir, "overlap");
    assert.equal(existsSync(overlap) ? readFileSync(overlap, "utf8") : "", "", "a child started while another was alive");
    for (let i = 1; i < this.lives.length; i++) {
      const [a, b] = [this.lives[i - 1], this.lives[i]];
      assert.ok(a.end !== undefined && a.end <= b.start + 5, `child ${a.pid} (seen gone at ${a.end}) overlaps child ${b.pid} (started ${b.start})`);
      assert.ok(b.token > a.token || (sameTerm && b.token === a.token && b.id === a.id), `tokens grow: ${a.token} then ${b.token}`);
    }
  }

  close(): void {
    clearInterval(this.timer);
    for (const l of this.lives) if (alive(l.pid)) process.kill(l.pid, "SIGKILL");
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A supervisor with its --json status lines (stderr) as they come. */
interface Supervisor {
  cli: CliProcess;
  events(): Record<string, unknown>[];
  childPids(): number[];
}

describe("zkts elect / zkts lock: supervised children (real server)", () => {
  let connect: string;
  let zk: ZooKeeper;
  const root = uniqueRoot("supervise");
  const running: CliProcess[] = [];
  const proxies: FaultProxy[] = [];
  const timelines: string[] = [];

  const supervisor = async (args: string[], server = connect): Promise<Supervisor> => {
    const cli = await startCli(["--server", server, "--json", ...args], { killAfterMs: 60_000 });
    running.push(cli);
    const events = (): Record<string, unknown>[] => statusEvents(cli);
    return { cli, events, childPids: () => events().filter((e) => e.event === "child-started").map((e) => e.pid as number) };
  };
  /** The supervisor that reported starting child `pid` (its status line may come after the child's own). */
  const owner = async (sups: Supervisor[], pid: number): Promise<Supervisor> => {
    await until(`a supervisor to report child ${pid}`, () => sups.some((x) => x.childPids().includes(pid)));
    return sups.find((x) => x.childPids().includes(pid))!;
  };
  // process.kill, not ChildProcess.kill: Deno's ChildProcess reports the signal it sent, not the exit status.
  const signal = (s: Supervisor, sig: NodeJS.Signals): boolean => process.kill(s.cli.child.pid!, sig);
  const proxied = async (): Promise<FaultProxy> => {
    const [host, port] = connect.split(",")[0].split(":");
    const proxy = await startFaultProxy(host, Number(port));
    proxies.push(proxy);
    return proxy;
  };
  /** The znodes under an election (lock) path; none once the server removed the empty container. */
  const children = (path: string): Promise<string[]> =>
    zk.getChildren(path).catch((e: unknown) => {
      if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) return [];
      throw e;
    });
  const event = (s: Supervisor, name: string): Record<string, unknown> | undefined => s.events().find((e) => e.event === name);
  /** Runs a test's body with its children; afterwards no two of them overlapped and their tokens grew. */
  const withChildren = async (body: (kids: Children) => Promise<void>, sameTerm = false): Promise<void> => {
    const kids = new Children();
    try {
      await body(kids);
      kids.assertSerial(sameTerm);
    } finally {
      kids.close();
    }
  };
  /** Tells child `l` to exit with `status`: its supervisor `s` exits with it, and the child is gone. */
  const exitWith = async (kids: Children, l: Life, s: Supervisor, status = 0): Promise<void> => {
    kids.stop(l, status);
    const r = await s.cli.done;
    assert.equal(r.code, status, r.err);
    await kids.gone(l);
  };
  /**
   * `elect` for a leader (through `server`, its child run as `mode`) and a follower (direct) at `path`: resolves
   * once the leader's child runs and both candidates stand. `extra` goes before PATH for both.
   */
  const leaderAndFollower = async (
    kids: Children, path: string, leader: { id: string; server?: string; mode?: "run" | "ignoreterm"; extra?: string[] }, follower: { id: string; extra?: string[] },
  ): Promise<{ a: Supervisor; first: Life; b: Supervisor }> => {
    const a = await supervisor(["elect", "--id", leader.id, ...(leader.extra ?? []), path, "--", ...kids.command(leader.mode)], leader.server);
    const first = await kids.started(1);
    const b = await supervisor(["elect", "--id", follower.id, ...(follower.extra ?? []), path, "--", ...kids.command()]);
    await until("two candidates", async () => (await children(path)).length === 2);
    return { a, first, b };
  };
  const timeout = ["--session-timeout", String(SESSION_MS)];

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await zk.create(root);
  }, 60_000);

  afterAll(async () => {
    await killClis(running);
    await Promise.all(proxies.map((p) => p.close()));
    if (zk) await removeRoot(zk, root);
    await zk?.close();
    if (timelines.length > 0) console.log(timelines.join("\n"));
  }, 60_000);

  it("three `zkts lock` at once run their children one after another, tokens growing, each passing its status on", () =>
    withChildren(async (kids) => {
      const path = `${root}/lock`;
      const sups = await Promise.all([0, 1, 2].map(() => supervisor(["lock", path, "--", ...kids.command()])));
      const statuses = [0, 4, 0];
      for (let i = 1; i <= 3; i++) {
        const l = await kids.started(i);
        assert.equal(kids.lives.filter((x) => alive(x.pid)).length, 1, "one child at a time");
        await exitWith(kids, l, await owner(sups, l.pid), statuses[i - 1]);
      }
      for (const s of sups) assert.deepEqual(s.events().map((e) => e.event), ["waiting", "acquired", "child-started", "child-ended"]);
      assert.deepEqual(await children(path), []);
    }), 60_000);

  it("elect: a child that exits hands over; its status is passed on and the next candidate's child starts", () =>
    withChildren(async (kids) => {
      const { a, first, b } = await leaderAndFollower(kids, `${root}/handover`, { id: "a" }, { id: "b" });
      assert.equal(first.id, "a");
      assert.equal(await owner([a, b], first.pid), a);
      const stoppedAt = Date.now();
      kids.stop(first, 7);
      assert.equal((await a.cli.done).code, 7);
      const second = await kids.started(2);
      assert.equal(second.id, "b");
      timelines.push(`handover after a child's exit: next child started ${second.start - stoppedAt} ms after the stop file`);
      await exitWith(kids, second, b);
    }), 60_000);

  it("kill -9 of the leader's supervisor: its child dies at once, the next child starts once the session expired", () =>
    withChildren(async (kids) => {
      const path = `${root}/kill9`;
      const sups = await Promise.all(["x", "y", "z"].map((id) => supervisor(["elect", "--id", id, ...timeout, path, "--", ...kids.command()])));
      const first = await kids.started(1);
      await until("three candidates", async () => (await children(path)).length === 3);
      const leader = await owner(sups, first.pid);
      const killedAt = Date.now();
      signal(leader, "SIGKILL");
      const dead = await kids.gone(first, 5000);
      assert.ok(dead - killedAt < 1000, `the child outlived its supervisor by ${dead - killedAt} ms`);
      const second = await kids.started(2, SESSION_MS * 3);
      assert.ok(second.start - killedAt >= SESSION_MS / 2, `the successor started ${second.start - killedAt} ms after the kill, before the session could expire`);
      const next = await owner(sups, second.pid);
      const elected = event(next, "elected")!;
      assert.equal(elected.token, second.token.toString());
      const stoppedAt = Date.now();
      await exitWith(kids, second, next);
      timelines.push(
        `kill -9 failover (session ${SESSION_MS} ms): 0 supervisor of ${first.id} SIGKILLed; child ${first.pid} (${first.id}, token ${first.token}) alive ${first.start - killedAt}..${dead - killedAt} ms; ` +
          `${second.id} elected at ${(elected.at as number) - killedAt} ms (token ${elected.token}); child ${second.pid} (${second.id}, token ${second.token}) alive ${second.start - killedAt}..${second.end! - killedAt} ms (told to exit at ${stoppedAt - killedAt} ms)`,
      );
      const third = await kids.started(3);
      await exitWith(kids, third, await owner(sups, third.pid));
    }), 60_000);

  it("SIGTERM to the supervisor is forwarded; it resigns and exits with the child's status", () =>
    withChildren(async (kids) => {
      const path = `${root}/sigterm`;
      const s = await supervisor(["elect", path, "--", ...kids.command()]);
      const l = await kids.started(1);
      signal(s, "SIGTERM");
      const r = await s.cli.done;
      assert.equal(r.code, 143, `${r.signal} ${r.err}`);
      assert.ok(!alive(l.pid));
      assert.deepEqual(await children(path), [], "resigned");
      const holder = await supervisor(["lock", `${root}/sigint`, "--", ...kids.command()]);
      const second = await kids.started(2);
      signal(holder, "SIGINT");
      assert.equal((await holder.cli.done).code, 130);
      assert.ok(!alive(second.pid));
    }), 60_000);

  it("SIGTERM to the supervisor, its child ignoring SIGTERM: SIGKILL after the whole --grace, then it resigns (exit 137) and the next leads", () =>
    withChildren(async (kids) => {
      const GRACE = 1500;
      const { a, first, b } = await leaderAndFollower(kids, `${root}/sigterm-grace`, { id: "stubborn", mode: "ignoreterm", extra: ["--grace", String(GRACE)] }, { id: "patient" });
      await until("the leader's child to be reported", () => a.childPids().includes(first.pid));
      const sentAt = Date.now();
      signal(a, "SIGTERM");
      const r = await a.cli.done;
      assert.equal(r.code, 137, r.err);
      const forwarded = event(a, "signal")!;
      assert.deepEqual([forwarded.signal, forwarded.killInMs], ["SIGTERM", GRACE]);
      const gone = await kids.gone(first);
      assert.ok(gone - sentAt >= GRACE, `SIGKILLed ${gone - sentAt} ms after the SIGTERM, before the grace of ${GRACE} ms`);
      assert.ok(gone - sentAt < GRACE + 1000, `SIGKILLed ${gone - sentAt} ms after the SIGTERM`);
      assert.deepEqual(a.events().map((e) => e.event), ["waiting", "elected", "child-started", "signal", "child-killed", "child-ended"]);
      const second = await kids.started(2);
      assert.equal(second.id, "patient");
      timelines.push(`SIGTERM to the supervisor at 0 (grace ${GRACE} ms, child ignores SIGTERM): child ${first.pid} seen gone at ${gone - sentAt} ms, supervisor exited 137; next child (token ${second.token}) started at ${second.start - sentAt} ms`);
      await exitWith(kids, second, b);
    }), 60_000);

  it("usage errors exit 2 with the reason on stderr; the shell refuses elect and lock; no server exits 1", async () => {
    const cases: [string[], RegExp][] = [
      [["elect", "/x", "sh"], /elect: no -- before the COMMAND/],
      [["lock", "/x", "--"], /lock: no COMMAND after --/],
      [["lock", "--", "true"], /lock: expected lock/],
      [["elect", "--grace", "soon", "/x", "--", "true"], /--grace MS must be an integer/],
    ];
    for (const [args, reason] of cases) {
      const r = await zkts(["--server", "127.0.0.1:1", ...args]);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.err}`);
      assert.match(r.err.split("\n")[0], reason);
    }
    // The shell refuses both in one line each (status 2) and runs nothing.
    const marker = join(tmpdir(), `zkts-shell-refusal-${process.pid}`);
    const script = `elect ${root}/in-shell -- touch ${marker}\nlock ${root}/in-shell -- touch ${marker}\nelect\n`;
    const sh = await zkts(["--server", connect], { input: script });
    assert.equal(sh.code, 2, sh.err);
    assert.equal(sh.err, ["elect", "lock", "elect"].map((c) => `zkts: ${c} runs only as a command of its own (zkts ${c} ...), not in the shell\n`).join(""));
    assert.equal(existsSync(marker), false);
    assert.equal(await zk.exists(`${root}/in-shell`), null);
    const down = await zkts(["--server", "127.0.0.1:1", "--timeout", "1000", "lock", "/x", "--", "true"]);
    assert.equal(down.code, 1, down.err);
    assert.match(down.err, /CONNECTIONLOSS/);
  }, 60_000);

  it("a blackholed leader (its child ignores SIGTERM) is SIGKILLed before the successor's child starts", () =>
    withChildren(async (kids) => {
      const path = `${root}/blackhole`;
      const proxy = await proxied();
      const { a, first, b } = await leaderAndFollower(kids, path, { id: "behind-proxy", server: proxy.connectString, mode: "ignoreterm", extra: timeout }, { id: "direct", extra: timeout });
      proxy.blackhole(true);
      const cutAt = Date.now();
      const dead = await kids.gone(first, SESSION_MS * 2);
      const second = await kids.started(2, SESSION_MS * 3);
      assert.equal(second.id, "direct");
      assert.ok(dead <= second.start, `the old child was seen gone at ${dead - cutAt} ms, the successor's started at ${second.start - cutAt} ms`);
      const revoked = a.events().find((e) => e.event === "revoked");
      assert.ok(revoked && a.events().some((e) => e.event === "child-killed"), JSON.stringify(a.events()));
      await until("the successor's elected line", () => event(b, "elected") !== undefined);
      const elected = event(b, "elected")!;
      assert.equal(elected.token, second.token.toString());
      const killed = event(a, "child-killed")!;
      timelines.push(
        `blackhole failover (session ${SESSION_MS} ms): 0 link of ${first.id} blackholed; child ${first.pid} (${first.id}, token ${first.token}, ignores SIGTERM) alive ${first.start - cutAt}..${dead - cutAt} ms; ` +
          `revoked (${revoked.reason}) at ${(revoked.at as number) - cutAt} ms, SIGKILL due ${revoked.killInMs} ms later, sent at ${(killed.at as number) - cutAt} ms; ` +
          `${second.id} elected at ${(elected.at as number) - cutAt} ms (token ${elected.token}); child ${second.pid} started at ${second.start - cutAt} ms`,
      );
      proxy.blackhole(false);
      await until("the old leader to wait as a follower", async () => (await children(path)).length === 2, SESSION_MS * 4);
      assert.equal(a.cli.child.exitCode, null, "the old supervisor is still running");
      kids.stop(second, 0);
      assert.equal((await b.cli.done).code, 0);
      const third = await kids.started(3);
      assert.equal(third.id, "behind-proxy");
      await exitWith(kids, third, a);
    }), 60_000);

  it("elect --once exits 3 once leadership is lost (a blackholed link): its child is gone before the successor's starts", () =>
    withChildren(async (kids) => {
      const proxy = await proxied();
      const { a, first, b } = await leaderAndFollower(kids, `${root}/once`, { id: "once", server: proxy.connectString, extra: ["--once", ...timeout] }, { id: "next", extra: timeout });
      proxy.blackhole(true);
      const cutAt = Date.now();
      const r = await a.cli.done;
      const exitedAt = Date.now();
      assert.equal(r.code, 3, r.err);
      assert.ok(!alive(first.pid), "the child outlived its supervisor");
      const revoked = event(a, "revoked");
      assert.ok(revoked, JSON.stringify(a.events()));
      assert.deepEqual(a.events().map((e) => e.event), ["waiting", "elected", "child-started", "revoked", "child-ended"]);
      const second = await kids.started(2, SESSION_MS * 3);
      assert.equal(second.id, "next");
      // It does not wait for its candidate's delete on the dead link: that goes with the session, which the server
      // expires only after the whole session timeout, when the successor's child starts.
      assert.ok(exitedAt <= second.start, `the supervisor exited ${exitedAt - second.start} ms after the successor's child started`);
      timelines.push(
        `elect --once, blackholed: cut at 0; revoked (${revoked.reason}) at ${(revoked.at as number) - cutAt} ms; child ${first.pid} (token ${first.token}) seen gone at ${first.end! - cutAt} ms; ` +
          `supervisor exited 3 at ${exitedAt - cutAt} ms; successor's child (token ${second.token}) started at ${second.start - cutAt} ms`,
      );
      await exitWith(kids, second, b);
    }), 60_000);

  it("lock exits 3 once the lock is lost (its znode deleted, the link intact); a child that ignores SIGTERM gets SIGKILL only after the whole --grace", () =>
    withChildren(async (kids) => {
      const path = `${root}/lost-lock`;
      const GRACE = 1500;
      const s = await supervisor(["lock", "--grace", String(GRACE), path, "--", ...kids.command("ignoreterm")]);
      const first = await kids.started(1);
      await until("the holder's child to be reported", () => s.childPids().includes(first.pid));
      const [node] = await children(path);
      const deletedAt = Date.now();
      await zk.delete(`${path}/${node}`);
      const r = await s.cli.done;
      assert.equal(r.code, 3, r.err);
      const lost = event(s, "lost")!;
      const killed = event(s, "child-killed");
      assert.ok(lost && killed, JSON.stringify(s.events()));
      assert.equal(lost.killInMs, GRACE, "the whole grace: the lease is not in doubt");
      const gone = first.end ?? Date.now();
      assert.ok(!alive(first.pid));
      // From outside: the child (ignoring SIGTERM) lived on for the whole grace after the loss, and died soon after.
      assert.ok(gone - (lost.at as number) >= GRACE, `SIGKILLed ${gone - (lost.at as number)} ms after the loss, before the grace of ${GRACE} ms`);
      assert.ok(gone - (lost.at as number) < GRACE + 1000, `SIGKILLed ${gone - (lost.at as number)} ms after the loss`);
      assert.deepEqual(s.events().map((e) => e.event), ["waiting", "acquired", "child-started", "lost", "child-killed", "child-ended"]);
      timelines.push(`lock lost (znode deleted) at 0: lost at ${(lost.at as number) - deletedAt} ms, SIGKILL at ${(killed.at as number) - deletedAt} ms (grace ${GRACE}), child seen gone at ${gone - deletedAt} ms, exit 3`);
      // The next holder gets it at once.
      const next = await supervisor(["lock", path, "--", ...kids.command()]);
      await exitWith(kids, await kids.started(2), next);
    }), 60_000);

  it("elect: its candidate znode deleted by another client: the whole --grace, then it stands again and leads with a higher token", () =>
    withChildren(async (kids) => {
      const path = `${root}/deleted`;
      const GRACE = 1500;
      const s = await supervisor(["elect", "--id", "solo", "--grace", String(GRACE), path, "--", ...kids.command("ignoreterm")]);
      const first = await kids.started(1);
      await until("the leader's child to be reported", () => s.childPids().includes(first.pid));
      const [node] = await children(path);
      await zk.delete(`${path}/${node}`);
      const second = await kids.started(2);
      // The child's own line can come before the supervisor's child-started (Deno, fresh-clone CI of a44b459).
      await until("the supervisor to report the second child", () => s.childPids().includes(second.pid));
      const revoked = event(s, "revoked")!;
      assert.equal(revoked.reason, "deleted");
      assert.equal(revoked.killInMs, GRACE);
      assert.ok(first.end! - (revoked.at as number) >= GRACE, `SIGKILLed ${first.end! - (revoked.at as number)} ms after the revocation, before the grace`);
      assert.equal(second.id, "solo");
      assert.ok(second.token > first.token);
      assert.equal(s.cli.child.exitCode, null);
      assert.deepEqual(s.events().map((e) => e.event), ["waiting", "elected", "child-started", "revoked", "child-killed", "child-ended", "rejoining", "elected", "child-started"]);
      signal(s, "SIGKILL"); // the child ignores SIGTERM: the parent-death signal ends it
      await kids.gone(second);
    }), 60_000);

  it("elect: a short disconnect (no expiry) revokes the child; once back, the leader stands where it was and leads again, the follower never", () =>
    withChildren(async (kids) => {
      const path = `${root}/blip`;
      const proxy = await proxied();
      const { a, first, b } = await leaderAndFollower(kids, path, { id: "blip", server: proxy.connectString }, { id: "steady" });
      const before = await children(path);
      proxy.refuse(true);
      proxy.reset();
      const cutAt = Date.now();
      await kids.gone(first);
      proxy.refuse(false); // healed well within the session timeout (10 s)
      const healedAt = Date.now();
      const second = await kids.started(2);
      assert.equal(second.id, "blip", "the follower led although the leader's session lived on");
      assert.equal(second.token, first.token, "the same znode, the same term");
      assert.deepEqual(await children(path), before, "both candidates kept their znodes");
      const revoked = event(a, "revoked")!;
      assert.equal(revoked.reason, "disconnected");
      assert.deepEqual(b.events().map((e) => e.event), ["waiting"]);
      timelines.push(
        `short disconnect: cut at 0; revoked (${revoked.reason}) at ${(revoked.at as number) - cutAt} ms; child ${first.pid} seen gone at ${first.end! - cutAt} ms; ` +
          `healed at ${healedAt - cutAt} ms; child ${second.pid} (same token ${second.token}) started at ${second.start - cutAt} ms`,
      );
      kids.stop(second, 0);
      assert.equal((await a.cli.done).code, 0);
      const third = await kids.started(3);
      assert.equal(third.id, "steady");
      await exitWith(kids, third, b);
    }, true), 60_000);
});
