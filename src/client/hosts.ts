// Host selection as the Java client does it: shuffle once, walk round-robin, and pause after every
// host has been tried since the last successful connection.
import { type HostPort, type ParsedConnectString, parseConnectString } from "../protocol/connect-string.ts";

export class HostList {
  private hosts: HostPort[];
  private index = -1;
  private triedSinceConnect = 0;
  private readonly random: () => number;

  constructor(hosts: readonly HostPort[], random: () => number = Math.random) {
    this.random = random;
    this.hosts = this.shuffled(hosts);
  }

  /** A new list (updateServerList): shuffled again, walked from its start. */
  replace(hosts: readonly HostPort[]): void {
    this.hosts = this.shuffled(hosts);
    this.index = -1;
    this.triedSinceConnect = 0;
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
