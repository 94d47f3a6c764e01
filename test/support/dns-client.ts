// A client in its own process for the system-resolver tests (client-dns-system.test.ts): it is started in a
// mount namespace whose /etc/resolv.conf names the test's dnsmasq, so node:dns and getaddrinfo ask that server.
//   node --import tsx test/support/dns-client.ts <connectString> [srvRefreshMs|""] [sasl options as JSON]
// One line per event: UP <sessionId hex> <remote> | DOWN <state> | ERROR <text> (a ZooKeeperError's message
// begins with its code name); with sasl (kerberos-dns-system.test.ts), after the first UP a WHO <scheme>:<id>
// line per identity (whoAmI). "close" or stdin EOF closes it.
import process from "node:process";
import { ZooKeeper, type ConnectOptions } from "../../src/index.ts";

const [connectString, refresh, sasl] = process.argv.slice(2);
const out = (line: string): void => void process.stdout.write(`${line}\n`);
try {
  const zk = await ZooKeeper.connect(connectString!, { sessionTimeout: 30_000, connectTimeout: 15_000, ...(refresh ? { srvRefreshMs: Number(refresh) } : {}),
    ...(sasl ? { sasl: JSON.parse(sasl) as ConnectOptions["sasl"] } : {}),
  });
  const up = (): void => out(`UP ${zk.sessionId.toString(16)} ${zk.remoteAddress}`);
  zk.on("state", (s) => (s === "connected" ? up() : out(`DOWN ${s}`)));
  up();
  if (sasl) for (const i of await zk.whoAmI()) out(`WHO ${i.scheme}:${i.id}`);
  const close = (): void => void zk.close().then(() => process.exit(0));
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (s: string) => s.includes("close") && close());
  process.stdin.on("end", close);
} catch (e) {
  out(`ERROR ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
