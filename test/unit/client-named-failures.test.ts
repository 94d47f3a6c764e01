// Failures that are fast and named, without a server: the default connectTimeout (15 s) and its message when
// every host refused or did not resolve, on a manual clock; the host list's summary; URL-shaped connect strings;
// a closed client's error; credential names without secrets; WatchedEvent names for every number.
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import { ErrorCode, EventType, KeeperState, ZooKeeper, ZooKeeperError, type Link, type LinkHandlers, type Transport } from "../../src/index.ts";
import { parseConnectString } from "../../src/protocol/connect-string.ts";
import { watchedEvent } from "../../src/client/events.ts";
import { HostList } from "../../src/client/session/hosts.ts";
import { credentialName } from "../../src/client/session/priming.ts";
import { identitiesText } from "../../src/client/wire/call-record.ts";
import { endedError } from "../../src/client/session/session-states.ts";
import { ManualClock, settle } from "../support/fakes/fake-clock.ts";

/** Every dial fails at once with the error code given for its host (default ECONNREFUSED). */
class Failing implements Transport {
  readonly dials: string[] = [];
  private readonly codes: Record<string, string>;
  constructor(codes: Record<string, string> = {}) {
    this.codes = codes;
  }
  async connect(target: { host: string; port: number }, _handlers: LinkHandlers): Promise<Link> {
    this.dials.push(`${target.host}:${target.port}`);
    const code = this.codes[target.host] ?? "ECONNREFUSED";
    throw Object.assign(new Error(`connect ${code} ${target.host}:${target.port}`), { code });
  }
}

const err = (code?: string): Error => Object.assign(new Error("x"), code === undefined ? {} : { code });

describe("named failures", () => {
  it("connect() gives up after the default 15 s, saying ECONNREFUSED on every host", async () => {
    const clock = new ManualClock();
    const transport = new Failing();
    const result: { outcome: unknown } = { outcome: "pending" };
    void ZooKeeper.connect("10.0.0.1:2181,10.0.0.2:2181", { transport, clock }).then(
      () => (result.outcome = "connected"),
      (e: unknown) => (result.outcome = e),
    );
    await settle();
    await clock.advance(14_999);
    assert.ok(result.outcome === "pending", "still trying before 15 s");
    assert.ok(new Set(transport.dials).size === 2, "both hosts tried");
    await clock.advance(1);
    await settle();
    const outcome = result.outcome as unknown; // set by the promise, which narrowing does not see
    assert.ok(outcome instanceof ZooKeeperError);
    assert.equal(outcome.code, ErrorCode.CONNECTIONLOSS);
    assert.equal(outcome.message, 'CONNECTIONLOSS: no session established within 15000 ms: ECONNREFUSED on every host of "10.0.0.1:2181,10.0.0.2:2181"; check that ZooKeeper runs and listens on those ports');
  });

  it("a host that fails another way keeps the last error in the message", async () => {
    const clock = new ManualClock();
    const transport = new Failing({ slow: "ETIMEDOUT" });
    const result: { outcome: unknown } = { outcome: "pending" };
    void ZooKeeper.connect("10.0.0.1:2181,slow:2181", { transport, clock, connectTimeout: 5000 }).then(
      () => (result.outcome = "connected"),
      (e: unknown) => (result.outcome = e),
    );
    await settle();
    await clock.advance(5000);
    await settle();
    const outcome = result.outcome as unknown; // set by the promise, which narrowing does not see
    assert.ok(outcome instanceof ZooKeeperError);
    assert.match(outcome.message, /^CONNECTIONLOSS: no session established within 5000 ms; last error: connect (ECONNREFUSED 10\.0\.0\.1|ETIMEDOUT slow):2181$/);
  });

  it("HostList.unreachable: only when every host's last dial was refused or unresolved", () => {
    const a = { host: "a", port: 1 };
    const b = { host: "::1", port: 2 };
    const list = new HostList([a, b]);
    assert.equal(list.unreachable(), null, "nothing tried yet");
    list.failed(a, err("ECONNREFUSED"));
    assert.equal(list.unreachable(), null, "one host not tried");
    list.failed(b, err("ECONNREFUSED"));
    assert.equal(list.unreachable(), 'ECONNREFUSED on every host of "a:1,[::1]:2"; check that ZooKeeper runs and listens on those ports');
    list.failed(b, err("ENOTFOUND"));
    assert.equal(list.unreachable(), "every host refused or did not resolve: a:1 ECONNREFUSED, [::1]:2 ENOTFOUND; check the connect string and that ZooKeeper runs there");
    list.failed(a, err("EAI_AGAIN"));
    list.failed(b, err("EAI_AGAIN"));
    assert.equal(list.unreachable(), 'EAI_AGAIN on every host of "a:1,[::1]:2"; check the host names and DNS');
    list.failed(a, err()); // no code: a timeout, a reset, a custom transport's error
    assert.equal(list.unreachable(), null);
    list.failed(a, err("ECONNREFUSED"));
    list.connected(a);
    assert.equal(list.unreachable(), null, "a connection clears the record");
    list.failed(a, err("ECONNREFUSED"));
    list.failed(b, err("ECONNREFUSED"));
    list.rebalance([{ host: "c", port: 3 }], null);
    assert.equal(list.unreachable(), null, "a new list starts afresh");
  });

  it("a URL-shaped connect string is refused naming the form to use; real connect strings still parse", () => {
    for (const [cs, scheme] of [
      ["http://127.0.0.1:2181", "http"],
      ["zk://h1:2181,h2:2181/app", "zk"],
      ["tcp://127.0.0.1:2181", "tcp"],
      [" https://u:pw@h:2181", "https"],
      ["h1:2181, zk+tls://h2:2181", "zk+tls"],
    ]) {
      assert.throws(() => parseConnectString(cs!), { message: `use host:port[,host:port][/chroot], not a URL (the connect string has "${scheme}://")` }, cs);
    }
    assert.deepEqual(parseConnectString("h1:2181,[::1]:2182/app/x"), { hosts: [{ host: "h1", port: 2181 }, { host: "::1", port: 2182 }], chroot: "/app/x" });
    assert.deepEqual(parseConnectString("h1"), { hosts: [{ host: "h1", port: 2181 }], chroot: "" });
    assert.throws(() => parseConnectString("h1:2181//x"), /invalid chroot/);
  });

  it("a closed client's calls: SESSIONEXPIRED, saying close() was called", () => {
    for (const shown of ["closed", "connected", "disconnected", "connecting"] as const) {
      const e = endedError(shown, { op: "getData", path: "/a" });
      assert.equal(e.code, ErrorCode.SESSIONEXPIRED);
      assert.equal(e.message, "SESSIONEXPIRED (getData /a): the client is closed (close() was called); connect a new client");
    }
    assert.equal(endedError("expired", { op: "exists", path: "/" }).message, "SESSIONEXPIRED (exists /): the session has expired; connect a new client");
    assert.equal(endedError("authFailed", { op: "exists", path: "/" }).message, "AUTHFAILED (exists /): authentication failed; the client is finished");
  });

  it("credentials are named without their secret", () => {
    const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
    assert.equal(credentialName("digest", bytes("alice:s3cret")), 'digest user "alice"');
    assert.equal(credentialName("digest", bytes("alice:pw:with:colons")), 'digest user "alice"');
    assert.equal(credentialName("digest", bytes("no-colon-secret")), "digest (credentials not shown)");
    assert.equal(credentialName("custom", bytes("token-s3cret")), "custom (credentials not shown)");
    assert.equal(identitiesText([]), "no one (world:anyone)");
    assert.equal(identitiesText(["custom (credentials not shown)"]), "custom (credentials not shown)");
    assert.equal(
      identitiesText(['digest user "alice"', 'digest user "alice"', 'sasl user "bob"']),
      'digest user "alice", sasl user "bob" (a wrong digest password is not refused: it gives an identity no ACL names)',
    );
  });

  it("WatchedEvent names every EventType and KeeperState number", () => {
    for (const [typeName, type] of Object.entries(EventType)) {
      for (const [stateName, state] of Object.entries(KeeperState)) {
        assert.deepEqual(watchedEvent(type, state, "/p", undefined), { type, typeName, state, stateName, path: "/p", zxid: undefined });
      }
    }
    assert.deepEqual(Object.keys(watchedEvent(3, 3, "/p", 5n)), ["type", "typeName", "state", "stateName", "path", "zxid"], "printed in this order");
  });
});
