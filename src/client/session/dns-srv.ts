// `dns-srv://NAME[/chroot]` connect strings (ZooKeeper 3.10's DnsSrvHostProvider): the servers are the targets
// and ports of NAME's SRV records, looked up at connect() and again every 60 s (the Java client's default
// refresh) on the client's clock. A changed set of servers is handed to the session's updateHosts, the
// rebalancing rule of updateServerList; a failed or empty lookup keeps the list as it is until the next one.
import * as dns from "node:dns/promises";
import { ErrorCode } from "../../protocol/constants.ts";
import { ProtocolError } from "../../protocol/errors.ts";
import { type HostPort, hostText, parseDnsSrv } from "../../protocol/connect-string.ts";
import { type Clock, type TimerHandle, systemClock } from "../clock.ts";
import { ZooKeeperError, badArguments } from "../errors.ts";
import type { ConnectOptions, Logger, SrvTarget } from "../types.ts";

/** Looks up the SRV records of a name (ConnectOptions.srvResolver; default node:dns resolveSrv). */
export type SrvResolver = (name: string) => Promise<SrvTarget[]>;
export type { SrvTarget };

/** The Java client's default refresh period (DnsSrvHostProvider), ms. */
export const DNS_SRV_REFRESH_MS = 60_000;

export const systemSrvResolver: SrvResolver = (name) => dns.resolveSrv(name);

/** The servers of `name`'s SRV records (usable ones, without repeats), or an error saying why there are none. */
export async function lookupSrv(resolver: SrvResolver, name: string): Promise<HostPort[]> {
  let records: unknown;
  try {
    records = await resolver(name);
  } catch (e) {
    throw new Error(`SRV lookup of ${name} failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const hosts: HostPort[] = [];
  for (const r of Array.isArray(records) ? (records as Partial<SrvTarget>[]) : []) {
    const host = typeof r?.name === "string" ? r.name.replace(/\.$/, "") : "";
    const port = r?.port;
    if (host === "" || typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535) continue;
    if (!hosts.some((h) => h.host === host && h.port === port)) hosts.push({ host, port });
  }
  if (hosts.length === 0) throw new Error(`no SRV records found for ${name}`);
  return hosts;
}

/** A dns-srv:// connect string looked up: the hosts as a plain connect string, and its refresh to start once connected. */
export interface DnsSrvStart {
  readonly connectString: string;
  refresh(apply: (hosts: HostPort[]) => void, logger: Logger): DnsSrvRefresh | null;
}

/**
 * For a `dns-srv://NAME[/chroot]` connect string: NAME's SRV records looked up now (BADARGUMENTS for a bad string
 * or options; CONNECTIONLOSS when the lookup fails or finds no server, as the Java client refuses to start then);
 * null for any other connect string.
 */
export async function startDnsSrv(connectString: string, options: ConnectOptions): Promise<DnsSrvStart | null> {
  let parsed;
  try {
    parsed = parseDnsSrv(connectString);
  } catch (e) {
    throw badArguments(e instanceof ProtocolError ? e.message : String(e), "connect");
  }
  if (parsed === null) return null;
  const resolver = options.srvResolver ?? systemSrvResolver;
  if (typeof resolver !== "function") throw badArguments("srvResolver must be a function", "connect");
  const periodMs = options.srvRefreshMs ?? DNS_SRV_REFRESH_MS;
  if (typeof periodMs !== "number" || !Number.isFinite(periodMs) || periodMs < 0) throw badArguments("srvRefreshMs must be a number >= 0", "connect");
  let hosts: HostPort[];
  try {
    hosts = await lookupSrv(resolver, parsed.name);
  } catch (e) {
    throw new ZooKeeperError(ErrorCode.CONNECTIONLOSS, `dns-srv://${parsed.name}: ${(e as Error).message}`, { op: "connect", cause: e });
  }
  const { name } = parsed;
  return {
    connectString: hosts.map(hostText).join(",") + parsed.chroot,
    refresh: (apply, logger) =>
      periodMs === 0 ? null : new DnsSrvRefresh({ name, resolver, clock: options.clock ?? systemClock, periodMs, logger, apply }, hosts),
  };
}

const key = (hosts: readonly HostPort[]): string => hosts.map(hostText).sort().join(",");

/** Looks the name up every `periodMs` on `clock` and applies a changed list; stop() ends it. */
export class DnsSrvRefresh {
  private timer: TimerHandle | null = null;
  private stopped = false;
  private current: string;
  private readonly o: {
    name: string;
    resolver: SrvResolver;
    clock: Clock;
    periodMs: number;
    logger: Logger;
    apply(hosts: HostPort[]): void;
  };

  constructor(o: DnsSrvRefresh["o"], hosts: readonly HostPort[]) {
    this.o = o;
    this.current = key(hosts);
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (!this.stopped) this.timer = this.o.clock.setTimeout(() => void this.refresh(), this.o.periodMs);
  }

  private async refresh(): Promise<void> {
    this.timer = null;
    try {
      const hosts = await lookupSrv(this.o.resolver, this.o.name);
      if (this.stopped) return;
      const k = key(hosts);
      if (k !== this.current) {
        this.current = k;
        this.o.logger.info(`zookeeper: dns-srv://${this.o.name} now names ${hosts.map(hostText).join(",")}`);
        this.o.apply(hosts);
      }
    } catch (e) {
      // As the Java client: the list stays as it is, and the next refresh tries again.
      this.o.logger.warn(`zookeeper: ${(e as Error).message}; the server list is kept`);
    }
    this.arm();
  }
}
