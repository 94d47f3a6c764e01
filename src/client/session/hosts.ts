// Host selection as the Java client does it: shuffle once, walk round-robin, and pause after every
// host has been tried since the last successful connection. It also keeps how each host's last dial
// failed, so that a connect timeout can say "ECONNREFUSED on every host" instead of only the last error.
import { type HostPort, type ParsedConnectString, hostText, parseConnectString } from "../../protocol/connect-string.ts";

/** Dial errors that mean "nothing there" rather than "slow": the port refused, or the name did not resolve. */
const UNREACHABLE: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

export class HostList {
  private hosts: HostPort[];
  /** The hosts in the order the caller gave them (for messages). */
  private given: readonly HostPort[];
  private index = -1;
  private triedSinceConnect = 0;
  private readonly random: () => number;
  /** Per "host:port": the error code of its last failed dial since the last connection (null: not a code we know). */
  private failures: Map<string, string | null> | null = null; // made by the first failed dial

  constructor(hosts: readonly HostPort[], random: () => number = Math.random) {
    this.random = random;
    this.given = hosts;
    this.hosts = this.shuffled(hosts);
  }

  /** A new list (updateServerList): shuffled again, walked from its start. */
  replace(hosts: readonly HostPort[]): void {
    this.given = hosts;
    this.hosts = this.shuffled(hosts);
    this.index = -1;
    this.triedSinceConnect = 0;
    this.failures = null;
  }

  /** A dial of `host` failed with `error` (its `code`, e.g. ECONNREFUSED, is what counts). */
  failed(host: HostPort, error: Error): void {
    const code = (error as { code?: unknown }).code;
    (this.failures ??= new Map()).set(hostText(host), typeof code === "string" ? code : null);
  }

  /**
   * When the last dial of every host was refused or could not resolve its name (ECONNREFUSED, ENOTFOUND,
   * EAI_AGAIN): says so, e.g. `ECONNREFUSED on every host of "127.0.0.1:1,127.0.0.1:2"`; otherwise null.
   */
  unreachable(): string | null {
    if (this.given.length === 0) return null;
    const failures = this.failures;
    if (failures === null) return null;
    const codes = this.given.map((h) => failures.get(hostText(h)));
    if (!codes.every((c) => typeof c === "string" && UNREACHABLE.has(c))) return null;
    const list = this.given.map(hostText).join(",");
    if (codes.every((c) => c === codes[0])) return `${codes[0]} on every host of "${list}"`;
    return `every host refused or did not resolve: ${this.given.map((h, i) => `${hostText(h)} ${codes[i]}`).join(", ")}`;
  }

  has(host: string, port: number): boolean {
    return this.hosts.some((h) => h.host === host && h.port === port);
  }

  private shuffled(list: readonly HostPort[]): HostPort[] {
    const hosts = [...list];
    const random = this.random;
    for (let i = hosts.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [hosts[i], hosts[j]] = [hosts[j]!, hosts[i]!];
    }
    return hosts;
  }

  get size(): number {
    return this.hosts.length;
  }

  get all(): readonly HostPort[] {
    return this.hosts;
  }

  /** The next host and how long to wait before dialing it (ms). */
  next(): { host: HostPort; delayMs: number } {
    this.index = (this.index + 1) % this.hosts.length;
    const wrapped = this.triedSinceConnect >= this.hosts.length;
    if (wrapped) this.triedSinceConnect = 0;
    this.triedSinceConnect++;
    return { host: this.hosts[this.index]!, delayMs: wrapped ? 1000 : 0 };
  }

  /** Moves to a specific host next (e.g. a read-write server found while read-only). */
  preferNext(host: HostPort): void {
    const i = this.hosts.findIndex((h) => h.host === host.host && h.port === host.port);
    if (i >= 0) this.index = (i - 1 + this.hosts.length) % this.hosts.length;
  }

  connected(): void {
    this.triedSinceConnect = 0;
    this.failures = null;
  }
}

/** The last connect string parsed: a process mostly connects with one. Frozen, as its sessions share it. */
let lastParsed: { text: string; parsed: ParsedConnectString } | null = null;

export function parsedConnectString(text: string): ParsedConnectString {
  if (lastParsed !== null && lastParsed.text === text) return lastParsed.parsed;
  const parsed = parseConnectString(text);
  for (const h of parsed.hosts) Object.freeze(h);
  Object.freeze(parsed.hosts);
  lastParsed = { text, parsed: Object.freeze(parsed) };
  return parsed;
}
