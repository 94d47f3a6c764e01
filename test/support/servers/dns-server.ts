// A real DNS server for the system-resolver tests: Debian's dnsmasq on 127.53.0.1:53 serving only the records
// given (SRV, A with its PTR, CNAME), and a way to run a process whose /etc/resolv.conf names it (a mount
// namespace made with unshare: the rest of the machine keeps its own resolver; /etc/hosts can be replaced too). Needs root (port 53, mount) and the dnsmasq-base
// package; `dnsProblem()` says what is missing.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as dns from "node:dns/promises";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { until } from "../wait.ts";

export const DNS_ADDRESS = "127.53.0.1";

export interface DnsRecords {
  /** SRV name -> its targets. */
  srv?: Record<string, { target: string; port: number }[]>;
  /** host name -> IPv4 address (dnsmasq answers the address's PTR with the name too). */
  a?: Record<string, string>;
  /** a name of `a` -> more names with its address (A records only: the PTR names the name of `a`); names shared by several are round-robin names. */
  aka?: Record<string, string[]>;
  /** alias -> the name it is a CNAME of (a name of `a`: dnsmasq serves CNAMEs of its own records only). */
  cname?: Record<string, string>;
}

/** What wrap() puts in the namespace besides the nameserver. */
export interface WrapOptions {
  /** resolv.conf's search domain (short names are tried under it). */
  search?: string;
  /** The whole /etc/hosts of the namespace (default: the machine's own). */
  hosts?: string;
}

/** Why this machine cannot run the test's DNS server (null: it can). */
export function dnsProblem(): string | null {
  if (process.getuid?.() !== 0) return "not root (dnsmasq binds port 53; unshare -m bind-mounts /etc/resolv.conf)";
  for (const [cmd, args] of [["dnsmasq", ["--version"]], ["unshare", ["-m", "true"]]] as const) {
    try {
      execFileSync(cmd, [...args], { stdio: "ignore" });
    } catch {
      return `${cmd} ${args.join(" ")} failed (install dnsmasq-base; unshare is util-linux)`;
    }
  }
  return null;
}

export class DnsServer {
  readonly dir = mkdtempSync(join(tmpdir(), "zk-ts-dns-"));
  private proc: ChildProcess | null = null;
  private wraps = 0;

  /** (Re)starts dnsmasq with exactly `records` (dnsmasq reads SRV records only at its start). */
  async serve(records: DnsRecords): Promise<void> {
    await this.stop();
    const args = ["--keep-in-foreground", "--user=root", "--port=53", `--listen-address=${DNS_ADDRESS}`, "--bind-interfaces",
      "--no-resolv", "--no-hosts", "--no-negcache", "--local-ttl=0", `--pid-file=${join(this.dir, "pid")}`, `--log-facility=${join(this.dir, "log")}`];
    for (const [name, targets] of Object.entries(records.srv ?? {})) for (const t of targets) args.push(`--srv-host=${name},${t.target},${t.port}`);
    for (const [name, address] of Object.entries(records.a ?? {})) args.push(`--host-record=${[name, ...(records.aka?.[name] ?? [])].join(",")},${address}`);
    for (const [alias, target] of Object.entries(records.cname ?? {})) args.push(`--cname=${alias},${target}`);
    const proc = spawn("dnsmasq", args, { stdio: ["ignore", "ignore", "pipe"] });
    this.proc = proc;
    let stderr = "";
    proc.stderr?.on("data", (b: Buffer) => (stderr += b.toString()));
    // Ready once it answers its first A record.
    const probe = Object.keys(records.a ?? {})[0] ?? "localhost";
    const resolver = new dns.Resolver({ timeout: 500, tries: 1 });
    resolver.setServers([DNS_ADDRESS]);
    await until(`dnsmasq answering on ${DNS_ADDRESS} (${stderr})`, async () => {
      if (proc.exitCode !== null) throw new Error(`dnsmasq exited: ${stderr}`);
      return resolver.resolve4(probe).then(() => true, () => false);
    }, 10_000, 50);
  }

  /** The command and arguments that run `cmd args` with /etc/resolv.conf naming this server (and `o`'s search domain and /etc/hosts). */
  wrap(cmd: string, args: readonly string[], o: WrapOptions = {}): [string, string[]] {
    const n = this.wraps++;
    const conf = join(this.dir, `resolv-${n}.conf`);
    writeFileSync(conf, `nameserver ${DNS_ADDRESS}\n${o.search !== undefined ? `search ${o.search}\n` : ""}`);
    if (o.hosts === undefined) return ["unshare", ["-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && exec "$@"', conf, cmd, ...args]];
    const hosts = join(this.dir, `hosts-${n}`);
    writeFileSync(hosts, o.hosts);
    return ["unshare", ["-m", "sh", "-c", 'mount --bind "$0" /etc/resolv.conf && mount --bind "$1" /etc/hosts && shift && exec "$@"', conf, hosts, cmd, ...args]];
  }

  async stop(): Promise<void> {
    const p = this.proc;
    this.proc = null;
    if (p === null || p.exitCode !== null) return;
    const gone = new Promise((r) => p.once("exit", r));
    p.kill("SIGTERM");
    await gone;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
