// Runner for node-zookeeper-client (npm, pure JavaScript), used the way its README shows.
import { createRequire } from "node:module";
import { type Driver, type Session, main } from "./harness.ts";

type Cb = (err: (Error & { getCode?: () => number }) | null, ...rest: unknown[]) => void;
interface NzcClient {
  connect(): void;
  close(): void;
  once(ev: string, f: () => void): void;
  getData(path: string, cb: Cb): void;
  getData(path: string, watcher: (ev: unknown) => void, cb: Cb): void;
  setData(path: string, data: Buffer, version: number, cb: Cb): void;
  create(path: string, data: Buffer, acls: unknown, mode: number, cb: Cb): void;
  remove(path: string, version: number, cb: Cb): void;
}
interface Nzc {
  createClient(cs: string, opts: { sessionTimeout: number; retries: number }): NzcClient;
  CreateMode: { PERSISTENT: number; EPHEMERAL: number; EPHEMERAL_SEQUENTIAL: number };
  ACL: { OPEN_ACL_UNSAFE: unknown };
  Exception: { NODE_EXISTS: number };
}
const nzc = createRequire(import.meta.url)("node-zookeeper-client") as Nzc;
const buf = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

function adapt(c: NzcClient): Session {
  return {
    get: (path, d) => c.getData(path, (e) => d(e)),
    set: (path, data, d) => c.setData(path, buf(data), -1, (e) => d(e)),
    createEphSeq: (prefix, data, d) =>
      c.create(prefix, buf(data), nzc.ACL.OPEN_ACL_UNSAFE, nzc.CreateMode.EPHEMERAL_SEQUENTIAL, (e, p) => d(e, p as string)),
    ensure: (path, data, eph, d) =>
      c.create(path, buf(data), nzc.ACL.OPEN_ACL_UNSAFE, eph ? nzc.CreateMode.EPHEMERAL : nzc.CreateMode.PERSISTENT, (e) =>
        d(e && e.getCode?.() === nzc.Exception.NODE_EXISTS ? null : e),
      ),
    remove: (path, d) => c.remove(path, -1, (e) => d(e)),
    watchData: (path, onChange, d) => c.getData(path, () => onChange(), (e) => d(e)),
    close: () =>
      new Promise<void>((resolve) => {
        c.once("disconnected", resolve);
        c.close();
      }),
  };
}

export const driver: Driver = {
  peer: "node-zookeeper-client",
  connect: (cs) =>
    new Promise((resolve) => {
      const c = nzc.createClient(cs, { sessionTimeout: 30_000, retries: 0 });
      c.once("connected", () => resolve(adapt(c)));
      c.connect();
    }),
};

await main(driver, "node");
