// Design 4: this library's LeaderElection (Curator's LeaderLatch on the wire). Protected create,
// each candidate watches only its predecessor, the leader must own the first znode, and it stops
// calling itself leader at the first doubt about its link.
import { LeaderElection } from "../../../src/index.ts";
import type { Design } from "./machine.ts";

export const leaderElection: Design = async ({ zk, dir, id, report }) => {
  const election = new LeaderElection(zk, dir, { id });
  election.on("elected", () => report.master());
  election.on("revoked", (reason) => report.stepDown(reason));
  election.on("watch", (path) => report.watch(path));
  await election.start();
  if (election.candidatePath) report.own(election.candidatePath);
  return () => election.isLeader;
};
