// zookeeper-ts/recipes: leader election and group membership, built on the public client only.
export { LeaderElection } from "./leader-election.ts";
export type { LeaderElectionEvents, LeaderElectionOptions, Participant, RevokeReason } from "./leader-election.ts";
export { GroupMember } from "./group-member.ts";
export type { GroupMemberEvents, GroupMemberOptions, Member } from "./group-member.ts";
