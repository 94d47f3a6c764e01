export { ZooKeeper } from "./zookeeper.ts";
export type { ZooKeeperEvents } from "./zookeeper.ts";
export { ZooKeeperError, isZooKeeperError } from "./errors.ts";
export { Op } from "./op.ts";
export { Transaction } from "./transaction.ts";
export { Ids, digestId } from "./acl.ts";
export type * from "./types.ts";
export { withRetry } from "./helpers.ts";
export type { RetryOptions } from "./helpers.ts";
