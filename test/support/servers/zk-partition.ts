// An ensemble whose servers can be partitioned from each other while their clients still reach them
// (Node only, root only: `ip netns`). Each server's JVM runs in a network namespace of its own,
// `zkp-<pid>-<n>-s<id>`, whose eth0 (10.99.0.<id>/24, an address that exists only inside our own
// namespaces) is one end of a veth pair; the other ends sit in a hub namespace `zkp-<pid>-<n>-hub`
// on bridges. Quorum and election traffic (ports 2888/3888 on 10.99.0.x) crosses the hub, so
//   partition([[1, 2], [3, 4, 5]])  puts each group on a bridge of its own (2 | 3),
//   isolate(id)                     takes a server's veth down (packets vanish: a real partition),
//   dropOneWay(from, to)            a blackhole route in `from`'s namespace: its packets to `to` vanish,
//                                   `to`'s packets to it still arrive (a one-way link),
//   heal()                          puts every veth back on bridge 0, up, and removes those routes.
// Clients never cross the hub: for each server a forwarder process inside its namespace holds a
// listening socket on 127.0.0.1:<clientPort> of OUR namespace (created here, passed over IPC) and
// connects to the JVM on 127.0.0.1:<clientPort> inside its own, so client links stay up whatever
// the hub does.
//
// Cleanup: close() kills JVMs and forwarders and deletes the namespaces; a process 'exit' hook and a
// detached sh watchdog (it waits for our pid to go) delete them when the test process dies; and
// startPartitionedEnsemble() first deletes namespaces left by dead processes.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync, chmodSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnsembleOf } from "./zk-ensemble.ts";
import { localInstall } from "./zk-install.ts";
import { LocalServer } from "./zk-local.ts";
import { freePorts } from "./zk-ports.ts";
import { ensembleCfg } from "./zk-server.ts";
import type { ZkEnsemble } from "./zk-types.ts";

export interface PartitionOptions {
  size?: 3 | 5; // default 3
  tickTime?: number; // default 500 (syncLimit 6 → 3 s failure detection), like startEnsemble
  readOnly?: boolean; // local sessions on, so a minority server serves readOnly clients
  config?: Record<string, string>;
}

export interface PartitionedEnsemble extends ZkEnsemble {
  readonly servers: LocalServer[];
  /** Each group on its own bridge; servers in no group are isolated. */
  partition(groups: number[][]): void;
  isolate(...ids: number[]): void;
  dropOneWay(from: number, to: number): void;
  heal(): void;
  /** srvr Mode of each server (null when not serving), in id order. */
  modes(): Promise<(string | null)[]>;
  server(id: number): LocalServer;
  leader(): Promise<LocalServer>;
}

const RUN = "/run/netns";
const QUORUM = 2888;
const ELECTION = 3888;
let counter = 0;
const mine = new Set<string>();

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
}

function deleteNetns(names: Iterable<string>): void {
  for (const n of names) {
    try {
      ip("netns", "del", n);
    } catch {
      // already gone
    }
    mine.delete(n);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Namespaces `zkp-<pid>-…` whose process is gone (a test killed before its cleanup ran). */
export function cleanStaleNamespaces(): string[] {
  let names: string[];
  try {
    names = readdirSync(RUN);
  } catch {
    return [];
  }
  const stale = names.filter((n) => {
    const m = /^zkp-(\d+)-/.exec(n);
    return m !== null && !alive(Number(m[1]));
  });
  deleteNetns(stale);
  return stale;
}

let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on("exit", () => deleteNetns([...mine]));
}

const FORWARDER = `
const net = require("node:net");
const port = Number(process.env.ZKP_PORT);
process.on("disconnect", () => process.exit(0));
process.on("message", (_m, srv) => {
  srv.allowHalfOpen = true; // a four-letter word half-closes and still wants its reply
  srv.on("connection", (c) => {
    const u = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    const kill = () => { c.destroy(); u.destroy(); };
    c.pipe(u); u.pipe(c);
    c.on("error", kill); u.on("error", kill);
    c.on("close", () => u.end()); u.on("close", () => c.end());
  });
  process.send("ready");
});`;

/** A forwarder inside `ns` for a listening socket of ours on 127.0.0.1:port. */
async function startForwarder(ns: string, port: number): Promise<ChildProcess> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve());
  });
  const child = spawn("nsenter", [`--net=${RUN}/${ns}`, "--", process.execPath, "-e", FORWARDER], {
    stdio: ["ignore", "inherit", "inherit", "ipc"], env: { ...process.env, ZKP_PORT: String(port) },
  });
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`forwarder for ${ns} exited (${code})`)));
    child.once("message", () => resolve());
    child.send("listen", srv);
  });
  srv.close(); // the child holds its own copy of the listening socket
  child.removeAllListeners("exit");
  child.unref();
  child.channel?.unref();
  return child;
}

class Partitioned extends EnsembleOf<LocalServer> implements PartitionedEnsemble {
  readonly #hub: string;
  readonly #names: string[];
  readonly #forwarders: ChildProcess[];
  readonly #dog: ChildProcess;

  constructor(servers: LocalServer[], hub: string, names: string[], forwarders: ChildProcess[], dog: ChildProcess) {
    super(servers);
    this.#hub = hub;
    this.#names = names;
    this.#forwarders = forwarders;
    this.#dog = dog;
  }

  server(id: number): LocalServer {
    const s = this.servers.find((x) => x.id === id);
    if (!s) throw new Error(`no server ${id}`);
    return s;
  }

  partition(groups: number[][]): void {
    const placed = new Set(groups.flat());
    groups.forEach((g, b) => {
      for (const id of g) ip("-n", this.#hub, "link", "set", `v${id}`, "master", `br${b}`, "up");
    });
    for (const s of this.servers) if (!placed.has(s.id)) ip("-n", this.#hub, "link", "set", `v${s.id}`, "down");
  }

  isolate(...ids: number[]): void {
    for (const id of ids) ip("-n", this.#hub, "link", "set", `v${id}`, "down");
  }

  dropOneWay(from: number, to: number): void {
    ip("-n", this.#names[from]!, "route", "add", "blackhole", `10.99.0.${to}/32`);
  }

  heal(): void {
    this.partition([this.servers.map((s) => s.id)]);
    for (const s of this.servers) ip("-n", this.#names[s.id]!, "route", "flush", "type", "blackhole");
  }

  override async close(): Promise<void> {
    await super.close();
    for (const f of this.#forwarders) f.kill("SIGKILL");
    this.#dog.kill("SIGKILL");
    deleteNetns(this.#names);
  }
}

export async function startPartitionedEnsemble(opts: PartitionOptions = {}): Promise<PartitionedEnsemble> {
  if (process.getuid?.() !== 0) throw new Error("startPartitionedEnsemble needs root (ip netns)");
  cleanStaleNamespaces();
  hookExit();
  const size = opts.size ?? 3;
  const install = await localInstall();
  const tag = `zkp-${process.pid}-${++counter}`;
  const hub = `${tag}-hub`;
  const names = [hub, ...Array.from({ length: size }, (_, i) => `${tag}-s${i + 1}`)];
  for (const n of names) mine.add(n);
  // The watchdog deletes our namespaces once this process is gone, however it ends.
  const dog = spawn("sh", ["-c", `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; for n in ${names.join(" ")}; do ip netns del $n 2>/dev/null; done`], { stdio: "ignore", detached: true });
  dog.unref();
  const forwarders: ChildProcess[] = [];
  const servers: LocalServer[] = [];
  try {
    ip("netns", "add", hub);
    for (let b = 0; b < size; b++) {
      ip("-n", hub, "link", "add", `br${b}`, "type", "bridge");
      ip("-n", hub, "link", "set", `br${b}`, "up");
    }
    for (let id = 1; id <= size; id++) {
      const ns = `${tag}-s${id}`;
      ip("netns", "add", ns);
      ip("-n", ns, "link", "set", "lo", "up");
      ip("-n", hub, "link", "add", `v${id}`, "type", "veth", "peer", "name", "eth0", "netns", ns);
      ip("-n", hub, "link", "set", `v${id}`, "master", "br0", "up");
      ip("-n", ns, "addr", "add", `10.99.0.${id}/24`, "dev", "eth0");
      ip("-n", ns, "link", "set", "eth0", "up");
    }
    const ports = await freePorts(size);
    const peers: Record<string, string> = {};
    for (let id = 1; id <= size; id++) peers[`server.${id}`] = `10.99.0.${id}:${QUORUM}:${ELECTION}`;
    for (let id = 1; id <= size; id++) {
      const ns = `${tag}-s${id}`;
      const clientPort = ports[id - 1]!;
      const dir = mkdtempSync(join(tmpdir(), `zk-ts-p${id}-`));
      // The JVM enters the namespace through nsenter, which execs: the pid stays the JVM's.
      const java = join(dir, "java-in-netns");
      writeFileSync(java, `#!/bin/sh\nexec nsenter --net=${RUN}/${ns} -- ${install.java} "$@"\n`);
      chmodSync(java, 0o755);
      const zooCfg = ensembleCfg(dir, clientPort, peers, opts);
      servers.push(new LocalServer({
        id, dir, clientPort, extraPorts: [], zooCfg, myid: true, files: {}, jvmArgs: [], classpath: [], startTimeoutMs: 60_000,
      }, { ...install, java }));
      forwarders.push(await startForwarder(ns, clientPort));
    }
    for (const s of servers) s.launch();
    const ensemble = new Partitioned(servers, hub, names, forwarders, dog);
    try {
      await Promise.all(servers.map((s) => s.waitServing()));
      await ensemble.waitForQuorum();
    } catch (err) {
      await ensemble.close();
      throw err;
    }
    return ensemble;
  } catch (err) {
    await Promise.all(servers.map((s) => s.close()));
    for (const f of forwarders) f.kill("SIGKILL");
    dog.kill("SIGKILL");
    deleteNetns(names);
    throw err;
  }
}
