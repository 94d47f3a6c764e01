// The four designs `npm run demo -- --compare` puts side by side, in the order of the table.
import { leaderElection } from "./leader-election.ts";
import type { Design } from "./machine.ts";
import { raceForMaster } from "./race-for-master.ts";
import { sortedChildren } from "./sorted-children.ts";
import { watchPredecessor } from "./watch-predecessor.ts";

export const DESIGNS = {
  "sorted-children": sortedChildren,
  "race-for-master": raceForMaster,
  "watch-predecessor": watchPredecessor,
  "leader-election": leaderElection,
} satisfies Record<string, Design>;

export type DesignName = keyof typeof DESIGNS;
export const DESIGN_NAMES = Object.keys(DESIGNS) as DesignName[];
