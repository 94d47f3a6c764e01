// zookeeper-ts/recipes: leader election, group membership, locks and the tree cache, built on the public client only.
export { LeaderElection } from "./leader-election.ts";
export type { LeaderElectionEvents, LeaderElectionOptions, Participant, RevokeReason } from "./leader-election.ts";
export { GroupMember } from "./group-member.ts";
export type { GroupMemberEvents, GroupMemberOptions, Member } from "./group-member.ts";
export { Lock } from "./lock.ts";
export type { LockEvents, LockLostReason, LockOptions } from "./lock.ts";
export type { ElectionProtocol, LockNaming } from "./naming.ts";
export { TreeCache } from "./tree-cache.ts";
export { ElectionClosedError, LeadershipTimeoutError, LockNotReentrantError, LockReleasedError, LockTimeoutError, MemberIdTakenError, NotLeaderError, RecipeStateError } from "./errors.ts";
export type { ElectionEndReason } from "./errors.ts";
export type { CachedNode, TreeCacheEvents, TreeCacheOptions } from "./tree-cache.ts";
export { Barrier, BarrierTimeoutError, DoubleBarrier } from "./barrier.ts";
export type { BarrierWaitOptions, DoubleBarrierNaming, DoubleBarrierOptions } from "./barrier.ts";
export { SetOutcomeUnknownError, SharedCount } from "./shared-count.ts";
export type { SharedCountEvents, SharedCountNaming, SharedCountOptions, VersionedCount } from "./shared-count.ts";
export { PartitionTimeoutError, SetPartitioner } from "./set-partitioner.ts";
export type { PartitionState, SetPartitionerEvents, SetPartitionerOptions } from "./set-partitioner.ts";
