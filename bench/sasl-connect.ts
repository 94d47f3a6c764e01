// What a SASL login adds to ZooKeeper.connect() (issue 30): the median (and p90) of --rounds (default 20)
// connects, each a new client resolved by connect() then closed, for
//   none           no SASL, against the Kerberized server;
//   GSSAPI keytab  a fresh login each time: AS (with pre-authentication) + TGS at the KDC, then the SASL exchange;
//   GSSAPI ccache  a kinit ccache that already holds the service ticket (kinit + kvno): the SASL exchange only;
//   none (digest)  no SASL, against the DIGEST-MD5 server;
//   DIGEST-MD5     the DIGEST-MD5 exchange.
// The servers are two local ZooKeeper 3.8.0 JVMs started alike (test/support: one Kerberized through a real MIT
// KDC, one with DIGEST-MD5 users; neither enforces SASL), the KDC a real krb5kdc on loopback. The modes are
// interleaved round by round so that drift hits all of them alike.
//   node --import tsx bench/sasl-connect.ts [--rounds 20]       bun bench/sasl-connect.ts       deno run -A bench/sasl-connect.ts
import { execFileSync } from "node:child_process";
import { parseArgs } from "node:util";
import { ZooKeeper, type ConnectOptions } from "../src/index.ts";
import { startKdc } from "../test/support/secure/kdc.ts";
import { startKerberosServer, startSaslServer } from "../test/support/secure/secure-server.ts";

const { values: opt } = parseArgs({ options: { rounds: { type: "string", default: "20" } } });
const ROUNDS = Number(opt.rounds);
const log = (m: string): void => void process.stderr.write(`[sasl-connect] ${m}\n`);
const runtime = "Bun" in globalThis ? "Bun" : "Deno" in globalThis ? "Deno" : "Node";

const kdc = await startKdc();
const closers: (() => Promise<void>)[] = [() => kdc.destroy()];
try {
  const alice = `alice@${kdc.realm}`;
  kdc.addPrincipal(alice, { requiresPreauth: true });
  const keytab = kdc.ktadd(alice, "alice.keytab");
  const [krb, digest] = await Promise.all([startKerberosServer({ kdc }), startSaslServer({ required: false, users: { alice: "alice-Pa55" } })]);
  closers.unshift(() => krb.close(), () => digest.close());
  const ccache = kdc.kinit(alice, keytab, "alice.cc");
  execFileSync("kvno", ["-c", ccache, krb.principal], { env: kdc.env, stdio: ["ignore", "pipe", "pipe"] });

  const krbOpts = { mechanism: "GSSAPI", krb5Config: kdc.krb5Conf, serviceHost: "localhost" } as const;
  const modes: [string, string, ConnectOptions][] = [
    ["none", krb.connectString, {}],
    ["GSSAPI keytab (AS + TGS + SASL)", krb.connectString, { sasl: { ...krbOpts, principal: alice, keytab } }],
    ["GSSAPI ccache with the service ticket (SASL only)", krb.connectString, { sasl: { ...krbOpts, ccache: `FILE:${ccache}` } }],
    ["none (DIGEST-MD5 server)", digest.connectString, {}],
    ["DIGEST-MD5", digest.connectString, { sasl: { mechanism: "DIGEST-MD5", username: "alice", password: "alice-Pa55" } }],
  ];
  const times = new Map<string, number[]>(modes.map(([m]) => [m, []]));
  const once = async ([name, server, options]: [string, string, ConnectOptions]): Promise<void> => {
    const t = performance.now();
    const zk = await ZooKeeper.connect(server, { connectTimeout: 10_000, sessionTimeout: 10_000, ...options });
    times.get(name)!.push(performance.now() - t);
    await zk.close();
  };
  for (const m of modes) await once(m); // warm-up: JIT, the servers' first sessions
  for (let r = 0; r < ROUNDS; r++) for (const m of modes) await once(m);

  const q = (xs: number[], p: number): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))] ?? NaN;
  };
  const base = q(times.get("none")!, 0.5);
  console.log(`connect() on ${runtime}, ${ROUNDS} connects per mode (interleaved), ZooKeeper 3.8.0, MIT krb5kdc on loopback\n`);
  console.log("| mode | median ms | p90 ms | median - none (Kerberized server) |");
  console.log("|---|---:|---:|---:|");
  for (const [name] of modes) {
    const xs = times.get(name)!;
    console.log(`| ${name} | ${q(xs, 0.5).toFixed(1)} | ${q(xs, 0.9).toFixed(1)} | ${(q(xs, 0.5) - base).toFixed(1)} |`);
  }
} finally {
  for (const c of closers) await c().catch((e: unknown) => log(`cleanup: ${String(e)}`));
}
