// zkts with SASL GSSAPI against a real MIT KDC (test/support/secure/kdc.ts: a realm in a temporary directory)
// and a real Kerberized ZooKeeper 3.8.0 server: --sasl-mechanism GSSAPI with --keytab/--principal, the
// ccache of $KRB5CCNAME written by the real `kinit -k -t`, whoami's sasl identity, a sasl: ACL another
// principal cannot read, refused logins (exit 1, the reason on stderr) and usage errors (exit 2, one line).
// Under CI=true a missing KDC package fails the file instead of skipping it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import process from "node:process";
import { it } from "../support/bdd.ts";
import { afterAll, beforeAll } from "../support/secure/secure-hooks.ts";
import { zkts } from "../support/processes/cli-run.ts";
import { describeWithKdc, startRealm, type Realm } from "../support/secure/kdc.ts";

const NODE = `/cli-krb-${randomUUID()}`;

/** Prints a failure's stderr for the table. */
function show(what: string, err: string): void {
  process.stderr.write(`[cli-kerberos] ${what}: ${err.split("\n")[0]}\n`);
}

describeWithKdc("zkts with SASL GSSAPI (real KDC, Kerberized ZooKeeper 3.8.0)", "cli-kerberos", () => {
  let realm: Realm;
  /** The server by name: the service principal's host defaults to the connect string's (zookeeper/localhost). */
  let server: string;
  // No inherited Kerberos settings: each case says what it uses.
  const clean = { KRB5_CONFIG: undefined, KRB5CCNAME: undefined };
  const keytabArgs = (principal: string, keytab: string): string[] => [
    "--server", server, "--sasl-mechanism", "GSSAPI", "--keytab", keytab, "--principal", principal, "--krb5-config", realm.kdc.krb5Conf,
  ];

  beforeAll(async () => {
    realm = await startRealm();
    server = `localhost:${realm.srv.server.clientPort}`;
  }, 120_000);

  afterAll(() => realm?.close(), 60_000);

  it("a keytab login: whoami prints sasl:alice@REALM; a node under a sasl: ACL is created and read back", async () => {
    const who = await zkts([...keytabArgs(realm.alice, realm.aliceKeytab), "whoami"], { env: clean });
    assert.equal(who.code, 0, who.err);
    assert.match(who.out, new RegExp(`^sasl:${realm.alice.replace(/\./g, "\\.")}$`, "m"));
    const json = await zkts([...keytabArgs(realm.alice, realm.aliceKeytab), "--json", "whoami"], { env: clean });
    assert.ok((JSON.parse(json.out) as { scheme: string; id: string }[]).some((i) => i.scheme === "sasl" && i.id === realm.alice), json.out);
    const made = await zkts([...keytabArgs(realm.alice, realm.aliceKeytab), "create", NODE, "krb"], { env: clean });
    assert.deepEqual([made.code, made.out, made.err], [0, `${NODE}\n`, ""]);
    const acl = await zkts([...keytabArgs(realm.alice, realm.aliceKeytab), "setacl", NODE, `sasl:${realm.alice}:cdrwa`], { env: clean });
    assert.equal(acl.code, 0, acl.err);
    const got = await zkts([...keytabArgs(realm.alice, realm.aliceKeytab), "get", NODE], { env: clean });
    assert.deepEqual([got.code, got.out], [0, "krb"]);
  }, 60_000);

  it("the principal is the keytab's when --principal is left out", async () => {
    const who = await zkts(["--server", server, "--sasl-mechanism", "GSSAPI", "--keytab", realm.bobKeytab, "whoami"], { env: { ...clean, KRB5_CONFIG: realm.kdc.krb5Conf } });
    assert.equal(who.code, 0, who.err);
    assert.match(who.out, new RegExp(`^sasl:${realm.bob.replace(/\./g, "\\.")}$`, "m"));
  }, 30_000);

  it("the ccache of $KRB5CCNAME written by kinit -k -t, with $KRB5_CONFIG: no keytab on the command line", async () => {
    const ccache = realm.kdc.kinit(realm.alice, realm.aliceKeytab, "alice-cli.cc");
    const env = { KRB5_CONFIG: realm.kdc.krb5Conf, KRB5CCNAME: `FILE:${ccache}` };
    const who = await zkts(["--server", server, "--sasl-mechanism", "GSSAPI", "whoami"], { env });
    assert.equal(who.code, 0, who.err);
    assert.match(who.out, new RegExp(`^sasl:${realm.alice.replace(/\./g, "\\.")}$`, "m"));
    const got = await zkts(["--server", server, "--sasl-mechanism", "GSSAPI", "get", NODE], { env });
    assert.deepEqual([got.code, got.out], [0, "krb"]);
  }, 30_000);

  it("another principal gets NOAUTH on the sasl: ACL (exit 1)", async () => {
    const got = await zkts([...keytabArgs(realm.bob, realm.bobKeytab), "get", NODE], { env: clean });
    show("bob reads alice's node", got.err);
    assert.equal(got.code, 1);
    assert.match(got.err, /^NOAUTH/);
  }, 30_000);

  it("refused logins: exit 1 with AUTHFAILED and the reason (unknown client, unknown service, no ccache)", async () => {
    const carol = `carol@${realm.kdc.realm}`;
    const unknown = await zkts([...keytabArgs(carol, realm.aliceKeytab), "whoami"], { env: clean });
    show("principal not in the keytab", unknown.err);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^AUTHFAILED/);
    assert.match(unknown.err, /carol@ZKTS\.TEST/);

    const service = await zkts([...keytabArgs(realm.alice, realm.aliceKeytab), "--sasl-service-host", "nohost", "whoami"], { env: clean });
    show("unknown service principal", service.err);
    assert.equal(service.code, 1);
    assert.match(service.err, /^AUTHFAILED/);
    assert.match(service.err, /zookeeper\/nohost@ZKTS\.TEST/);

    const absent = join(realm.kdc.dir, "absent.cc");
    const none = await zkts(["--server", server, "--sasl-mechanism", "GSSAPI", "whoami"], { env: { KRB5_CONFIG: realm.kdc.krb5Conf, KRB5CCNAME: absent } });
    show("no ccache", none.err);
    assert.equal(none.code, 1);
    assert.match(none.err, /^AUTHFAILED/);
    assert.match(none.err, /no credentials cache at .*absent\.cc \(\$KRB5CCNAME\): run kinit, or give a keytab/);
  }, 60_000);

  it("usage errors are exit 2 with a one-line reason first, before any connection", async () => {
    const cases: [string[], RegExp][] = [
      [["--keytab", realm.aliceKeytab, "whoami"], /^zkts: --keytab needs --sasl-mechanism GSSAPI$/],
      [["--principal", realm.alice, "whoami"], /^zkts: --principal needs --sasl-mechanism GSSAPI$/],
      [["--sasl-user", "alice", "--krb5-config", realm.kdc.krb5Conf, "whoami"], /^zkts: --krb5-config needs --sasl-mechanism GSSAPI$/],
      [["--sasl-mechanism", "PLAIN", "whoami"], /^zkts: --sasl-mechanism must be DIGEST-MD5 or GSSAPI, got "PLAIN"$/],
      [["--sasl-mechanism", "GSSAPI", "--sasl-user", "alice", "whoami"], /^zkts: --sasl-user is for DIGEST-MD5, not --sasl-mechanism GSSAPI \(use --principal\)$/],
      [["--sasl-mechanism", "DIGEST-MD5", "whoami"], /^zkts: --sasl-mechanism DIGEST-MD5 needs --sasl-user$/],
      [["--sasl-mechanism", "GSSAPI", "--keytab", join(realm.kdc.dir, "absent.keytab"), "whoami"], /^zkts: --keytab: cannot read .*absent\.keytab/],
    ];
    for (const [args, reason] of cases) {
      // An unreachable server: a usage error must not get as far as connecting.
      const r = await zkts(["--server", "127.0.0.1:1", "--timeout", "1000", ...args], { env: clean });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.err}`);
      assert.match(r.err.split("\n")[0], reason);
    }
    const help = await zkts(["--help"]);
    assert.equal(help.code, 0);
    for (const o of ["--sasl-mechanism GSSAPI", "--keytab FILE", "--principal NAME", "--krb5-config FILE", "--sasl-service-name NAME", "--sasl-service-host HOST"]) {
      assert.ok(help.out.includes(o), `help lacks ${o}`);
    }
  }, 60_000);
});
