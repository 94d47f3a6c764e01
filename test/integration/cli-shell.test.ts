// The zkts interactive shell through a pseudo-terminal (pty-drive.py): keys are sent as a user
// types them, the screen is read back. Tab completes command names and znode paths, the up arrow
// recalls history (kept in $ZKTS_HISTORY across shells), Ctrl-C ends a running watch and clears the
// prompt, Ctrl-D leaves with status 0.
import { describe, it, beforeAll, afterAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ZooKeeper } from "../../src/index.ts";
import { sharedServer } from "../support/servers/zk-server.ts";
import { startCliPty } from "../support/processes/cli-run.ts";
import { removeRoot, uniqueRoot } from "../support/sessions.ts";

// The screen without terminal control sequences (cursor moves, line clears).
const plain = (s: string): string => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replace(/\r/g, "");

describe("zkts shell under a pseudo-terminal (real server)", () => {
  let zk: ZooKeeper;
  let connect: string;
  const root = uniqueRoot("shell");
  const dir = mkdtempSync(join(tmpdir(), "zkts-shell-"));
  const history = join(dir, "history");

  beforeAll(async () => {
    connect = (await sharedServer()).connectString;
    zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
    await zk.create(`${root}/alpha-node`, "A", { createParents: true });
    await zk.create(`${root}/beta`, "B");
  });

  afterAll(async () => {
    if (zk) await removeRoot(zk, root);
    await zk?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("completes commands and paths, runs them, recalls history, Ctrl-C ends watch, Ctrl-D exits 0", async () => {
    const sh = await startCliPty(["--server", connect], { ZKTS_HISTORY: history });
    const screen = (): string => plain(sh.out());
    const until = (text: string, from = 0): Promise<void> => sh.waitForScreen(text, from, plain);
    await until("zkts> ");
    let mark = screen().length;
    sh.send("getac");
    await until("getac", mark);
    sh.send("\t"); // one command starts so: completed, with a space
    await until("getacl ", mark);
    sh.send(`${root}/al`);
    await until(`${root}/al`, mark);
    sh.send("\t");
    await until(`${root}/alpha-node`, mark);
    sh.send("\r");
    await until("world:anyone:cdrwa", mark);
    await until("zkts> ", screen().lastIndexOf("world:anyone:cdrwa"));
    mark = screen().length;
    sh.send(`ls ${root}\r`);
    await until("alpha-node\nbeta\n", mark);
    mark = screen().length;
    sh.send(`get ${root}/missing\r`);
    await until(`NONODE (getData ${root}/missing)`, mark);
    // A watch runs until Ctrl-C; the shell stays.
    mark = screen().length;
    sh.send(`wat`);
    await until("wat", mark);
    sh.send("\t");
    await until("watch ", mark);
    sh.send(`${root}/beta\r`);
    await until(`zkts watch: watching ${root}/beta\n`, mark); // set on the server (stderr, on the screen)
    await zk.setData(`${root}/beta`, "changed");
    await until(`NodeDataChanged ${root}/beta\n`, mark);
    sh.send("\x03");
    await until("zkts> ", screen().lastIndexOf("NodeDataChanged"));
    // Ctrl-C at the prompt clears the line; the shell stays.
    mark = screen().length;
    sh.send("half-typed");
    await until("half-typed", mark);
    sh.send("\x03");
    await until("^C", mark);
    await until("zkts> ", screen().lastIndexOf("^C"));
    // Up arrow: the last command (the watch), then the one before (the failed get).
    mark = screen().length;
    sh.send("\x1b[A");
    await until(`watch ${root}/beta`, mark);
    sh.send("\x1b[A");
    await until(`get ${root}/missing`, mark);
    sh.send("\x15"); // Ctrl-U: clear the line
    sh.send("\x04"); // Ctrl-D on an empty line: leave
    const r = await sh.done;
    assert.equal(r.code, 0, screen());
    assert.deepEqual(readFileSync(history, "utf8").trimEnd().split("\n"), [`getacl ${root}/alpha-node`, `ls ${root}`, `get ${root}/missing`, `watch ${root}/beta`, "half-typed"].filter((l) => l !== "half-typed"));
    process.stdout.write(`--- shell session (${screen().length} chars) ---\n${screen()}\n--- end ---\n`);
  }, 60_000);

  it("history persists: a new shell recalls the previous shell's last command", async () => {
    const sh = await startCliPty(["--server", connect, "shell"], { ZKTS_HISTORY: history }, 30_000);
    const screen = (): string => plain(sh.out());
    await sh.waitForScreen("zkts> ", 0, plain);
    sh.send("\x1b[A");
    await sh.waitForScreen(`watch ${root}/beta`, 0, plain);
    sh.send("\x15exit\r");
    assert.equal((await sh.done).code, 0);
  }, 60_000);
});
