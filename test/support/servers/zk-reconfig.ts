// An ensemble whose membership can change at run time (issue 10): every server runs with
// reconfigEnabled=true, standaloneEnabled=false and skipACL (reconfig needs a superuser otherwise),
// its membership in a dynamic config file. `addServer()` starts one more server that knows the
// current members and itself; the test then admits it with zk.reconfig. Reuses the harness's
// install (localInstall: classpath of the selected line) and its LocalServer process handling.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localInstall } from "./zk-install.ts";
import { LocalServer } from "./zk-local.ts";
import { freePorts } from "./zk-ports.ts";

export interface ReconfigMember {
  id: number;
  server: LocalServer;
  /** The config line that names it: "server.N=127.0.0.1:q:e:participant;127.0.0.1:clientPort". */
  spec: string;
}

interface Ports {
  client: number;
  quorum: number;
  election: number;
}

const specOf = (id: number, p: Ports): string => `server.${id}=127.0.0.1:${p.quorum}:${p.election}:participant;127.0.0.1:${p.client}`;

export class ReconfigEnsemble {
  readonly members = new Map<number, ReconfigMember>();

  /** The client addresses of these servers (default: every one started). */
  connectString(ids: readonly number[] = [...this.members.keys()]): string {
    return ids.map((id) => this.members.get(id)!.server.connectString).join(",");
  }

  private async build(id: number, p: Ports, lines: readonly string[]): Promise<ReconfigMember> {
    const dir = mkdtempSync(join(tmpdir(), "zk-ts-reconfig-"));
    const zooCfg = {
      tickTime: "500", initLimit: "20", syncLimit: "10", dataDir: join(dir, "data"), maxClientCnxns: "0",
      "4lw.commands.whitelist": "*", "admin.enableServer": "false", forceSync: "no",
      reconfigEnabled: "true", standaloneEnabled: "false", skipACL: "yes",
      dynamicConfigFile: join(dir, "zoo.cfg.dynamic"),
    };
    const server = new LocalServer({
      id, dir, clientPort: p.client, extraPorts: [p.quorum, p.election], zooCfg, myid: true,
      files: { "zoo.cfg.dynamic": lines.join("\n") + "\n" }, jvmArgs: [], classpath: [], startTimeoutMs: 60_000,
    }, await localInstall());
    const m = { id, server, spec: specOf(id, p) };
    this.members.set(id, m);
    return m;
  }

  private static async ports(): Promise<Ports> {
    const [client, quorum, election] = await freePorts(3);
    return { client: client!, quorum: quorum!, election: election! };
  }

  /** Starts servers 1..n as one ensemble and waits until each serves. */
  static async start(n = 3): Promise<ReconfigEnsemble> {
    const e = new ReconfigEnsemble();
    try {
      const ports: Ports[] = [];
      for (let i = 0; i < n; i++) ports.push(await ReconfigEnsemble.ports());
      const lines = ports.map((p, i) => specOf(i + 1, p));
      const members = await Promise.all(ports.map((p, i) => e.build(i + 1, p, lines)));
      for (const m of members) m.server.launch();
      await Promise.all(members.map((m) => m.server.waitServing()));
      return e;
    } catch (err) {
      await e.close();
      throw err;
    }
  }

  /** Starts server `id` knowing the `current` config lines and itself; the ensemble admits it by reconfig. */
  async addServer(id: number, current: readonly string[]): Promise<ReconfigMember> {
    const p = await ReconfigEnsemble.ports();
    const m = await this.build(id, p, [...current, specOf(id, p)]);
    m.server.launch();
    await m.server.waitServing();
    return m;
  }

  async close(): Promise<void> {
    await Promise.all([...this.members.values()].map((m) => m.server.close()));
  }
}
