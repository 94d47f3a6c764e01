// The dynamic configuration's server lines, as every server line writes them (issue 42 item 2): a table of
// line -> parsed server, and the connect string the whole config gives. The 3.8.0 and 3.9 texts are what real
// servers returned for /zookeeper/config (ReconfigEnsemble.start(3), and a static ensemble without
// reconfigEnabled, whose lines name no client address); the other forms follow QuorumPeer.QuorumServer's
// grammar: ";clientPort", ";host:clientPort", a second ";" field for the TLS port (";;securePort" when the
// server has no plain port), "a|b" multi-address (3.6+), IPv6 in brackets, ":participant"/":observer".
import { describe, it } from "../support/bdd.ts";
import assert from "node:assert/strict";
import console from "node:console";
import { type ConfigServer, parseConfig, parseServer } from "../../src/client/config-ops.ts";
import type { Stat } from "../../src/index.ts";

const STAT: Stat = { czxid: 0n, mzxid: 0n, ctime: 0, mtime: 0, version: 0, cversion: 0, aversion: 0, ephemeralOwner: 0n, dataLength: 0, numChildren: 0, pzxid: 0n };
const config = (text: string) => parseConfig(new TextEncoder().encode(text), STAT);

/** line value -> what the parsed server should hold (beyond its id); null: the line does not read. */
const TABLE: Array<[value: string, want: Partial<ConfigServer> | null]> = [
  // 3.8.0 and 3.9 with reconfigEnabled (the harness's ReconfigEnsemble): role and host:clientPort.
  ["127.0.0.1:14695:28806:participant;127.0.0.1:20598", { host: "127.0.0.1", quorumPort: 14695, electionPort: 28806, role: "participant", client: "127.0.0.1:20598" }],
  // A static ensemble (clientPort in zoo.cfg): no client address in the dynamic config.
  ["127.0.0.1:31090:16324:participant", { host: "127.0.0.1", role: "participant", client: undefined }],
  ["zk1:2888:3888", { host: "zk1", quorumPort: 2888, electionPort: 3888, role: "participant", client: undefined }],
  ["zk1:2888:3888;2181", { client: "zk1:2181" }],
  ["zk1:2888:3888:observer;0.0.0.0:2181", { role: "observer", client: "zk1:2181" }],
  ["zk1:2888:3888:participant;10.0.0.7:2181", { client: "10.0.0.7:2181" }],
  ["zk1:2888:3888:OBSERVER;2181", { role: "observer" }],
  // TLS-only (3.10 writes it): the client address is the secure one, said by tlsOnly.
  ["zk1:2888:3888:participant;;2281", { client: "zk1:2281", secureClient: "zk1:2281", tlsOnly: true }],
  ["zk1:2888:3888:participant;;10.0.0.7:2281", { client: "10.0.0.7:2281", tlsOnly: true }],
  ["zk1:2888:3888:participant;2181;2281", { client: "zk1:2181", secureClient: "zk1:2281", tlsOnly: undefined }],
  ["zk1:2888:3888:participant;plain:zk1:2181;secure:zk1:2281", { client: "zk1:2181", secureClient: "zk1:2281" }],
  ["zk1:2888:3888:participant;secure:zk1:2281", { client: "zk1:2281", tlsOnly: true }],
  // Multi-address (3.6+): every quorum address kept; the client address as given, else the first host's.
  ["10.0.0.1:2888:3888|10.0.1.1:2888:3888:participant;10.0.0.1:2181", {
    host: "10.0.0.1",
    addresses: [{ host: "10.0.0.1", quorumPort: 2888, electionPort: 3888 }, { host: "10.0.1.1", quorumPort: 2888, electionPort: 3888 }],
    role: "participant",
    client: "10.0.0.1:2181",
  }],
  ["a:1:2:observer|b:3:4:observer;2181", { role: "observer", client: "a:2181", addresses: [{ host: "a", quorumPort: 1, electionPort: 2 }, { host: "b", quorumPort: 3, electionPort: 4 }] }],
  // IPv6 in brackets, everywhere.
  ["[::1]:2888:3888:participant;[::1]:2181", { host: "::1", quorumPort: 2888, electionPort: 3888, client: "[::1]:2181" }],
  ["[2001:db8::1]:2888:3888;2181", { host: "2001:db8::1", client: "[2001:db8::1]:2181" }],
  ["[2001:db8::1]:2888:3888:participant;[::]:2181", { client: "[2001:db8::1]:2181" }],
  ["[fe80::1]:2888:3888|[fe80::2]:2888:3888;;[fe80::1]:2281", { addresses: [{ host: "fe80::1", quorumPort: 2888, electionPort: 3888 }, { host: "fe80::2", quorumPort: 2888, electionPort: 3888 }], client: "[fe80::1]:2281", tlsOnly: true }],
  // Words after the role that a later server may add are not fatal.
  ["zk1:2888:3888:participant:cert:SHA-256-AB;2181", { role: "participant", client: "zk1:2181" }],
  // Lines that do not read: kept in `other`, never fatal.
  ["zk1:2888", null],
  ["zk1:x:3888;2181", null],
  ["[::1:2888:3888", null],
  ["zk1:2888:3888;2181;2281;9", null],
  ["zk1:2888:3888;host:port", null],
];

const q = (a: { host: string; quorumPort: number; electionPort: number }): string => `${a.host.includes(":") ? `[${a.host}]` : a.host}:${a.quorumPort}:${a.electionPort}`;

function row(value: string, s: ConfigServer | null): string {
  if (s === null) return `${value.padEnd(72)} -> (kept in other)`;
  const extra = [s.addresses.length > 1 ? `addresses ${s.addresses.map(q).join("|")}` : "", s.secureClient ? `secure ${s.secureClient}` : "", s.tlsOnly ? "tlsOnly" : ""].filter(Boolean).join(", ");
  return `${value.padEnd(72)} -> ${q(s)} ${s.role} client ${s.client ?? "-"}${extra ? `; ${extra}` : ""}`;
}

describe("parseConfig: the dynamic configuration's server lines", () => {
  it("reads every form of server line (the table)", () => {
    const lines: string[] = [];
    for (const [value, want] of TABLE) {
      const s = parseServer(7, value);
      lines.push(row(value, s));
      if (want === null) {
        assert.equal(s, null, value);
        continue;
      }
      assert.ok(s, `${value} reads`);
      assert.equal(s.id, 7);
      for (const [k, v] of Object.entries(want)) assert.deepEqual((s as unknown as Record<string, unknown>)[k], v, `${value}: ${k}`);
      assert.deepEqual([s.host, s.quorumPort, s.electionPort], [s.addresses[0]!.host, s.addresses[0]!.quorumPort, s.addresses[0]!.electionPort]);
    }
    console.log(`[config-parse]\n${lines.join("\n")}`);
  });

  it("a real 3.9 config with reconfigEnabled: servers, version and the connect string", () => {
    const c = config("server.1=127.0.0.1:29397:26252:participant;127.0.0.1:16603\nserver.2=127.0.0.1:21038:25414:participant;127.0.0.1:14018\nserver.3=127.0.0.1:15733:18806:participant;127.0.0.1:27298\nversion=100000000");
    assert.deepEqual(c.servers.map((s) => s.id), [1, 2, 3]);
    assert.equal(c.version, 0x100000000n);
    assert.equal(c.connectString, "127.0.0.1:16603,127.0.0.1:14018,127.0.0.1:27298");
    assert.deepEqual(c.other, []);
  });

  it("a static ensemble's config (3.8.0, no client addresses) and a standalone's (empty) give no connect string", () => {
    const c = config("server.1=127.0.0.1:31090:16324:participant\nserver.2=127.0.0.1:20943:18986:participant\nserver.3=127.0.0.1:27372:12713:participant\nversion=0");
    assert.equal(c.servers.length, 3);
    assert.equal(c.version, 0n);
    assert.equal(c.connectString, "");
    const empty = parseConfig(null, STAT);
    assert.deepEqual([empty.servers, empty.connectString, empty.version], [[], "", undefined]);
  });

  it("TLS-only, multi-address, IPv6 and observers together; unknown keys and unreadable lines kept, not fatal", () => {
    const c = config([
      "server.1=zk1:2888:3888:participant;;2281",
      "server.2=10.0.0.2:2888:3888|10.0.1.2:2888:3888:participant;10.0.0.2:2181",
      "server.3=[2001:db8::3]:2888:3888:participant;[2001:db8::3]:2181",
      "server.4=zk4:2888:3888:observer;2181",
      "server.5=nonsense",
      "group.1=1:2:3",
      "weight.1=1",
      "someFutureKey=whatever",
      "version=2a0000000b",
      "",
    ].join("\n"));
    assert.deepEqual(c.servers.map((s) => s.id), [1, 2, 3, 4]);
    assert.equal(c.connectString, "zk1:2281,10.0.0.2:2181,[2001:db8::3]:2181,zk4:2181");
    assert.equal(c.servers[0]!.tlsOnly, true);
    assert.equal(c.servers[3]!.role, "observer");
    assert.deepEqual(c.other, ["server.5=nonsense", "group.1=1:2:3", "weight.1=1", "someFutureKey=whatever"]);
    assert.equal(c.version, 0x2a0000000bn);
  });
});
