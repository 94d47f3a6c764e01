// zookeeper-ts: the client, the constants of the protocol, and the recipes.
export * from "./client/index.ts";
export {
  AddWatchMode,
  CreateMode,
  ErrorCode,
  EventType,
  KeeperState,
  Perms,
  WatcherType,
  errorCodeName,
  eventTypeName,
  keeperStateName,
} from "./protocol/constants.ts";
export type { ACL, Id, Stat } from "./protocol/records.ts";
export * from "./recipes/index.ts";
