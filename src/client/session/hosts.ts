// Host selection as the Java client does it: shuffle once, walk round-robin, and pause after every
// host has been tried since the last successful connection. It also keeps how each host's last dial
// failed, so that a connect timeout can say "ECONNREFUSED on every host" instead of only the last error.
// A new list (updateServerList) is taken with the Java client's rebalancing rule (StaticHostProvider,
// ZOOKEEPER-1355): see `rebalance`.
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

  /** The host of the last connection (null before the first). */
  private lastConnected: HostPort | null = null;
  /**
   * Set by a `rebalance` that asks the client to move: the next dials draw from the new list's hosts that
   * were not in the old one (`fresh`) with probability `pFresh`, else from those that were (`kept`), each
   * group walked once; then the plain round robin again.
   */
  private moving: { fresh: HostPort[]; kept: HostPort[]; pFresh: number; nextFresh: number; nextKept: number } | null = null;

  /**
   * A new list (updateServerList), taken with the Java client's rule so that the expected number of clients
   * per server comes out even. `current` is the connected server (null when not connected: then the last
   * one connected, else the list's first). Returns true when the client should move (drop its connection
   * and reconnect, keeping its session):
   * - the list grew: a client whose server stays moves with probability 1 - old/new, to one of the
   *   servers that were not in the old list; one whose server left moves to one of those;
   * - the list shrank or kept its size: a client whose server stays stays; one whose server left moves to
   *   a server of the old list with probability kept*(old - new) / (new*(old - kept)), else to a new one.
   * While a previous move is still pending, the host it would dial next counts as `current`.
   */
  rebalance(hosts: readonly HostPort[], current: HostPort | null): boolean {
    if (hosts.length === 0) return false;
    const next = this.shuffled(hosts);
    let mine = current;
    if (this.moving !== null) mine = this.nextMoving();
    mine ??= this.lastConnected ?? this.hosts[0] ?? null;
    const stays = mine !== null && next.some((h) => same(h, mine));
    const kept = next.filter((h) => this.hosts.some((o) => same(o, h)));
    const fresh = next.filter((h) => !this.hosts.some((o) => same(o, h)));
    const before = this.hosts.length;
    let pFresh: number | null = null; // null: stay
    if (next.length > before) {
      if (!stays || this.random() <= 1 - before / next.length) pFresh = 1;
    } else if (!stays) {
      const denominator = next.length * (before - kept.length);
      const pKept = denominator === 0 ? 1 : (kept.length * (before - next.length)) / denominator;
      pFresh = 1 - pKept;
    }
    this.given = hosts;
    this.hosts = next;
    this.triedSinceConnect = 0;
    this.failures = null;
    this.moving = pFresh === null ? null : { fresh, kept, pFresh, nextFresh: 0, nextKept: 0 };
    // Staying: the round robin goes on from the current server's place in the new list.
    this.index = pFresh === null && mine !== null ? next.findIndex((h) => same(h, mine)) : -1;
    return pFresh !== null;
  }

  /** The next host of a pending move: a fresh one with probability pFresh (or when the kept ones are used up); null once both are. */
  private nextMoving(): HostPort | null {
    const m = this.moving;
    if (m === null) return null;
    const takeFresh = this.random() <= m.pFresh;
    if (m.nextFresh < m.fresh.length && (takeFresh || m.nextKept >= m.kept.length)) return m.fresh[m.nextFresh++]!;
    if (m.nextKept < m.kept.length) return m.kept[m.nextKept++]!;
    this.moving = null;
    return null;
  }

  /** A dial of `host` failed with `error` (its `code`, e.g. ECONNREFUSED, is what counts). */
  failed(host: HostPort, error: Error): void {
    const code = (error as { code?: unknown }).code;
    (this.failures ??= new Map()).set(hostText(host), typeof code === "string" ? code : null);
  }

  /**
   * When the last dial of every host was refused or could not resolve its name (ECONNREFUSED, ENOTFOUND,
   * EAI_AGAIN): says so, and what to check, e.g. `ECONNREFUSED on every host of "127.0.0.1:1,127.0.0.1:2"; check that
   * ZooKeeper runs and listens on those ports`; otherwise null.
   */
  unreachable(): string | null {
    if (this.given.length === 0) return null;
    const failures = this.failures;
    if (failures === null) return null;
    const codes = this.given.map((h) => failures.get(hostText(h)));
    if (!codes.every((c) => typeof c === "string" && UNREACHABLE.has(c))) return null;
    const list = this.given.map(hostText).join(",");
    if (codes.every((c) => c === codes[0])) return `${codes[0]} on every host of "${list}"${codes[0] === "ECONNREFUSED" ? "; check that ZooKeeper runs and listens on those ports" : "; check the host names and DNS"}`;
    return `every host refused or did not resolve: ${this.given.map((h, i) => `${hostText(h)} ${codes[i]}`).join(", ")}; check the connect string and that ZooKeeper runs there`;
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
    const moving = this.moving === null ? null : this.nextMoving();
    if (moving !== null) {
      this.index = this.hosts.indexOf(moving);
      this.triedSinceConnect++;
      return { host: moving, delayMs: 0 };
    }
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

  /** A session was established on `host`: a pending move is over, and the next pass starts afresh. */
  connected(host: HostPort): void {
    this.lastConnected = host;
    this.moving = null;
    this.triedSinceConnect = 0;
    this.failures = null;
  }
}

const same = (a: HostPort, b: HostPort): boolean => a.host === b.host && a.port === b.port;

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
