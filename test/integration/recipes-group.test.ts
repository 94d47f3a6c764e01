// GroupMember against a real server: join, leave and a member's crash (its client closing) turn into
// "change" events with the right lists; a member whose znode is deleted while its session lives rejoins.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ErrorCode, ZooKeeper, ZooKeeperError } from "../../src/index.ts";
import { GroupMember, type Member } from "../../src/recipes/index.ts";
import { SharedSessions, removeRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";

const root = `/t-recipes-group-${randomUUID().slice(0, 8)}`;
const sessions = new SharedSessions();
const client = (): Promise<ZooKeeper> => sessions.client();

const text = (m: Member[]) => m.map((x) => `${x.id}=${x.data ? new TextDecoder().decode(x.data) : "null"}`).join(",");

/** Every "change" list a member sees, as text. */
function changes(g: GroupMember): string[] {
  const seen: string[] = [];
  g.on("change", (m) => seen.push(text(m)));
  return seen;
}

describe("GroupMember", () => {
  sessions.hooks(async () => removeRoot(await sessions.client(), root)); // the run's nodes are all below root

  it("join, leave and crash produce change events with the sorted member lists", async () => {
    const path = `${root}/workers`;
    const leaderSide = new GroupMember(await client(), path, { id: "a-leader", data: "lead" });
    const seen = changes(leaderSide);
    await leaderSide.join();
    await until("first list", () => seen.at(-1) === "a-leader=lead");
    const cZk = await client();
    const c = new GroupMember(cZk, path, { id: "c", data: "10.0.0.3:80" });
    const b = new GroupMember(await client(), path, { id: "b", data: new Uint8Array([0x62]) });
    await c.join();
    await until("c joined", () => seen.at(-1) === "a-leader=lead,c=10.0.0.3:80");
    await b.join();
    await until("b joined", () => seen.at(-1) === "a-leader=lead,b=b,c=10.0.0.3:80");
    assert.deepEqual((await b.members()).map((m) => m.id), ["a-leader", "b", "c"]);
    await b.leave();
    await until("b left", () => seen.at(-1) === "a-leader=lead,c=10.0.0.3:80");
    await cZk.close(); // a crash as the server sees it: the session ends, its ephemeral goes
    await until("c gone", () => seen.at(-1) === "a-leader=lead");
    assert.deepEqual(seen, ["a-leader=lead", "a-leader=lead,c=10.0.0.3:80", "a-leader=lead,b=b,c=10.0.0.3:80", "a-leader=lead,c=10.0.0.3:80", "a-leader=lead"]);
    await leaderSide.leave();
    assert.deepEqual(await leaderSide.members(), []);
  }, 30_000);

  it("a member whose znode is deleted while its session lives joins again", async () => {
    const path = `${root}/rejoin`;
    const a = new GroupMember(await client(), path, { id: "a", data: null });
    const b = new GroupMember(await client(), path, { id: "b" });
    await a.join();
    await b.join();
    const admin = await client();
    await admin.delete(`${path}/b`);
    await until("b is back", async () => (await admin.exists(`${path}/b`)) !== null, 5000);
    assert.equal(text(await a.members()), "a=null,b=null");
    await a.leave();
    await b.leave();
  }, 30_000);

  it("an id held by another session is refused with NODEEXISTS", async () => {
    const path = `${root}/taken`;
    const first = new GroupMember(await client(), path, { id: "same" });
    await first.join();
    const second = new GroupMember(await client(), path, { id: "same" });
    await assert.rejects(second.join(), (e: unknown) => e instanceof ZooKeeperError && e.code === ErrorCode.NODEEXISTS);
    await first.leave();
    await second.join();
    await second.leave();
  }, 30_000);
});
