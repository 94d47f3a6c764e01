// zookeeper-ts/otel: an OpenTelemetry bridge over the client's diagnostics channels. It depends only on
// @opentelemetry/api (an optional peer dependency); the SDK, exporters and context manager are the
// application's. One CLIENT span per operation, named "{operation} {path}" ("multi" for multi), whose
// parent is the caller's active span (for a call made by another public call, that call's span); the histogram db.client.operation.duration (seconds). Session state
// changes become span events on the calls in flight when they happen, and election and lock events span
// events on the span active where the recipe emitted them (on a span "{election|lock} {path}" of their own
// when none is open there): @opentelemetry/api has no log records (those are
// @opentelemetry/api-logs, a second dependency), and an event next to the calls it explains (a call slowed
// or failed by a disconnect; leadership changing inside the application's own span) is where a reader of a
// trace looks. Time is read on systemClock (performance.now(), as OpenTelemetry reads it), not on a client's Clock.
import { AsyncLocalStorage } from "node:async_hooks";
import * as dc from "node:diagnostics_channel";
import { type Context, type Histogram, type MeterProvider, type Span, SpanKind, SpanStatusCode, type TracerProvider, context, metrics, trace } from "@opentelemetry/api";
import { systemClock } from "../client/clock.ts";
import { CHANNELS, type RequestContext, type SessionMessage } from "../client/diagnostics.ts";
import { VERSION } from "../client/version.ts";

/** Where the spans and the histogram go (the global providers by default). */
export interface InstrumentOptions {
  /** Default: the global tracer provider (`trace.getTracerProvider()`). */
  tracerProvider?: TracerProvider;
  /** Default: the global meter provider (`metrics.getMeterProvider()`). */
  meterProvider?: MeterProvider;
}

const NAME = "zookeeper-ts";
const SYSTEM = "zookeeper";

/** The message of `zookeeper-ts:election` and `zookeeper-ts:lock`. */
interface RecipeMessage {
  path: string;
  id?: string;
  event: string;
  reason?: string;
  token?: bigint | string;
}

interface Handlers {
  start(message: unknown): void;
  end(message: unknown): void;
  asyncStart(message: unknown): void;
  asyncEnd(message: unknown): void;
  error(message: unknown): void;
}
interface TracingSubscribable {
  subscribe(handlers: Handlers): void;
  unsubscribe(handlers: Handlers): void;
  readonly start: {
    bindStore?<T>(store: AsyncLocalStorage<T>, transform: (message: unknown) => T): void;
    unbindStore?<T>(store: AsyncLocalStorage<T>): boolean;
  };
}

/**
 * What runs inside one traced call (its code and what it awaits): the call's span as a parent for the public calls
 * it makes itself (deleteRecursive's listings and deletes, create's parents), as long as the application's
 * active context is still `outer`, the one the call was made in. A context the application opened since wins.
 */
interface Within {
  outer: Context;
  inner: Context;
}

const errorType = (e: unknown): string => {
  const x = e as { codeName?: unknown; name?: unknown } | null;
  if (x && typeof x.codeName === "string") return x.codeName;
  return x && typeof x.name === "string" ? x.name : "Error";
};

/**
 * Subscribes to the client's channels and turns them into spans and a histogram. Returns `off()`, which
 * unsubscribes (calls in flight then end without a span update).
 */
export function instrument(options: InstrumentOptions = {}): () => void {
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(NAME, VERSION);
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(NAME, VERSION);
  const duration: Histogram = meter.createHistogram("db.client.operation.duration", {
    description: "Duration of ZooKeeper client operations",
    unit: "s",
  });
  const spans = new WeakMap<object, { span: Span; started: number }>();
  const inFlight = new Map<string, Set<Span>>(); // by session id: the spans a state change is told to

  const within = new AsyncLocalStorage<Within>();
  /** Opens the call's span, in the caller's context; what the call's own code then runs within. */
  const open = (message: unknown): Within => {
    const c = message as RequestContext;
    const active = context.active();
    const enclosing = within.getStore();
    const parent = enclosing !== undefined && enclosing.outer === active ? enclosing.inner : active;
    const attributes: Record<string, string | number> = { "db.system.name": SYSTEM, "db.operation.name": c.operation };
    if (c.serverAddress !== undefined) attributes["server.address"] = c.serverAddress;
    if (c.serverPort !== undefined) attributes["server.port"] = c.serverPort;
    const name = c.path === undefined ? c.operation : `${c.operation} ${c.path}`;
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    spans.set(c, { span, started: systemClock.now() });
    let set = inFlight.get(c.sessionId);
    if (!set) inFlight.set(c.sessionId, (set = new Set()));
    set.add(span);
    return { outer: active, inner: trace.setSpan(parent, span) };
  };
  const requestTrace = dc.tracingChannel(CHANNELS.request) as unknown as TracingSubscribable;
  // Node, Bun and Deno bind a store to the start channel (tracePromise runs the call inside it); without that the
  // span is opened by the start event, and a call's own calls are its siblings.
  const bound = typeof requestTrace.start.bindStore === "function" && typeof requestTrace.start.unbindStore === "function";

  const request: Handlers = {
    start(message) {
      if (!bound) open(message);
    },
    end() {},
    asyncStart() {},
    error(message) {
      const c = message as RequestContext;
      const s = spans.get(c);
      if (!s) return;
      const type = errorType(c.error);
      s.span.setAttribute("db.response.status_code", type);
      s.span.setAttribute("error.type", type);
      s.span.setStatus({ code: SpanStatusCode.ERROR, message: c.error instanceof Error ? c.error.message : type });
    },
    asyncEnd(message) {
      const c = message as RequestContext;
      const s = spans.get(c);
      if (!s) return;
      spans.delete(c);
      const set = inFlight.get(c.sessionId);
      set?.delete(s.span);
      if (set?.size === 0) inFlight.delete(c.sessionId);
      s.span.end();
      const attributes: Record<string, string> = { "db.system.name": SYSTEM, "db.operation.name": c.operation };
      if (c.error !== undefined) attributes["error.type"] = errorType(c.error);
      duration.record((systemClock.now() - s.started) / 1000, attributes);
    },
  };

  const onSession = (message: unknown): void => {
    const m = message as SessionMessage;
    for (const span of inFlight.get(m.sessionId) ?? []) span.addEvent("zookeeper.session.state", { "zookeeper.session.from": m.from, "zookeeper.session.to": m.to });
  };
  const onRecipe = (kind: "election" | "lock") => (message: unknown): void => {
    const m = message as RecipeMessage;
    const attributes: Record<string, string> = { [`zookeeper.${kind}.path`]: m.path };
    if (m.id !== undefined) attributes[`zookeeper.${kind}.id`] = m.id;
    if (m.reason !== undefined) attributes[`zookeeper.${kind}.reason`] = m.reason;
    if (m.token !== undefined) attributes[`zookeeper.${kind}.token`] = String(m.token);
    const name = `zookeeper.${kind}.${m.event}`;
    const active = trace.getSpan(context.active());
    if (active?.isRecording()) return void active.addEvent(name, attributes);
    // No open span here: a change found from a watch on a runtime whose sockets do not carry the caller's
    // async context (Deno), or after the application's span ended. The event goes on a span of its own,
    // "{kind} {path}" (INTERNAL, no duration), a child of whatever context is active: never dropped.
    const own = tracer.startSpan(`${kind} ${m.path}`, { kind: SpanKind.INTERNAL, attributes: { "db.system.name": SYSTEM } }, context.active());
    own.addEvent(name, attributes);
    own.end();
  };
  const onElection = onRecipe("election");
  const onLock = onRecipe("lock");

  if (bound) requestTrace.start.bindStore!(within, open);
  requestTrace.subscribe(request);
  dc.subscribe(CHANNELS.session, onSession);
  dc.subscribe(CHANNELS.election, onElection);
  dc.subscribe(CHANNELS.lock, onLock);
  let on = true;
  return () => {
    if (!on) return;
    on = false;
    requestTrace.unsubscribe(request);
    if (bound) requestTrace.start.unbindStore!(within);
    dc.unsubscribe(CHANNELS.session, onSession);
    dc.unsubscribe(CHANNELS.election, onElection);
    dc.unsubscribe(CHANNELS.lock, onLock);
  };
}
