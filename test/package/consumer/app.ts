// A consumer of the published package (test/package/consumer-types.test.ts type-checks it against the packed
// tarball with TypeScript 5 and 7, module nodenext and bundler, with and without @types/node, and deno check).
// It needs no Node types: every line here must compile with only the package's own .d.ts and the DOM lib.
// The `@ts-expect-error` lines prove the events are typed (an untyped `on` would leave them unused).
import {
  CreateMode,
  ErrorCode,
  Op,
  ZooKeeper,
  defaultTransport,
  isZooKeeperError,
  withRetry,
  type ConnectOptions,
  type ListenerError,
  type SessionState,
  type TlsOptions,
  type Transport,
  type WatchedEvent,
} from "zookeeper-ts";
import { GroupMember, LeaderElection, Lock, TreeCache, type RevokeReason } from "zookeeper-ts/recipes";

const pem = "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";

export const tls: TlsOptions = {
  ca: [pem, new Uint8Array(0)],
  cert: pem,
  key: [{ pem: new Uint8Array(0), passphrase: "secret" }],
  servername: "zk.internal",
  minVersion: "TLSv1.2",
  maxVersion: "TLSv1.3",
  ciphers: "TLS_AES_128_GCM_SHA256",
  checkServerIdentity: (host, cert) => (cert.subject.CN === host ? undefined : new Error(`not ${host}`)),
};

// @ts-expect-error TLS versions are a literal union
export const badVersion: TlsOptions = { minVersion: "TLSv2" };
// @ts-expect-error an unknown option is a typo, not silently ignored
export const typo: TlsOptions = { serverName: "zk" };

// A transport that logs each dial and uses the default one.
const logged: Transport = {
  connect: (target, handlers, options) => {
    console.log(`dial ${target.host}:${target.port}${options.tls ? " (TLS)" : ""}`);
    return defaultTransport.connect(target, handlers, options);
  },
};

export async function client(): Promise<void> {
  const options: ConnectOptions = { tls, sessionTimeout: 10_000, transport: logged };
  const zk = await ZooKeeper.connect("127.0.0.1:2181,127.0.0.1:2182/app", options);
  const onState = (s: SessionState): void => console.log(`state ${s}`);
  zk.on("state", onState).once("listenerError", (info: ListenerError) => console.error(info.source, info.event, info.error));
  zk.prependListener("resumed", () => console.log("resumed"));
  zk.off("state", onState);
  const count: number = zk.listenerCount("state");
  // @ts-expect-error no such event
  zk.on("stat", () => {});
  // @ts-expect-error a "state" listener gets a SessionState, not a number
  zk.on("state", (n: number) => void n);
  // @ts-expect-error "resumed" carries no arguments
  zk.emit("resumed", 1);

  const bytes: Uint8Array = new TextEncoder().encode("v1");
  await zk.create("/a", bytes, { mode: CreateMode.EPHEMERAL });
  const { data, stat } = await zk.getData("/a", (e: WatchedEvent) => console.log(e.typeName, e.path));
  const text: string = new TextDecoder().decode(data ?? new Uint8Array(0));
  await zk.multi([Op.check("/a", stat.version), Op.setData("/a", "v2")]);
  await withRetry(() => zk.exists("/a"), { retries: 3 });
  try {
    await zk.delete("/missing");
  } catch (err) {
    if (isZooKeeperError(err, ErrorCode.NONODE)) console.log(err.code, err.path);
  }
  console.log(count, text);
  await zk.close();
}

export async function recipes(zk: ZooKeeper): Promise<void> {
  const election = new LeaderElection(zk, "/election", { id: "n1" });
  election.on("elected", () => console.log("leading")).on("revoked", (reason: RevokeReason) => console.log(reason));
  // @ts-expect-error an event the election does not emit
  election.on("leader", () => {});
  await election.start();

  const lock = new Lock(zk, "/lock");
  lock.on("lost", (reason) => console.log(reason));
  await lock.acquire();
  await lock.release();

  const member = new GroupMember(zk, "/group", { id: "m1" });
  member.on("change", (members) => console.log(members.map((m) => m.id)));
  await member.join();

  const cache = new TreeCache(zk, "/config");
  cache.on("added", (path, node) => console.log(path, node.data?.byteLength, node.stat.version));
  // @ts-expect-error "changed" listeners get (path, node)
  cache.on("changed", (path: number) => void path);
  await cache.start();
  await Promise.all([election.close(), member.leave(), cache.close()]);
}
