// Runner for `zookeeper` (npm, native binding over the Apache C client), through its callback API.
import { createRequire } from "node:module";
import { type Driver, type Session, main } from "./harness.ts";

type RcCb = (rc: number, error: string, ...rest: unknown[]) => void;
interface NativeZk {
  init(config: object): NativeZk;
  once(ev: string, f: () => void): void;
  close(): void;
  a_get(path: string, watch: boolean, cb: RcCb): void;
  aw_get(path: string, watchCb: () => void, cb: RcCb): void;
  a_set(path: string, data: Buffer, version: number, cb: RcCb): void;
  a_create(path: string, data: Buffer, flags: number, cb: RcCb): void;
  a_delete_(path: string, version: number, cb: RcCb): void;
}
interface NativeModule {
  new (config: object): NativeZk;
  constants: { ZOO_EPHEMERAL: number; ZOO_SEQUENCE: number; ZNODEEXISTS: number; ZOO_LOG_LEVEL_ERROR: number };
}
const ZK = createRequire(import.meta.url)("zookeeper") as NativeModule;
const C = ZK.constants;
const buf = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
const err = (rc: number, msg: string): Error | null => (rc === 0 ? null : new Error(`rc ${rc}: ${msg}`));

function adapt(zk: NativeZk): Session {
  return {
    get: (path, d) => zk.a_get(path, false, (rc, e) => d(err(rc, e))),
    set: (path, data, d) => zk.a_set(path, buf(data), -1, (rc, e) => d(err(rc, e))),
    createEphSeq: (prefix, data, d) =>
      zk.a_create(prefix, buf(data), C.ZOO_EPHEMERAL | C.ZOO_SEQUENCE, (rc, e, p) => d(err(rc, e), p as string)),
    ensure: (path, data, eph, d) =>
      zk.a_create(path, buf(data), eph ? C.ZOO_EPHEMERAL : 0, (rc, e) => d(rc === C.ZNODEEXISTS ? null : err(rc, e))),
    remove: (path, d) => zk.a_delete_(path, -1, (rc, e) => d(err(rc, e))),
    watchData: (path, onChange, d) => zk.aw_get(path, () => onChange(), (rc, e) => d(err(rc, e))),
    // zookeeper_close sends closeSession and waits for the reply before returning.
    close: async () => zk.close(),
  };
}

export const driver: Driver = {
  peer: "zookeeper-native",
  connect: (cs) =>
    new Promise((resolve) => {
      const zk = new ZK({ connect: cs, timeout: 30_000, debug_level: C.ZOO_LOG_LEVEL_ERROR, host_order_deterministic: false });
      zk.once("connect", () => resolve(adapt(zk)));
      zk.init({});
    }),
};

await main(driver, "node");
