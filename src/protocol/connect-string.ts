// Connect strings: "host:port,host:port/chroot", IPv6 as "[::1]:2181", default port 2181 (the Java client's ConnectStringParser rules).
import { ProtocolError, ProtocolErrorKind } from "./errors.ts";
import { pathProblem } from "./path.ts";

/** One server of a connect string (also what a Transport is asked to reach). */
export interface HostPort {
  /** Host name or address (IPv6 without brackets). */
  host: string;
  /** TCP port. */
  port: number;
}

/** "host:port", IPv6 in brackets: as a connect string writes it. */
export function hostText(h: HostPort): string {
  return h.host.includes(":") ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`;
}

export interface ParsedConnectString {
  hosts: HostPort[];
  /** "" when there is no chroot. */
  chroot: string;
}

const DEFAULT_PORT = 2181;

function bad(message: string): never {
  throw new ProtocolError(ProtocolErrorKind.INVALID_ARGUMENT, message);
}

function parsePort(text: string, entry: string): number {
  if (text === "") return DEFAULT_PORT;
  if (!/^\d+$/.test(text)) bad(`invalid port in "${entry}"`);
  const port = Number(text);
  if (port < 1 || port > 65535) bad(`port out of range in "${entry}"`);
  return port;
}

function parseHost(entry: string): HostPort {
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    if (close < 0) bad(`unterminated IPv6 address in "${entry}"`);
    const host = entry.slice(1, close);
    const rest = entry.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) bad(`unexpected text after IPv6 address in "${entry}"`);
    return { host, port: parsePort(rest.slice(1), entry) };
  }
  const colon = entry.lastIndexOf(":");
  if (colon < 0) return { host: entry, port: DEFAULT_PORT };
  if (entry.indexOf(":") !== colon) bad(`IPv6 addresses must be bracketed: "${entry}"`);
  const host = entry.slice(0, colon);
  if (host === "") bad(`missing host in "${entry}"`);
  return { host, port: parsePort(entry.slice(colon + 1), entry) };
}

export function parseConnectString(connectString: string): ParsedConnectString {
  if (typeof connectString !== "string") bad("connectString must be a string");
  // "http://h:2181", "zk://h:2181": the scheme's "//" would be read as a chroot. Only the scheme is echoed
  // (a URL may carry user:password@).
  const url = /(?:^|,)\s*([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(connectString);
  if (url) bad(`use host:port[,host:port][/chroot], not a URL (the connect string has "${url[1]}://")`);
  // The chroot is everything from the first "/" on, for all hosts.
  const slash = connectString.indexOf("/");
  let chroot = slash < 0 ? "" : connectString.slice(slash);
  const hostPart = slash < 0 ? connectString : connectString.slice(0, slash);
  if (chroot === "/") chroot = "";
  if (chroot) {
    const problem = pathProblem(chroot);
    if (problem) bad(`invalid chroot "${chroot}": ${problem}`);
  }
  const hosts = hostPart
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map(parseHost);
  if (hosts.length === 0) bad("connect string has no hosts");
  return { hosts, chroot };
}

/** A `dns-srv://NAME[/chroot]` connect string: the SRV record's name and the chroot ("" for none). */
export interface DnsSrvConnectString {
  name: string;
  chroot: string;
}

const DNS_SRV = "dns-srv://";

/**
 * `dns-srv://_zookeeper._tcp.example.com[/chroot]` (ZooKeeper 3.10's DNS SRV connect string): the servers are the
 * targets and ports of the name's SRV records. Returns null for any other connect string; throws for a bad one.
 */
export function parseDnsSrv(connectString: string): DnsSrvConnectString | null {
  if (typeof connectString !== "string" || !connectString.startsWith(DNS_SRV)) return null;
  const rest = connectString.slice(DNS_SRV.length);
  const slash = rest.indexOf("/");
  const name = slash < 0 ? rest : rest.slice(0, slash);
  let chroot = slash < 0 ? "" : rest.slice(slash);
  if (chroot === "/") chroot = "";
  if (!/^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?$/.test(name) || name.length > 253) {
    bad(`invalid DNS name in "${DNS_SRV}${name}": one name, as _zookeeper._tcp.example.com (no port, no list)`);
  }
  if (chroot) {
    const problem = pathProblem(chroot);
    if (problem) bad(`invalid chroot "${chroot}": ${problem}`);
  }
  return { name, chroot };
}
