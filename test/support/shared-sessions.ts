// Sessions on the shared test server for one test file: client() opens one (10 s session timeout),
// hooks() (call inside the describe) finds the server before the tests and closes every session after.
import { beforeAll, afterAll } from "./bdd.ts";
import { ZooKeeper } from "../../src/index.ts";
import { sharedServer } from "./zk-server.ts";

export class SharedSessions {
  private connectString = "";
  private readonly clients: ZooKeeper[] = [];

  hooks(): void {
    beforeAll(async () => {
      this.connectString = (await sharedServer()).connectString;
    }, 60_000);
    afterAll(async () => {
      await Promise.all(this.clients.map((zk) => zk.close()));
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

  async client(): Promise<ZooKeeper> {
    const zk = await ZooKeeper.connect(this.connectString, { sessionTimeout: 10_000 });
    this.clients.push(zk);
    return zk;
  }
}
