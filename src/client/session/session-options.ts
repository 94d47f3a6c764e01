// What a Session is made with, and how ZooKeeper.connect's options become that: numbers checked,
// defaults filled in, the Transport (or the internal `dialer` seam) and the Clock chosen.
import type { HostPort } from "../../protocol/connect-string.ts";
import { DEFAULT_MAX_BUFFER } from "../../protocol/jute.ts";
import { type Clock, systemClock } from "../clock.ts";
import { badArguments } from "../errors.ts";
import { type ServerMemory, serverMemory } from "./features.ts";
import { type SaslFactory, saslFactory } from "../sasl/exchange.ts";
import { type Dialer, type Resolver, type Transport, TransportDialOptions, defaultTransport, dialSocket } from "../transport/transport.ts";
import type { ConnectOptions, Logger, SessionState, TlsSetting, WatchedEvent } from "../types.ts";
import { tlsFilesProblem } from "../transport/tls-files.ts";
import type { WatchRegistry } from "../watches/watches.ts";

/** Time allowed for the first session when `connectTimeout` is not given, ms (Curator's and kazoo's default too). */
export const DEFAULT_CONNECT_TIMEOUT = 15_000;

export interface SessionOptions {
  hosts: readonly HostPort[];
  sessionTimeout: number;
  connectTimeout: number;
  readOnly: boolean;
  /** As given: a function or files are loaded again for each dial (tls-files.ts). */
  tls?: TlsSetting;
  /** ConnectOptions.resolver, checked. */
  resolver?: Resolver;
  /** The SASL client for a connection to a host (GSSAPI gets its service ticket first). */
  sasl?: SaslFactory;
  sessionId?: bigint;
  sessionPassword?: Uint8Array;
  maxBufferSize: number;
  clientSideExpiry: boolean;
  logger: Logger;
  dialer: Dialer;
  /** What the servers reached the way this session reaches them answered last time (features.ts). */
  servers: ServerMemory;
  /** Timers and "now" for everything the session runs (default: the runtime's). */
  clock?: Clock;
  watches: WatchRegistry;
  /** The client's chroot, for the calls' `result` mappings (call-record.ts CallContext). */
  chroot: string;
  /** Who the session authenticated as (the client's list, as it grows), for NOAUTH's message (never secrets). */
  credentials?: readonly string[];
  /** What the session tells its client. */
  events: SessionEvents;
}

/** What a session tells its client (one object: a client's methods, no closure each). */
export interface SessionEvents {
  onState(state: SessionState): void;
  /** A notification (`zxid`: the change's, -1 before 3.9) and the watchers it triggers (a fresh array, the caller's to keep). */
  onWatchEvent(event: { type: number; state: number; path: string }, zxid: bigint, watchers: ((e: WatchedEvent) => void)[]): void;
  /** Session-wide events (expiry, close) for every registered watcher (not called when none is registered). */
  onSessionEvent(state: number): void;
  /** The process resumed from a pause and is about to read what arrived meanwhile (Connection's onResume). */
  onResume(): void;
}

/** ConnectOptions plus the internal seam kept for the simulation and the soak (a Transport as a bare function). */
export interface InternalOptions extends ConnectOptions {
  /** Test seam: how links are dialled; takes precedence over `transport`. */
  dialer?: Dialer;
  /** With `dialer`: what the servers behind it answered last time, shared by the sessions given the same map (default: one per dialer). */
  servers?: ServerMemory;
}

/** What the client gives the session besides ConnectOptions: its watch registry, credentials and events. */
export type SessionCallbacks = Pick<SessionOptions, "chroot" | "credentials" | "watches" | "events">;

/** An option that must be a positive number, `dflt` when not given; BADARGUMENTS names it otherwise. */
function positive(given: unknown, name: string, dflt: number): number {
  const v = given ?? dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) throw badArguments(`${name} must be a positive number`, "connect");
  return v;
}

/** The dialer of each custom Transport, made once: a process mostly connects every session through one. */
const transportDialers = new WeakMap<Transport, Dialer>();

function dialerOf(transport: Transport): Dialer {
  let dialer = transportDialers.get(transport);
  if (dialer === undefined) {
    dialer = (target, handlers, opts) => transport.connect(target, handlers, new TransportDialOptions(opts));
    transportDialers.set(transport, dialer);
  }
  return dialer;
}

/**
 * Checks and completes the options; throws BADARGUMENTS. One object literal, not `{ ...checked, ...callbacks }`:
 * V8 gave every spread-then-extended options object maps of its own, which outlived the session, so every
 * session's objects survived the next scavenge and connect + close went mostly to the GC (bench/README.md,
 * Profiling).
 */
export function sessionOptions(hosts: readonly HostPort[], options: InternalOptions, logger: Logger, callbacks: SessionCallbacks): SessionOptions {
  // Each option read by its name (a read by a computed key, options[name], is a megamorphic lookup each time).
  const connectTimeout = positive(options.connectTimeout, "connectTimeout", DEFAULT_CONNECT_TIMEOUT);
  const transport: Transport = options.transport ?? defaultTransport;
  if (typeof transport !== "object" || transport === null || typeof transport.connect !== "function") throw badArguments("transport must have a connect() method", "connect");
  const clock = options.clock ?? systemClock;
  if (typeof clock !== "object" || clock === null || typeof clock.now !== "function" || typeof clock.setTimeout !== "function" || typeof clock.clearTimeout !== "function") {
    throw badArguments("clock must have now(), setTimeout() and clearTimeout()", "connect");
  }
  if (options.resolver !== undefined && typeof options.resolver !== "function") throw badArguments("resolver must be a function", "connect");
  const tlsProblem = tlsFilesProblem(options.tls);
  if (tlsProblem !== null) throw badArguments(tlsProblem, "connect");
  if (clock.wallTime !== undefined && typeof clock.wallTime !== "function") throw badArguments("clock.wallTime must be a function", "connect");
  // The default transport takes dialWithin's DialRequest as it is; a Transport is given TransportDialOptions,
  // whose `signal` is made when it reads it (an own property: a spread copy keeps it). Neither makes an
  // AbortSignal for a dial that never looks at it.
  const dialer: Dialer = options.dialer ?? (transport === defaultTransport ? dialSocket : dialerOf(transport));
  return {
    hosts,
    sessionTimeout: Math.round(positive(options.sessionTimeout, "sessionTimeout", 30_000)),
    connectTimeout,
    readOnly: options.readOnly === true,
    tls: options.tls,
    resolver: options.resolver,
    sasl: options.sasl ? saslFactory(options.sasl, { dialer, clock, connectTimeout, logger, resolver: options.resolver }) : undefined,
    sessionId: options.sessionId,
    sessionPassword: options.sessionPassword,
    maxBufferSize: positive(options.maxBufferSize, "maxBufferSize", DEFAULT_MAX_BUFFER),
    clientSideExpiry: options.clientSideExpiry !== false,
    logger,
    dialer,
    servers: options.servers ?? serverMemory(options.dialer ?? transport),
    clock,
    watches: callbacks.watches,
    chroot: callbacks.chroot,
    credentials: callbacks.credentials,
    events: callbacks.events,
  };
}
