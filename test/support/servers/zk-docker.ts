// Docker back end (image zookeeper:3.8.0 through testcontainers) behind the same ZkServer shape.
// Standalone servers only; ensembles always run as local JVMs. The client port is published on
// 127.0.0.1 only, at a fixed host port so the connect string survives kill/start. testcontainers'
// reaper removes the containers when the test process dies.
import { existsSync, createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { ServerEndpoint } from "./zk-endpoint.ts";
import type { ServerOptions, ZkServer } from "./zk-types.ts";

const IMAGE = "zookeeper:3.8.0";
type Tc = typeof import("testcontainers");
type Client = Awaited<ReturnType<Tc["getContainerRuntimeClient"]>>;

let probe: Promise<boolean> | undefined;

/** True when a Docker engine answers within a few seconds; cheap when there is no socket at all. */
export function dockerAvailable(): Promise<boolean> {
  probe ??= (async () => {
    const sockets = ["/var/run/docker.sock", join(homedir(), ".docker/run/docker.sock"),
      process.env.XDG_RUNTIME_DIR ? join(process.env.XDG_RUNTIME_DIR, "docker.sock") : ""];
    if (!process.env.DOCKER_HOST && !sockets.some((s) => s && existsSync(s))) return false;
    try {
      const tc: Tc = await import("testcontainers");
      const timeout = new Promise<never>((_, rej) => setTimeout(() => rej(new Error("timeout")), 5000).unref());
      await Promise.race([tc.getContainerRuntimeClient(), timeout]);
      return true;
    } catch {
      return false;
    }
  })();
  return probe;
}


export async function startDockerStandalone(dir: string, clientPort: number, extraPorts: number[],
  zooCfg: Record<string, string>, opts: ServerOptions, jvmArgs: string[]): Promise<ZkServer> {
  const tc: Tc = await import("testcontainers");
  const client = await tc.getContainerRuntimeClient();
  class LoopbackContainer extends tc.GenericContainer {
    protected override async beforeContainerCreated(): Promise<void> {
      for (const bindings of Object.values(this.hostConfig.PortBindings ?? {}) as { HostIp?: string }[][]) {
        for (const b of bindings) b.HostIp = "127.0.0.1";
      }
    }
  }
  // Inside the container the server listens on 0.0.0.0:2181; files keep their host paths so that
  // config values pointing into DIR (keystores, JAAS files) stay valid.
  const cfg = { ...zooCfg, dataDir: "/data", clientPort: "2181", clientPortAddress: "0.0.0.0" };
  const files = Object.entries(opts.files ?? {}).map(([name, content]) => ({ content, target: join(dir, name) }));
  const log = createWriteStream(join(dir, "server.log"), { flags: "a" });
  const started = await new LoopbackContainer(IMAGE)
    .withExposedPorts({ container: 2181, host: clientPort })
    .withEnvironment({ ZK_SERVER_HEAP: "64", JVMFLAGS: jvmArgs.join(" ") })
    .withCopyContentToContainer([
      { content: Object.entries(cfg).map(([k, v]) => `${k}=${v}`).join("\n") + "\n", target: "/conf/zoo.cfg" },
      ...files,
    ])
    .withLogConsumer((s: Readable) => s.pipe(log, { end: false }))
    .start();
  const server = new DockerServer(client, started.getId(), dir, clientPort, extraPorts, log);
  await server.waitServing(opts.startTimeoutMs ?? 60_000);
  return server;
}

class DockerServer extends ServerEndpoint implements ZkServer {
  readonly id = 1;
  readonly pid = undefined;
  readonly backend = "docker" as const;
  readonly #client: Client;
  readonly #id: string;
  readonly #log: NodeJS.WritableStream;
  #running = true;
  #paused = false;

  constructor(client: Client, id: string, dir: string, clientPort: number, extraPorts: number[], log: NodeJS.WritableStream) {
    super(clientPort, dir, extraPorts);
    this.#client = client;
    this.#id = id;
    this.#log = log;
  }

  get running(): boolean {
    return this.#running;
  }
  get paused(): boolean {
    return this.#paused;
  }
  get #container() {
    return this.#client.container.getById(this.#id);
  }

  async waitServing(timeoutMs: number): Promise<void> {
    if ((await this.serving(timeoutMs)) === "timeout") throw new Error(`docker ZooKeeper ${this.connectString} not serving after ${timeoutMs} ms:\n${this.logTail()}`);
  }

  async kill(signal: "SIGKILL" | "SIGTERM" = "SIGKILL"): Promise<void> {
    if (!this.#running) return;
    if (this.#paused) await this.resume();
    await this.#container.kill({ signal });
    await this.#container.wait();
    this.#running = false;
  }
  async pause(): Promise<void> {
    await this.#container.pause();
    this.#paused = true;
  }
  async resume(): Promise<void> {
    await this.#container.unpause();
    this.#paused = false;
  }
  async start(): Promise<void> {
    if (this.#running) return;
    const since = Math.floor(Date.now() / 1000);
    await this.#container.start();
    this.#running = true;
    const logs = await this.#client.container.logs(this.#container, { since });
    logs.pipe(this.#log, { end: false });
    await this.waitServing(60_000);
  }
  async close(): Promise<void> {
    await this.#container.remove({ force: true, v: true }).catch(() => {});
    this.#running = false;
    this.#log.end();
    await rm(this.dir, { recursive: true, force: true });
  }
}
