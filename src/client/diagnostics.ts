// What the client publishes through node:diagnostics_channel, the way mysql2, ioredis, undici and fastify
// do: tracers (OpenTelemetry, Sentry, Datadog) subscribe by channel name, with no monkey-patching, on
// Node, Bun and Deno alike. Nothing is built or published per call while nobody subscribes.
//
//   zookeeper-ts:request  TracingChannel, one trace per public operation (tracePromise semantics)
//   zookeeper-ts:connect  TracingChannel, one trace per connection attempt
//   zookeeper-ts:session  { sessionId, from, to } on every state change
//   zookeeper-ts:watch    { sessionId, type, path } per delivered watch event
//
// A namespace import: a default import of node:diagnostics_channel breaks the CommonJS build.
import * as dc from "node:diagnostics_channel";
import type { ZooKeeperError } from "./errors.ts";
import type { SessionState } from "./types.ts";

/** The context of a `zookeeper-ts:request` trace (the same object in start, end, asyncStart, asyncEnd and error). */
export interface RequestContext {
  /** The public method's name: "getData", "create", "multi", ... */
  operation: string;
  /** The path as the caller gave it (absent for multi and other calls without one). */
  path?: string;
  /** Host and port of the connection the call went out on, when connected at the call. */
  serverAddress?: string;
  serverPort?: number;
  /** The session id, 16 hex digits (0000000000000000 before the first session). */
  sessionId: string;
  /** Set on failure. */
  error?: ZooKeeperError | Error;
  /** Set on success by tracePromise: what the call resolved with. */
  result?: unknown;
}

/** The context of a `zookeeper-ts:connect` trace: one connection attempt. */
export interface ConnectContext {
  serverAddress: string;
  serverPort: number;
  /** Once the server accepted the session. */
  sessionId?: string;
  /** Set when the attempt failed. */
  error?: Error;
}

/** A message of `zookeeper-ts:session`. */
export interface SessionMessage {
  sessionId: string;
  from: SessionState;
  to: SessionState;
}

/** A message of `zookeeper-ts:watch`. */
export interface WatchMessage {
  sessionId: string;
  /** The event's type name: "NodeDataChanged", "NodeCreated", ... */
  type: string;
  path: string | null;
}

export const CHANNELS = {
  request: "zookeeper-ts:request",
  connect: "zookeeper-ts:connect",
  session: "zookeeper-ts:session",
  watch: "zookeeper-ts:watch",
  election: "zookeeper-ts:election",
  lock: "zookeeper-ts:lock",
} as const;

// The TracingChannel type of @types/node varies between versions; only what is used here.
interface EventChannel {
  readonly hasSubscribers: boolean;
  publish(message: unknown): void;
}
interface Tracing {
  readonly start: EventChannel;
  readonly end: EventChannel;
  readonly asyncStart: EventChannel;
  readonly asyncEnd: EventChannel;
  readonly error: EventChannel;
  tracePromise<T>(fn: () => Promise<T>, context: object): Promise<T>;
}

const requestTrace = dc.tracingChannel(CHANNELS.request) as unknown as Tracing;
const connectTrace = dc.tracingChannel(CHANNELS.connect) as unknown as Tracing;
const sessionChannel = dc.channel(CHANNELS.session) as unknown as EventChannel;
const watchChannel = dc.channel(CHANNELS.watch) as unknown as EventChannel;

// Each event channel's own flag: TracingChannel#hasSubscribers is undefined on Bun.
const traced = (t: Tracing): boolean =>
  t.start.hasSubscribers || t.end.hasSubscribers || t.asyncStart.hasSubscribers || t.asyncEnd.hasSubscribers || t.error.hasSubscribers;

// The last session id and server seen, as the channels carry them: a traced call of the same session on the same
// link (nearly every one) reuses them instead of formatting a bigint and splitting "host:port" again.
let lastId = -1n;
let lastHex = "";
let lastRemote: string | null = null;
let lastHost = "";
let lastPort = 0;

/** A session id as the channels carry it: 16 hex digits. */
function sessionHex(id: bigint): string {
  if (id !== lastId) {
    lastHex = id.toString(16).padStart(16, "0");
    lastId = id;
  }
  return lastHex;
}

/** Where a call goes out: "host:port" split (an IPv6 host comes in brackets), into `context`; nothing while not connected. */
function setServer(context: RequestContext, remote: string | null): void {
  if (remote === null) return;
  if (remote !== lastRemote) {
    const at = remote.lastIndexOf(":");
    const host = remote.slice(0, at);
    lastHost = host.startsWith("[") ? host.slice(1, -1) : host;
    lastPort = Number(remote.slice(at + 1));
    lastRemote = remote;
  }
  context.serverAddress = lastHost;
  context.serverPort = lastPort;
}

/** What a traced client gives the channels. */
export interface Traceable {
  readonly sessionId: bigint;
  readonly remoteAddress: string | null;
}

/** How many request contexts were built: none while nobody subscribes (checked by the tests, a counter not a timer). */
export const built = { requests: 0 };

/** Whether anyone listens to `zookeeper-ts:request`: the Caller (caller.ts) checks it before making a closure. */
export function tracingRequests(): boolean {
  return traced(requestTrace);
}

/**
 * Runs one public operation (caller.ts: its one call, or a composite once) as a `zookeeper-ts:request` trace: `start`
 * in the caller's context, synchronously, then `end`, and `asyncStart`/`asyncEnd` (with `error` first on a
 * rejection) when it settles. `run` never throws (a bad argument is a rejection).
 */
export function traceRequest<T>(zk: Traceable, operation: string, path: string | undefined, run: () => Promise<T>): Promise<T> {
  built.requests++;
  const context: RequestContext = { operation, sessionId: sessionHex(zk.sessionId) };
  if (path !== undefined) context.path = path;
  setServer(context, zk.remoteAddress);
  return requestTrace.tracePromise(run, context);
}

/** Whether anyone listens to connection attempts (the session builds no context otherwise). */
export function tracingConnects(): boolean {
  return traced(connectTrace);
}

/** One connection attempt's `zookeeper-ts:connect` trace, settled once when the attempt is over. */
export interface ConnectTrace {
  settled(sessionId: bigint | null, error?: Error): void;
}

/** A connection attempt's trace, told by the session: `started` now, then `settled` once, with the error if it failed. */
export function traceConnect(host: string, port: number): ConnectTrace {
  const context: ConnectContext = { serverAddress: host, serverPort: port };
  const t = connectTrace;
  t.start.publish(context);
  t.end.publish(context);
  return {
    settled(sessionId, error) {
      if (sessionId !== null && sessionId !== 0n) context.sessionId = sessionHex(sessionId);
      if (error) {
        context.error = error;
        t.error.publish(context);
      }
      t.asyncStart.publish(context);
      t.asyncEnd.publish(context);
    },
  };
}

/** `zookeeper-ts:session`, when subscribed. */
export function publishState(sessionId: bigint, from: SessionState, to: SessionState): void {
  if (!sessionChannel.hasSubscribers) return;
  sessionChannel.publish({ sessionId: sessionHex(sessionId), from, to } satisfies SessionMessage);
}

/** Whether `zookeeper-ts:watch` has subscribers (checked before a message is built). */
export function tracingWatches(): boolean {
  return watchChannel.hasSubscribers;
}

/** `zookeeper-ts:watch`: one delivered watch event. */
export function publishWatch(sessionId: bigint, type: string, path: string | null): void {
  watchChannel.publish({ sessionId: sessionHex(sessionId), type, path } satisfies WatchMessage);
}
