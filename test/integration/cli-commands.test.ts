// The zkts command against a real server, run as a child process under the runtime running this
// file: every command in plain and --json output, every exit status (0, 1, 2), a piped script through
// the shell, watch ended by --count and by SIGINT, and leader/members on the recipes' znodes.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CreateMode, ErrorCode, GroupMember, LeaderElection, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { sharedServer, startStandalone } from "../support/servers/zk-server.ts";
import { startCli, zkts, type CliResult } from "../support/processes/cli-run.ts";
import { ttlNodesOff, uniqueRoot } from "../support/sessions.ts";
import { REPO_DIR } from "../support/processes/line-process.ts";

const STAT_NAMES = ["czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion", "ephemeralOwner", "dataLength", "numChildren", "pzxid"];

describe("zkts command line (real server)", () => {
  let connect: string;
  let zk: ZooKeeper;
  const root = uniqueRoot("cli");
  let env: Record<string, string>;
  const run = (...args: string[]): Promise<CliResult> => zkts(args, { env });
  const ok = (r: CliResult): CliResult => (assert.equal(r.code, 0, `exit ${r.code}; stderr: ${r.err}`), r);

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    env = { ZK_CONNECT: connect };
    zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await zk.create(root);
  });

  afterAll(async () => {
    // The --auth case's node is readable by carol only: listing it (deleteRecursive does) needs her identity.
    await zk?.addAuthInfo("digest", "carol:pw");
    await zk?.deleteRecursive(root);
    await zk?.close();
  });

  it("create -p, get, get -s, stat, ls, ls -R, set -v: plain output", async () => {
    const p = `${root}/a/b`;
    assert.equal(ok(await run("create", "-p", p, "hello")).out, `${p}\n`);
    const got = ok(await run("get", p));
    assert.deepEqual([...got.stdout], [...Buffer.from("hello")]); // raw, no newline added
    const withStat = ok(await run("get", "-s", p));
    assert.equal(withStat.out, "hello");
    assert.match(withStat.err, /^version = 0$/m);
    const stat = ok(await run("--server", connect, "stat", p)).out.trimEnd().split("\n");
    assert.deepEqual(stat.map((l) => l.split(" = ")[0]), STAT_NAMES);
    assert.ok(stat.includes("dataLength = 5") && stat.includes("ephemeralOwner = 0x0"));
    assert.equal(ok(await run("ls", root)).out, "a\n");
    assert.equal(ok(await run("ls", "-R", root)).out, `${root}/a\n${p}\n`);
    ok(await run("set", "-v", "0", p, "world"));
    assert.equal(new TextDecoder().decode((await zk.getData(p)).data!), "world");
  }, 60_000);

  it("--json: one JSON value per result", async () => {
    const p = `${root}/j`;
    await zk.create(p, "data");
    await zk.create(`${p}/x`, new Uint8Array([0xff, 0x00]));
    assert.deepEqual(JSON.parse(ok(await run("--json", "create", `${p}/y`)).out), { path: `${p}/y` });
    assert.deepEqual(JSON.parse(ok(await run("--json", "ls", p)).out), ["x", "y"]);
    assert.deepEqual(JSON.parse(ok(await run("ls", "-R", p, "--json")).out), [`${p}/x`, `${p}/y`]);
    const got = JSON.parse(ok(await run("--json", "get", "-s", p)).out);
    assert.equal(got.data, "data");
    assert.equal(got.stat.numChildren, 2);
    assert.deepEqual(JSON.parse(ok(await run("--json", "get", `${p}/x`)).out), { path: `${p}/x`, data: "/wA=", encoding: "base64" });
    const stat = JSON.parse(ok(await run("--json", "stat", p)).out);
    assert.deepEqual(Object.keys(stat), STAT_NAMES);
    assert.equal(stat.ephemeralOwner, "0x0");
    assert.match(stat.czxid, /^0x[0-9a-f]+$/);
    assert.equal(JSON.parse(ok(await run("--json", "set", p, "v2")).out).version, 1);
  }, 60_000);

  it("exit 1 on a ZooKeeper error, with the code name and the op on stderr (plain and --json)", async () => {
    const missing = `${root}/missing`;
    const r = await run("get", missing);
    assert.equal(r.code, 1);
    assert.equal(r.out, "");
    assert.equal(r.err, `NONODE (getData ${missing})\n`);
    await zk.create(`${root}/v`, "x");
    const bad = await run("delete", "-v", "7", `${root}/v`);
    assert.deepEqual([bad.code, bad.err], [1, `BADVERSION (delete ${root}/v)\n`]);
    const j = await run("--json", "stat", missing);
    assert.equal(j.code, 1);
    assert.deepEqual(JSON.parse(j.err), { error: "NONODE", code: -101, op: "stat", path: missing, message: `NONODE (stat ${missing})` });
    const down = await zkts(["--server", "127.0.0.1:1", "--timeout", "1000", "ls", "/"]);
    assert.equal(down.code, 1);
    assert.match(down.err, /^CONNECTIONLOSS/);
  }, 60_000);

  it("a stock server (TTL nodes off, the default): create -t and a TTL create say the server needs extendedTypesEnabled", async () => {
    // The test servers enable TTL nodes; this one is started as shipped (the last -D wins).
    const stock = await startStandalone({ jvmArgs: ["-Dzookeeper.extendedTypesEnabled=false"] });
    const c = await ZooKeeper.connect(stock.connectString, { sessionTimeout: 10_000 });
    try {
      const advice = "TTL nodes are off on this server: it needs -Dzookeeper.extendedTypesEnabled=true (ZooKeeper 3.5.3 or later)";
      const r = await zkts(["--server", stock.connectString, "create", "-t", "5000", "/ttl-node"]);
      assert.deepEqual([r.code, r.out, r.err], [1, "", `UNIMPLEMENTED (create /ttl-node): ${advice}\n`]);
      for (const mode of [CreateMode.PERSISTENT_WITH_TTL, CreateMode.PERSISTENT_SEQUENTIAL_WITH_TTL]) {
        // The server's own answer (the client cannot tell TTLs are off): the link stays up.
        await assert.rejects(c.create("/ttl-node", null, { mode, ttl: 5000 }), (e) => e instanceof ZooKeeperError && e.code === ErrorCode.UNIMPLEMENTED && e.message === `UNIMPLEMENTED (create /ttl-node): ${advice}`);
      }
      assert.equal(c.state, "connected");
      assert.equal(await c.create("/container", null, { mode: CreateMode.CONTAINER }), "/container"); // containers need no flag
    } finally {
      await c.close();
      await stock.close();
    }
  }, 90_000);

  it("exit 2 on a usage error, with the usage on stderr and nothing sent", async () => {
    const cases: [string[], RegExp][] = [
      [["bogus"], /unknown command "bogus"/],
      [["get"], /get: expected get \[-s\] PATH/],
      [["set", "-v", "x", "/a", "b"], /set -v VERSION must be an integer/],
      [["ls", "-Z", "/"], /Unknown option '-Z'/],
      [["--sasl-user", "u", "--sasl-password", "pw", "ls", "/"], /--sasl-password is not accepted/],
      [["--timeout", "soon", "ls", "/"], /--timeout must be an integer/],
    ];
    // A server that is never dialled: a usage error exits before connecting.
    for (const [args, message] of cases) {
      const r = await zkts(args, { env: { ZK_CONNECT: "127.0.0.1:1" } });
      assert.equal(r.code, 2, `${args.join(" ")}: exit ${r.code}, stderr ${r.err}`);
      assert.match(r.err, message);
      assert.match(r.err, /usage: /);
      assert.equal(r.out, "");
    }
    const help = await zkts(["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.out, /watch \[-r\] \[--count N\] PATH/);
    // The guides are not in the npm package ("files"): help names them at the repository.
    const pkg = JSON.parse(readFileSync(`${REPO_DIR}package.json`, "utf8")) as { version: string; files: string[]; repository: { url: string } };
    const repo = pkg.repository.url.replace(/^git\+/, "").replace(/\.git$/, "");
    assert.ok(!pkg.files.includes("docs"));
    assert.deepEqual(help.out.match(/\S*docs\/\S+/g), [`${repo}/blob/HEAD/docs/cli.md`, `${repo}/blob/HEAD/docs/supervisor.md`]);
    for (const flag of ["--version", "-V"]) {
      const v = await zkts([flag], { env: { ZK_CONNECT: "127.0.0.1:1" } }); // nothing dialled
      assert.deepEqual([v.code, v.out, v.err], [0, `zkts ${pkg.version}\n`, ""], flag);
    }
  }, 60_000);

  it("delete -r removes a whole subtree (1,000 children: nothing on stderr); delete and sync", async () => {
    const t = `${root}/tree`;
    await zk.create(`${t}/a/b/c`, null, { createParents: true });
    await Promise.all(Array.from({ length: 1000 }, (_, i) => zk.create(`${t}/a/n${i}`)));
    assert.equal(ok(await run("ls", "-R", t)).out.split("\n").length, 1003 + 1);
    const r = ok(await run("delete", "-r", t));
    assert.deepEqual([r.out, r.err], ["", ""]); // no MaxListenersExceededWarning: one abort listener on the command's signal
    assert.equal(await zk.exists(t), null);
    await zk.create(`${root}/one`);
    ok(await run("sync", `${root}/one`));
    ok(await run("delete", `${root}/one`));
    assert.equal(await zk.exists(`${root}/one`), null);
  }, 60_000);

  it("a reader that closes stdout after the first line (| head -1): exit 0, nothing on stderr (ls -R, the shell)", async () => {
    const big = `${root}/big`;
    await zk.create(big);
    // ~370 KB of listing: more than the pipe and our first read hold, so zkts is still writing when the reader goes.
    const name = "n".repeat(160);
    await Promise.all(Array.from({ length: 2000 }, (_, i) => zk.create(`${big}/${name}${i}`)));
    for (const [args, input] of [[["ls", "-R", big], undefined], [[], `ls -R ${big}\nls -R ${big}\n`]] as const) {
      const cli = await startCli(args, { env, input });
      await cli.waitForOutput("\n");
      cli.child.stdout!.destroy(); // as `head -1` exits: zkts's next write meets EPIPE
      const r = await cli.done;
      assert.deepEqual([r.code, r.signal, r.err], [0, null, ""], `zkts ${args.join(" ") || "(shell)"}`);
    }
  }, 60_000);

  it("a script on stdin runs through the shell: create modes, ephemerals, count, whoami, ACLs; worst status", async () => {
    const s = `${root}/script`;
    const ttlOff = await ttlNodesOff(zk, root); // probed beside the script's node: a probe under it would take a sequence number
    await zk.create(s);
    if (ttlOff !== null) console.log(`[cli] shell script: the TTL create is a plain one: ${ttlOff}`);
    const script = [
      `create -e ${s}/eph x`,
      `create -s ${s}/seq-`,
      `create -c ${s}/cont`,
      `create -c ${s}/cont/child`,
      ttlOff === null ? `create -t 600000 ${s}/ttl` : `create ${s}/ttl`,
      `ephemerals ${s}`,
      `ephemerals --json ${s}`,
      `count ${s}`,
      `count --json ${s}`,
      `whoami`,
      `whoami --json`,
      `setacl ${s}/ttl world:anyone:rw,ip:127.0.0.1:cdrwa`,
      `getacl ${s}/ttl`,
      `getacl --json ${s}/ttl`,
      `get ${s}/missing`,
      "",
    ].join("\n");
    const r = await zkts(["--json", "shell"].slice(1), { env, input: script });
    assert.equal(r.code, 1, r.err); // the failed get is the worst status
    const lines = r.out.trimEnd().split("\n");
    assert.deepEqual(lines.slice(0, 3), [`${s}/eph`, `${s}/seq-0000000001`, `${s}/cont`]);
    assert.deepEqual(lines.slice(4), [
      `${s}/ttl`,
      `${s}/eph`,
      JSON.stringify([`${s}/eph`]),
      "5",
      "5",
      "ip:127.0.0.1",
      JSON.stringify([{ scheme: "ip", id: "127.0.0.1" }]),
      "world:anyone:rw",
      "ip:127.0.0.1:cdrwa",
      JSON.stringify([{ scheme: "world", id: "anyone", perms: "rw" }, { scheme: "ip", id: "127.0.0.1", perms: "cdrwa" }]),
    ]);
    assert.equal(r.err, `NONODE (getData ${s}/missing)\n`);
    assert.equal(await zk.exists(`${s}/eph`), null); // the CLI's session ended with it
    assert.ok((await zk.exists(`${s}/ttl`)) !== null);
    assert.equal((await zk.getACL(`${s}/ttl`)).acl.length, 2);
  }, 60_000);

  it("--auth digest: reads a node only its digest identity may read; without it NOAUTH (exit 1)", async () => {
    const p = `${root}/secret`;
    const withAuth = ["--auth", "digest:carol:pw", "--auth", "digest:dave:pw2"];
    ok(await zkts([...withAuth, "create", p, "s3cret"], { env }));
    ok(await zkts([...withAuth, "setacl", p, "auth::cdrwa"], { env }));
    assert.equal(ok(await zkts([...withAuth, "get", p], { env })).out, "s3cret");
    const who = ok(await zkts([...withAuth, "--json", "whoami"], { env }));
    assert.ok(JSON.parse(who.out).some((i: { scheme: string; id: string }) => i.scheme === "digest" && i.id === "carol"));
    const denied = await run("get", p);
    assert.deepEqual([denied.code, denied.err], [1, `NOAUTH (getData ${p}): not authorized; this session authenticated as: no one (world:anyone); authenticate as an identity the node's ACL grants (connect's auth option, or addAuthInfo)\n`]);
  }, 60_000);

  it("watch --count N says once the watch is set (stderr), then prints N events and exits 0", async () => {
    const p = `${root}/w`;
    await zk.create(p, "0");
    const w = await startCli(["watch", "--count", "2", p], { env });
    await w.waitForErr(`zkts watch: watching ${p}\n`); // set on the server: no change below can be missed
    assert.equal(w.out(), "");
    await zk.setData(p, "1");
    await zk.setData(p, "2");
    const r = await w.done;
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `NodeDataChanged ${p}\nNodeDataChanged ${p}\n`);
    assert.equal(r.err, `zkts watch: watching ${p}\n`);
  }, 60_000);

  it("watch -r --json: a {\"event\":\"watching\"} line on stderr, then events on stdout until SIGINT, then exit 0", async () => {
    const p = `${root}/wr`;
    await zk.create(p);
    const w = await startCli(["--json", "watch", "-r", p], { env });
    await w.waitForErr(`{"event":"watching"`);
    assert.deepEqual(JSON.parse(w.err()), { event: "watching", path: p, recursive: true });
    await zk.create(`${p}/c1`);
    await zk.create(`${p}/c1/c2`);
    await w.waitForOutput(`${p}/c1/c2`);
    process.kill(w.child.pid!, "SIGINT");
    const r = await w.done;
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.trimEnd().split("\n").map((l) => JSON.parse(l)), [
      { type: "NodeCreated", path: `${p}/c1` },
      { type: "NodeCreated", path: `${p}/c1/c2` },
    ]);
    assert.equal(r.err.trimEnd().split("\n").length, 1, r.err); // the watching line only
  }, 60_000);

  it("leader and members read the recipes' znodes; no leader is exit 1", async () => {
    const ePath = `${root}/election`;
    const sessions = await Promise.all([0, 1].map(() => ZooKeeper.connect(connect, { sessionTimeout: 10_000 })));
    try {
      const first = new LeaderElection(sessions[0], ePath, { id: "alpha" });
      await first.start();
      await first.waitForLeadership({ timeout: 20_000 });
      const second = new LeaderElection(sessions[1], ePath, { id: "beta" });
      await second.start();
      assert.equal(ok(await run("leader", ePath)).out, "alpha\n");
      assert.equal(ok(await run("leader", "--all", ePath)).out, "alpha\nbeta\n");
      const j = JSON.parse(ok(await run("--json", "leader", ePath)).out);
      assert.deepEqual([j.id, j.isLeader, j.path], ["alpha", true, first.candidatePath]);
      const gPath = `${root}/group`;
      const members = [new GroupMember(sessions[0], gPath, { id: "m-2", data: "two" }), new GroupMember(sessions[1], gPath, { id: "m-1" })];
      for (const m of members) await m.join();
      assert.equal(ok(await run("members", gPath)).out, "m-1\nm-2\n");
      assert.deepEqual(JSON.parse(ok(await run("--json", "members", gPath)).out), [{ id: "m-1", data: null }, { id: "m-2", data: "two" }]);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
    const none = await run("leader", `${root}/no-election`);
    assert.deepEqual([none.code, none.out, none.err], [1, "", `no leader (${root}/no-election)\n`]);
  }, 60_000);
});
