// Sessions on the shared test server for one test file: client() opens one (10 s session timeout unless
// told), proxy() puts a fault proxy in front of the server; hooks() (call inside the describe) finds the
// server before the tests and, after them, runs the file's teardown, closes every session, then every proxy.
// A test may close a client itself (closing twice is harmless).
import { beforeAll, afterAll } from "./bdd.ts";
import { ZooKeeper, type ConnectOptions } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "./fault-proxy.ts";
import { sharedServer } from "./zk-server.ts";

/** ZooKeeper.connect's options, and where to: another connect string (a proxy's) and/or a chroot. */
export type SessionOptions = ConnectOptions & { connectString?: string; chroot?: string };

export class SharedSessions {
  /** The shared server's connect string, once hooks()' beforeAll has run. */
  connectString = "";
  private readonly clients: ZooKeeper[] = [];
  private readonly proxies: FaultProxy[] = [];

  /** teardown: what the file does with its sessions still open once its tests are over (deleting its nodes). */
  hooks(teardown?: () => Promise<unknown>): void {
    beforeAll(async () => {
      this.connectString = (await sharedServer()).connectString;
    }, 60_000);
    afterAll(async () => {
      await teardown?.();
      await Promise.all(this.clients.map((zk) => zk.close()));
      await Promise.all(this.proxies.map((p) => p.close()));
    }, 30_000);
  }

  /**
   * One sync round trip on every open session: whatever the server sent any of them before now (a
   * notification above all) has been delivered when this resolves. Use it where a test would otherwise
   * sleep and then assert that nothing (more) happened.
   */
  async settled(): Promise<void> {
    await Promise.all(this.clients.filter((zk) => zk.state === "connected").map((zk) => zk.sync("/")));
  }

  async client(options: SessionOptions = {}): Promise<ZooKeeper> {
    const { connectString = this.connectString, chroot = "", ...connect } = options;
    const zk = await ZooKeeper.connect(`${connectString}${chroot}`, { sessionTimeout: 10_000, ...connect });
    this.clients.push(zk);
    return zk;
  }

  /** A fault proxy in front of the shared server's first host. */
  async proxy(): Promise<FaultProxy> {
    const [host, port] = this.connectString.split(",")[0]!.split("/")[0]!.split(":");
    const proxy = await startFaultProxy(host!, Number(port));
    this.proxies.push(proxy);
    return proxy;
  }
}
