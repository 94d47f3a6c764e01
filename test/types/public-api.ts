// Type test of the public API (not run, only compiled): `npm test` type-checks it against the sources
// (the strict typecheck) and against the built package's .d.ts (scripts/readme-samples.mjs, the "readme+types"
// step). Every `@ts-expect-error` line must be an error: a wrong number where a literal union is expected, a wrong
// name, a missing argument. If one of them compiled, tsc would report the unused directive.
import {
  AddWatchMode,
  CreateMode,
  ErrorCode,
  EventType,
  KeeperState,
  Op,
  Perms,
  WatcherType,
  ZooKeeper,
  ZooKeeperError,
  isZooKeeperError,
  defaultTransport,
  systemClock,
  type Clock,
  type EventTypeName,
  type KeeperStateName,
  type OpResult,
  type SessionState,
  type Transport,
  type WatchedEvent,
} from "zookeeper-ts";
import { GroupMember, LeaderElection, type RevokeReason } from "zookeeper-ts/recipes";

declare const zk: ZooKeeper;
const watcher = (_e: WatchedEvent): void => {};

export async function modes(): Promise<void> {
  await zk.create("/a", "x", { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
  await zk.create("/a", "x", { mode: 3 }); // a literal that is a CreateMode is fine
  // @ts-expect-error 42 is no CreateMode
  await zk.create("/a", "x", { mode: 42 });
  // @ts-expect-error a number variable could be anything
  await zk.create("/a", "x", { mode: Number("1") });
  // @ts-expect-error -1 is no CreateMode
  await zk.create("/a", "x", { mode: -1 });
  Op.create("/a", "x", { mode: CreateMode.PERSISTENT });
  // @ts-expect-error ops take the same CreateMode
  Op.create("/a", "x", { mode: 7 });
}

export async function watches(): Promise<void> {
  await zk.addWatch("/a", AddWatchMode.PERSISTENT_RECURSIVE, watcher);
  // @ts-expect-error 2 is no AddWatchMode
  await zk.addWatch("/a", 2, watcher);
  await zk.removeWatches("/a", watcher, WatcherType.Data);
  // @ts-expect-error 0 is no WatcherType
  await zk.removeWatches("/a", watcher, 0);
  // @ts-expect-error 9 is no WatcherType
  await zk.removeAllWatches("/a", 9);
  // @ts-expect-error the watcher type is required
  await zk.removeAllWatches("/a");
}

export function events(e: WatchedEvent): void {
  const t: EventType = e.type;
  const s: KeeperState = e.state;
  // @ts-expect-error 8 is no EventType, so it never equals one
  if (e.type === 8) return;
  // @ts-expect-error 1 is no KeeperState
  if (e.state === 1) return;
  const tn: EventTypeName = e.typeName;
  const sn: KeeperStateName = e.stateName;
  // @ts-expect-error the names are literal unions: "NodeChanged" is none of them
  if (e.typeName === "NodeChanged") return;
  // @ts-expect-error "Connected" is no KeeperState name (SyncConnected is)
  if (e.stateName === "Connected") return;
  void t;
  void s;
  void tn;
  void sn;
}

export function errors(e: unknown, r: OpResult): void {
  if (isZooKeeperError(e, ErrorCode.NONODE)) {
    const c: ErrorCode = e.code;
    void c;
  }
  // @ts-expect-error -1000 is no ErrorCode
  isZooKeeperError(e, -1000);
  // @ts-expect-error 12 is no ErrorCode
  new ZooKeeperError(12, "made up");
  if (r.type === "error") {
    const c: ErrorCode = r.code;
    void c;
  }
}

export function states(): void {
  zk.on("state", (s: SessionState) => void s);
  const ok: SessionState = "connectedReadOnly";
  // @ts-expect-error states are names, not KeeperState numbers
  const bad: SessionState = 3;
  // @ts-expect-error and only the session's own names
  const typo: SessionState = "conected";
  void ok, bad, typo;
}

export function permissions(): void {
  // Permissions are a bit mask: any combination of Perms is a number, so `perms` stays a number.
  const acl = [{ perms: Perms.READ | Perms.WRITE, id: { scheme: "world", id: "anyone" } }];
  // @ts-expect-error there is no Perms.EXECUTE
  void Perms.EXECUTE;
  void zk.setACL("/a", acl);
}

export function recipes(): void {
  const election = new LeaderElection(zk, "/election", { id: "n1" });
  election.on("revoked", (reason: RevokeReason) => void reason);
  // @ts-expect-error revokeOn is "disconnected" or "expired"
  new LeaderElection(zk, "/election", { id: "n1", revokeOn: "never" });
  // @ts-expect-error an event the election does not emit
  election.on("leader", () => {});
  new GroupMember(zk, "/group", { id: "m1" });
}

export async function transportAndClock(): Promise<void> {
  const transport: Transport = { connect: (target, handlers, options) => defaultTransport.connect(target, handlers, options) };
  const clock: Clock = { now: () => systemClock.now(), setTimeout: (fn, ms) => systemClock.setTimeout(fn, ms), clearTimeout: (h) => systemClock.clearTimeout(h) };
  const c = await ZooKeeper.connect("127.0.0.1:2181", { transport, clock });
  const fresh: boolean = c.heardWithin(c.readTimeout);
  const left: number = c.leaseRemaining();
  void [fresh, left, c.clock.now()];
  // @ts-expect-error a transport is an object with connect(), not a function
  await ZooKeeper.connect("127.0.0.1:2181", { transport: defaultTransport.connect });
  // @ts-expect-error a clock needs setTimeout and clearTimeout
  await ZooKeeper.connect("127.0.0.1:2181", { clock: { now: () => 0 } });
}
