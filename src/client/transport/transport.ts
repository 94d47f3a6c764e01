// The only file that opens TCP sockets (udp.ts beside it opens the KDC exchange's UDP ones): dials a host
// over node:net or node:tls (both exist in Node, Bun and Deno) and exposes it as a Link. Everything above
// sees only the Transport interface, so a user can put a proxy (SOCKS, HTTP CONNECT), Deno.connect or a
// test double in its place (ConnectOptions.transport), and tests can put a fault proxy in between.
import { connect as netConnect, isIP, type Socket } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { type HostPort, hostText } from "../../protocol/connect-string.ts";
import { systemClock } from "../clock.ts";
import type { TlsOptions, TlsSetting } from "./tls-options.ts";
import { loadTls, tlsNeedsLoading } from "./tls-files.ts";

/** A duplex byte stream to one server, as a Transport gives it. */
export interface Link {
  /** Queues bytes; false means the socket buffer is full and the caller should wait for onDrain. */
  write(bytes: Uint8Array): boolean;
  /** Tears the link down at once; onClose follows. */
  close(): void;
  /** "host:port" of the server, for messages and `zk.remoteAddress`. */
  readonly remote: string;
}

/** Where a Transport delivers what happens on a Link (after connect() resolved). */
export interface LinkHandlers {
  /** Bytes from the server, in order. */
  onData(chunk: Uint8Array): void;
  /** The Link can take writes again after write() returned false. */
  onDrain(): void;
  /** The stream ended (with the error, if any); called once, and not after Link.close(). */
  onClose(error?: Error): void;
}

/** What a connect() is asked for: TLS (ConnectOptions.tls as given) and how long establishing may take. */
export interface DialOptions {
  /** true, or TLS options (ConnectOptions.tls as given): the stream must be TLS. */
  tls?: boolean | TlsOptions;
  /** Give up (reject) after this many ms. */
  timeoutMs: number;
  /**
   * Aborted when the client gives up on this dial (its connect timeout, on the client's clock): close what
   * was opened and reject. The client does not wait for a Transport that ignores it: a link that comes after
   * the abort is closed at once. Without a signal, `timeoutMs` on `systemClock` bounds the default transport.
   * The client makes it when a Transport first reads it (an AbortSignal costs more than the rest of a dial's
   * bookkeeping): a spread copy of the options reads it, and carries it.
   */
  signal?: AbortSignal;
}

/**
 * How the client reaches a server (ConnectOptions.transport; default `defaultTransport`, node:net or node:tls).
 * connect() resolves with a Link once the stream is open (for TLS: once the TLS handshake is done), or
 * rejects (a refused certificate as an Error with the runtime's `code`, so it is not retried).
 */
export interface Transport {
  /** Opens a link to `target`; `handlers` hear its data, drain and close from then on. */
  connect(target: HostPort, handlers: LinkHandlers, options: DialOptions): Promise<Link>;
}

/** The internal shape of a Transport (the `dialer` test seam of the simulation and the soak). */
export type Dialer = (target: HostPort, handlers: LinkHandlers, opts: DialOptions) => Promise<Link>;

/**
 * One dial's options and its cancellation (dialWithin makes one per dial). The default transport listens to it
 * directly; `signal`, a real AbortSignal, is made only when something reads it (aborted at once if the dial was
 * already cancelled): a dial through the default transport makes no AbortController, which costs more than the
 * rest of a dial's bookkeeping. A Transport's connect() is given TransportDialOptions over it.
 */
export class DialRequest implements DialOptions, Expiring {
  readonly tls: boolean | TlsOptions | undefined;
  readonly timeoutMs: number;
  /** Why the dial was cancelled, once it was. */
  reason: Error | null = null;
  private controller: AbortController | null = null;
  private hook: ((reason: Error) => void) | null = null;
  /** Where it dials, for its timeout's message (private: not a DialOptions field a Transport would see). */
  readonly #target: HostPort;

  constructor(target: HostPort, tls: boolean | TlsOptions | undefined, timeoutMs: number) {
    this.#target = target;
    this.tls = tls;
    this.timeoutMs = timeoutMs;
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.reason !== null) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** `fn` runs when the dial is cancelled (one listener: the default transport's); null removes it. */
  listen(fn: ((reason: Error) => void) | null): void {
    this.hook = fn;
  }

  cancel(reason: Error): void {
    if (this.reason !== null) return;
    this.reason = reason;
    const hook = this.hook;
    this.hook = null;
    hook?.(reason);
    this.controller?.abort(reason);
  }

  /** Its deadline passed (the DialDeadline it was given to): cancelled with the timeout's error. */
  deadlinePassed(): void {
    this.cancel(new Error(`connect to ${this.#target.host}:${this.#target.port} timed out after ${this.timeoutMs} ms`));
  }
}

/**
 * What a Transport's connect() is given for a dial: `tls` and `timeoutMs` as data, and `signal` as an own
 * enumerable accessor that reads the dial's (a DialRequest makes its AbortSignal only then; a spread copy
 * reads it, and carries it). The accessor is one function for every dial: an object literal's getter is a new
 * function each time, and V8 then gives each such object a dictionary and a map of its own: slower property
 * reads and garbage on every dial.
 */
export class TransportDialOptions implements DialOptions {
  readonly tls: boolean | TlsOptions | undefined;
  readonly timeoutMs: number;
  declare readonly signal: AbortSignal | undefined;
  readonly #source: DialOptions;
  static readonly #signal: PropertyDescriptor = {
    enumerable: true,
    get(this: TransportDialOptions): AbortSignal | undefined {
      return this.#source.signal;
    },
  };

  constructor(source: DialOptions) {
    this.tls = source.tls;
    this.timeoutMs = source.timeoutMs;
    this.#source = source;
    Object.defineProperty(this, "signal", TransportDialOptions.#signal);
  }
}

/** Whether `host` is an IP address (v4 or v6) rather than a name: what the sockets below take it for. */
export function isIpAddress(host: string): boolean {
  return isIP(host) !== 0;
}

/** The code of a dial error caused by a missing runtime permission (Deno's net permission). */
export const NET_PERMISSION = "ERR_NET_PERMISSION";

export const dialSocket: Dialer = (target, handlers, opts) =>
  new Promise<Link>((resolve, reject) => {
    const remote = hostText(target);
    let socket: Socket;
    if (opts.tls) {
      // TlsOptions (types.ts) is a subset of node:tls's ConnectionOptions, with the same types: passed on as given.
      const extra: ConnectionOptions = opts.tls === true ? {} : (opts.tls as ConnectionOptions);
      // SNI is only for names; an IP address goes in the certificate check via `host`.
      const servername = extra.servername ?? (isIP(target.host) ? undefined : target.host);
      socket = tlsConnect({ host: target.host, port: target.port, ...extra, ...(servername ? { servername } : {}) });
    } else {
      socket = netConnect({ host: target.host, port: target.port });
    }
    let open = false;
    let closed = false;
    const timedOut = (): Error => new Error(`connect to ${remote} timed out after ${opts.timeoutMs} ms`);
    // dialWithin's request is listened to directly (its signal is not read: no AbortSignal is made).
    const cancel = opts instanceof DialRequest ? opts : null;
    const signal = cancel ? undefined : opts.signal;
    const onAbort = (): void => fail(signal?.reason instanceof Error ? signal.reason : timedOut());
    // The client's own deadline (its clock) when it gave a signal or a cancel; else this transport's, on systemClock.
    const timer = signal || cancel ? null : systemClock.setTimeout(() => fail(timedOut()), opts.timeoutMs);
    const stopTimer = (): void => {
      if (timer !== null) systemClock.clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      cancel?.listen(null);
    };
    const fail = (err: Error): void => {
      stopTimer();
      if (!open) {
        closed = true;
        socket.destroy();
        reject(err);
      }
    };
    if (cancel) {
      if (cancel.reason !== null) return fail(cancel.reason);
      cancel.listen(fail);
    } else if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.once(opts.tls ? "secureConnect" : "connect", () => {
      stopTimer();
      open = true;
      socket.setNoDelay(true);
      resolve({
        write: (bytes) => socket.write(bytes),
        close: () => {
          closed = true; // our own close: no onClose for it (nor the work of one), as Link promises
          socket.destroy();
        },
        remote,
      });
    });
    socket.on("data", (chunk: Uint8Array) => {
      if (open && !closed) handlers.onData(chunk);
    });
    socket.on("drain", () => handlers.onDrain());
    socket.on("error", (err: Error & { code?: string }) => {
      // Deno without --allow-net: its NotCapable error names the flag; retrying cannot heal it (see tls-errors.ts).
      if (!open && (err.name === "NotCapable" || err.name === "PermissionDenied")) {
        return fail(Object.assign(new Error(`no permission to connect to ${remote}: ${err.message}`, { cause: err }), { code: NET_PERMISSION }));
      }
      // Name the phase and keep the code: a certificate problem must be visible to the caller, not just "no session".
      if (!open) fail(opts.tls ? Object.assign(new Error(`TLS connection to ${remote} failed${err.code ? ` (${err.code})` : ""}: ${err.message}`, { cause: err }), { code: err.code }) : err);
      else if (!closed) {
        closed = true;
        socket.destroy();
        handlers.onClose(err);
      }
    });
    socket.on("close", () => {
      if (!open) return fail(new Error(`connection to ${remote} closed before it was established`));
      if (!closed) {
        closed = true;
        handlers.onClose();
      }
    });
  });

/** The default Transport: node:net, or node:tls when `tls` is set (Node, Bun and Deno). */
export const defaultTransport: Transport = { connect: dialSocket };

/** What a deadline tells when it passes (an object with a method: no closure made per deadline). */
export interface Expiring {
  /** The deadline, given `afterMs` ms, has passed. */
  deadlinePassed(afterMs: number): void;
}

/**
 * The deadline a dial runs within, on its owner's timer (a session's: session/deadline.ts; a four-letter
 * word's): the dial says what it tells when it passes.
 */
export interface DialDeadline {
  /** `onExpiry` is told when the deadline passes (in place of what was to be). */
  expireWith(onExpiry: Expiring): void;
}

/** Resolves a host name to addresses (ConnectOptions.resolver). */
export type Resolver = (host: string) => Promise<string[]>;

/**
 * Dials `target` through `dialer` (its handlers `handlers`) with a DialRequest (`tls`, `ms`), cancelled when `deadline`
 * passes (the connect timeout is the client's, not the Transport's, `ms` only names it): `failed` is told then, whether
 * or not the Transport heeds the signal, and a link that comes later is closed. Ends by telling `linked` or `failed`,
 * once (callbacks, not a promise: the caller's attempt has one of its own). The deadline is its owner's to stop (after
 * a failed dial, or what follows a link). Within the same deadline, first: a `tls` function or TlsOptions naming files
 * are loaded for this dial (tls-files.ts), and with a `resolver` a host name is resolved, the dial then going to one of
 * its addresses (the name kept as TLS `servername`). A name that does not resolve fails with code ENOTFOUND.
 */
export function dialWithin(
  deadline: DialDeadline,
  ms: number,
  target: HostPort,
  tls: TlsSetting | undefined,
  dialer: Dialer,
  handlers: LinkHandlers,
  resolver: Resolver | undefined,
  linked: (link: Link) => void,
  failed: (error: unknown) => void,
): void {
  const byName = resolver !== undefined && isIP(target.host) === 0;
  if (!byName && !tlsNeedsLoading(tls)) return dialNow(deadline, ms, target, tls, dialer, handlers, linked, failed);
  let expired = false;
  deadline.expireWith({
    deadlinePassed: () => {
      expired = true;
      failed(new Error(`connect to ${hostText(target)} timed out after ${ms} ms (${byName ? "resolving its name" : "loading the TLS material"})`));
    },
  });
  Promise.all([tlsNeedsLoading(tls) ? loadTls(tls) : tls, byName ? resolveHost(resolver, target) : target]).then(
    ([options, address]) => {
      if (!expired) dialNow(deadline, ms, address, address === target ? options : named(options, target.host), dialer, handlers, linked, failed);
    },
    (e: unknown) => {
      if (!expired) failed(e);
    },
  );
}

const notFound = (message: string, cause?: unknown): Error =>
  Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code: "ENOTFOUND" });

/** One of the addresses `resolver` gives for `target`'s name (at random, as the Java client's StaticHostProvider). */
async function resolveHost(resolver: Resolver, target: HostPort): Promise<HostPort> {
  let addresses: unknown;
  try {
    addresses = await resolver(target.host);
  } catch (e) {
    throw notFound(`${target.host} did not resolve: ${e instanceof Error ? e.message : String(e)}`, e);
  }
  const usable = Array.isArray(addresses) ? addresses.filter((a): a is string => typeof a === "string" && a !== "") : [];
  if (usable.length === 0) throw notFound(`${target.host} did not resolve: the resolver gave no address`);
  return { host: usable[Math.floor(Math.random() * usable.length)]!, port: target.port };
}

/** TLS options for a dial to an address resolved from `name`: the name stays the SNI and the certificate check's. */
function named(tls: boolean | TlsOptions | undefined, name: string): boolean | TlsOptions | undefined {
  if (!tls) return tls;
  if (tls === true) return { servername: name };
  return tls.servername === undefined ? { ...tls, servername: name } : tls;
}

/**
 * The dial itself, its DialRequest told when the deadline passes. The default transport (dialSocket) rejects with the
 * request's reason once it is cancelled, and closes its socket: its promise tells the caller. Any other is raced: the
 * request's cancel tells `failed` (its one listener: a Transport sees it only through TransportDialOptions), and a link
 * or a rejection that comes after it is closed or dropped.
 */
function dialNow(
  deadline: DialDeadline,
  ms: number,
  target: HostPort,
  tls: boolean | TlsOptions | undefined,
  dialer: Dialer,
  handlers: LinkHandlers,
  linked: (link: Link) => void,
  failed: (error: unknown) => void,
): void {
  const request = new DialRequest(target, tls, ms);
  deadline.expireWith(request);
  if (dialer === dialSocket) {
    dialSocket(target, handlers, request).then(linked, failed);
    return;
  }
  request.listen(failed);
  try {
    dialer(target, handlers, request).then(
      (link) => {
        if (request.reason !== null) link.close();
        else linked(link);
      },
      (e: unknown) => {
        if (request.reason === null) failed(e);
      },
    );
  } catch (e) {
    failed(e); // a Transport whose connect() threw, or did not return a promise
  }
}
