// Host selection as the Java client does it: shuffle once, walk round-robin, and pause after every
// host has been tried since the last successful connection.
import type { HostPort } from "../protocol/connect-string.ts";

export class HostList {
  private readonly hosts: HostPort[];
  private index = -1;
  private triedSinceConnect = 0;

  constructor(hosts: readonly HostPort[], random: () => number = Math.random) {
    this.hosts = [...hosts];
    for (let i = this.hosts.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [this.hosts[i], this.hosts[j]] = [this.hosts[j]!, this.hosts[i]!];
    }
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
