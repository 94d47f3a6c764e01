// Digest auth and ACLs against a real server: NOAUTH before addAuthInfo and success after,
// CREATOR_ALL_ACL, auth given at connect, auth replayed after a reconnect, refused schemes.
import { describe, it, beforeAll } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { SharedSessions, rejectsWith, removeRoot, uniqueRoot } from "../support/sessions.ts";
import { until } from "../support/wait.ts";
import { Ids, Perms, ZooKeeper, digestId } from "../../src/index.ts";

describe("client auth and ACLs (real server)", () => {
  const sessions = new SharedSessions();
  let anon: ZooKeeper;
  const root = uniqueRoot("auth");
  // root/private is alice's and root/bob bob's (CREATOR_ALL_ACL): listing them, as deleteRecursive does, needs both.
  sessions.hooks(async () => removeRoot(await sessions.client({ auth: [{ scheme: "digest", auth: "alice:secret" }, { scheme: "digest", auth: "bob:pw" }] }), root));

  beforeAll(async () => {
    anon = await sessions.client();
    await anon.create(root);
  });

  it("CREATOR_ALL_ACL needs an authenticated identity (INVALIDACL without one)", async () => {
    await rejectsWith(anon.create(`${root}/noauth`, null, { acl: [...Ids.CREATOR_ALL_ACL] }), "INVALIDACL");
  }, 60_000);

  it("refuses with NOAUTH before addAuthInfo and allows after it", async () => {
    const owner = await sessions.client();
    const guest = await sessions.client();
    await owner.addAuthInfo("digest", "alice:secret");
    const p = `${root}/private`;
    await owner.create(p, "s3cret", { acl: [...Ids.CREATOR_ALL_ACL] });
    const { acl } = await owner.getACL(p);
    assert.deepEqual(acl, [{ perms: Perms.ALL, id: { scheme: "digest", id: digestId("alice", "secret") } }]);
    await rejectsWith(guest.getData(p), "NOAUTH");
    await rejectsWith(guest.setData(p, "x"), "NOAUTH");
    await rejectsWith(guest.create(`${p}/kid`), "NOAUTH");
    await guest.addAuthInfo("digest", "mallory:wrong"); // digest auth never fails; it just adds an identity
    await rejectsWith(guest.getData(p), "NOAUTH");
    await guest.addAuthInfo("digest", new TextEncoder().encode("alice:secret"));
    assert.equal(new TextDecoder().decode((await guest.getData(p)).data!), "s3cret");
    await guest.setData(p, "changed");
    const me = await guest.whoAmI();
    assert.ok(me.some((i) => i.scheme === "digest" && i.id === "alice"), JSON.stringify(me));
    assert.ok(me.some((i) => i.scheme === "digest" && i.id === "mallory"), JSON.stringify(me));
  }, 60_000);

  it("sends auth given at connect and replays it after a reconnect", async () => {
    const p = `${root}/bob`;
    const bob = await sessions.client({ auth: [{ scheme: "digest", auth: "bob:pw" }] });
    await bob.create(p, "b", { acl: [{ perms: Perms.ALL, id: { scheme: "digest", id: digestId("bob", "pw") } }] });
    await bob.close();
    const proxy = await sessions.proxy();
    const c = await sessions.client({ connectString: proxy.connectString, auth: [{ scheme: "digest", auth: "bob:pw" }] });
    assert.equal(new TextDecoder().decode((await c.getData(p)).data!), "b");
    const id = c.sessionId;
    const states: string[] = [];
    c.on("state", (s) => states.push(s));
    proxy.cut();
    // From the event history: a reconnect can be quicker than one polling interval.
    await until("disconnected", () => states.includes("disconnected"));
    // queued while disconnected, released after the replayed AuthPacket: it carries bob's identity
    const queued = c.getData(p);
    await until("a reconnect", () => c.state === "connected", 15_000);
    assert.equal(new TextDecoder().decode((await queued).data!), "b");
    assert.equal(new TextDecoder().decode((await c.getData(p)).data!), "b");
    assert.deepEqual(states, ["disconnected", "connected"]);
    assert.equal(c.sessionId, id);
  }, 60_000);

  it("an unknown auth scheme fails with AUTHFAILED and ends the client", async () => {
    const c = await ZooKeeper.connect(sessions.connectString, { sessionTimeout: 10_000 });
    const states: string[] = [];
    c.on("state", (s) => states.push(s));
    await rejectsWith(c.addAuthInfo("no-such-scheme", "x"), "AUTHFAILED");
    assert.equal(c.state, "authFailed");
    assert.deepEqual(states, ["authFailed"]);
    await rejectsWith(c.exists("/"), "AUTHFAILED");
    await c.close();
    assert.equal(c.state, "authFailed");
  }, 60_000);
});
