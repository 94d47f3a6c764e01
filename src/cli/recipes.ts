// zkts leader / members: read a LeaderElection (or Curator LeaderLatch) election and a GroupMember
// group through the recipes' own reading (participants(), members()), without joining either.
import { GroupMember, LeaderElection } from "../index.ts";
import { Failure } from "./errors.ts";
import type { Run } from "./command.ts";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

export const commands: Record<string, Run> = {
  async leader(ctx, a) {
    // Never started: participants() only reads the election's children and their data.
    const election = new LeaderElection(ctx.zk, a.positionals[0], { id: "" });
    const all = await election.participants();
    if (all.length === 0) throw new Failure(`no leader (${a.positionals[0]})`);
    const shown = a.values.all === true ? all : all.slice(0, 1);
    ctx.out.result(a.values.all === true ? shown : shown[0], shown.map((p) => p.id));
  },

  async members(ctx, a) {
    const group = new GroupMember(ctx.zk, a.positionals[0], { id: "zkts" }); // never joined: members() only reads
    const members = await group.members();
    ctx.out.result(members.map((m) => ({ id: m.id, data: m.data === null ? null : decoder.decode(m.data) })), members.map((m) => m.id));
  },
};
