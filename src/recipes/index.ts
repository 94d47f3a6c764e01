// zookeeper-ts/recipes: leader election, group membership, locks and the tree cache, built on the public client only.
export { LeaderElection } from "./leader-election.ts";
export type { LeaderElectionEvents, LeaderElectionOptions, Participant, RevokeReason } from "./leader-election.ts";
export { GroupMember } from "./group-member.ts";
export type { GroupMemberEvents, GroupMemberOptions, Member } from "./group-member.ts";
export { Lock } from "./lock.ts";
export type { LockEvents, LockLostReason, LockOptions } from "./lock.ts";
export { ReadWriteLock } from "./read-write-lock.ts";
export type { ReadWriteLockOptions } from "./read-write-lock.ts";
export { Semaphore } from "./semaphore.ts";
export type { LeaseLostReason, SemaphoreLease, SemaphoreLeaseEvents, SemaphoreOptions } from "./semaphore.ts";
export type { ElectionProtocol, LockNaming } from "./naming.ts";
export { TreeCache } from "./tree-cache.ts";
export { ElectionClosedError, LeadershipTimeoutError, LockNotHeldError, LockNotReentrantError, LockReleasedError, LockTimeoutError, LockUpgradeError, MemberIdTakenError, NotLeaderError, RecipeStateError, SemaphoreTimeoutError } from "./errors.ts";
export type { ElectionEndReason } from "./errors.ts";
export type { CachedNode, TreeCacheEvents, TreeCacheOptions } from "./tree-cache.ts";
