// Transient is not final (issue 40 item 6): a Kerberos failure that may pass fails one reconnect attempt, the
// session stays "disconnected" and the next attempt tries again at the session's usual pace, so the session
// still alive on the server is kept; only a definite refusal ends the client (authFailed). Against a real MIT
// KDC (test/support/secure/kdc.ts) and a real Kerberized ZooKeeper 3.8.0, each link cut by a fault proxy:
//   (a) a ccache truncated (kinit rewriting it in place) during a reconnect, then restored;
//   (b) the KDC stopped during a reconnect that needs new tickets (a principal with a 15 s ticket life), then restarted;
//   (c) the client principal deleted from the KDC before such a reconnect: authFailed, naming it.
// Each case records the client's states and its failed attempts in order, and prints them.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure/secure-hooks.ts";
import { ErrorCode, ZooKeeper, ZooKeeperError, type ConnectOptions } from "../../src/index.ts";
import { startFaultProxy, type FaultProxy } from "../support/fakes/fault-proxy.ts";
import { ClientTrace, describeWithKdc, startRealm, type Realm } from "../support/secure/kdc.ts";
import { until, untilState } from "../support/wait.ts";

const TAG = "kerberos-transient";

describeWithKdc("Kerberos failures that may pass are retried; definite refusals end the client (real KDC, ZooKeeper 3.8.0)", TAG, () => {
  let realm: Realm;
  let proxy: FaultProxy;
  async function connect(options: ConnectOptions, trace: ClientTrace): Promise<ZooKeeper> {
    const zk = realm.track(await ZooKeeper.connect(proxy.connectString, { connectTimeout: 10_000, sessionTimeout: 40_000, logger: trace.logger, ...options }));
    trace.watch(zk);
    return zk;
  }
  /**
   * A client of a new principal whose tickets live 15 s, once they are past their renewal point (80% of that):
   * its next login needs the KDC (AS and TGS).
   */
  async function staleClient(name: string): Promise<{ zk: ZooKeeper; trace: ClientTrace; who: string }> {
    const who = `${name}@${realm.kdc.realm}`;
    realm.kdc.addPrincipal(who, { requiresPreauth: true, maxLife: "15 seconds" });
    const keytab = realm.kdc.ktadd(who, `${name}.keytab`);
    const trace = new ClientTrace(TAG);
    const zk = await connect({ sasl: { mechanism: "GSSAPI", principal: who, keytab, krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost" } }, trace);
    const loggedIn = Date.now();
    await until("the tickets to pass 80% of their life", () => Date.now() > loggedIn + 12_500, 20_000, 100);
    return { zk, trace, who };
  }

  /**
   * Cuts the link while a fault is on: two reconnect attempts must fail with `failure` and the session stay
   * disconnected; then `heal`, and the client must be connected again with no other state between.
   */
  async function rideOut(zk: ZooKeeper, trace: ClientTrace, what: string, failure: RegExp, heal: () => unknown): Promise<void> {
    try {
      proxy.cut();
      await untilState(zk, "disconnected");
      await until(`two reconnect attempts to fail with ${failure}`, () => trace.failures(failure) >= 2 || zk.state === "authFailed", 30_000, 20);
      if (zk.state !== "disconnected") trace.print(`${what}: not retried`);
      assert.equal(zk.state, "disconnected");
    } finally {
      await heal();
    }
    await untilState(zk, "connected", 20_000);
    trace.print(`${what}, then healed`);
    await zk.exists("/");
    assert.deepEqual(trace.states(), ["connected", "disconnected", "connected"]);
  }

  beforeAll(async () => {
    realm = await startRealm();
    proxy = await startFaultProxy("127.0.0.1", realm.srv.server.clientPort);
  }, 120_000);

  afterAll(async () => {
    await proxy?.close();
    await realm?.close();
  }, 60_000);

  it("(a) a ccache truncated during a reconnect: attempts fail, the session stays disconnected; restored, the same session is back", async () => {
    const ccache = realm.kdc.kinit(realm.alice, realm.aliceKeytab, "transient.cc");
    // The service ticket in the ccache too (as kinit + kvno, or a JVM sharing it, leave it): each login reads it there.
    execFileSync("kvno", ["-c", `FILE:${ccache}`, realm.srv.principal], { env: realm.kdc.env, stdio: ["ignore", "pipe", "pipe"] });
    const trace = new ClientTrace(TAG);
    const zk = await connect({ sasl: { mechanism: "GSSAPI", ccache: `FILE:${ccache}`, krb5Config: realm.kdc.krb5Conf, serviceHost: "localhost" } }, trace);
    const session = zk.sessionId;
    await zk.exists("/");
    const whole = readFileSync(ccache);
    writeFileSync(ccache, whole.subarray(0, 20)); // kinit half way through rewriting it in place
    await rideOut(zk, trace, "(a) ccache truncated", /cannot use the ccache/, () => writeFileSync(ccache, whole));
    assert.equal(zk.sessionId, session);
  }, 60_000);

  it("(b) the KDC down during a reconnect that needs new tickets: attempts fail, then the same session is back once it is up", async () => {
    const { zk, trace } = await staleClient("kdcdown");
    const session = zk.sessionId;
    await realm.kdc.stop();
    await rideOut(zk, trace, "(b) KDC stopped", /no KDC of realm/, () => realm.kdc.start());
    assert.equal(zk.sessionId, session);
  }, 90_000);

  it("(c) a definite refusal: the client principal deleted from the KDC before a reconnect that needs it ends the client (authFailed)", async () => {
    const { zk, trace, who } = await staleClient("deleted");
    realm.kdc.kadmin(`delprinc -force ${who}`);
    proxy.cut();
    await untilState(zk, "authFailed", 20_000);
    const e = await zk.exists("/").then(() => null, (err: unknown) => err);
    trace.events.push(`then exists(): ${String(e)}`);
    trace.print("(c) client principal deleted");
    assert.deepEqual(trace.states(), ["connected", "disconnected", "authFailed"]);
    assert.ok(e instanceof ZooKeeperError && e.code === ErrorCode.AUTHFAILED, String(e));
  }, 60_000);
});
