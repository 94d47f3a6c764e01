// The one description of a call and the one record of a request on the wire. A public method writes a Call
// (what the call is: its name and path for errors, its needs, signal, reply hook, result mapping); Session.send
// turns it, with an op table entry and a body, into a Pending: the frame (its xid written by the connection
// when it queues the frame), which waits in the session's queue or the connection's pipeline and settles the
// promise from the reply. The client's own frames (auth, SetWatches, SASL, feature probes, closeSession) are
// Pendings too, on the "own" lane.
import { ErrorCode, OpCode, Xid } from "../../protocol/constants.ts";
import { encodeRequest, frameWriter } from "../../protocol/frame.ts";
import type { JuteReader, JuteWriter } from "../../protocol/jute.ts";
import { ZooKeeperError } from "../errors.ts";
import type { ServerFeatures } from "../types.ts";
import type { Watcher } from "../types.ts";
import type { WatchKind, WatchRegistry } from "../watches/watches.ts";
import { addChroot } from "../../protocol/path.ts";

/** What an "own" call needs of its connection (a Connection is one): to put a request on it. */
interface Link {
  send(p: Pending): void;
}

/** A feature of `ServerFeatures` (every field but `generation`). */
export type Feature = Exclude<keyof ServerFeatures, "generation">;

/** What a request needs from the server: features, and how to name them in the error. */
export interface Needs {
  features: readonly Feature[];
  /** e.g. "addWatch", or "multi with a container create". */
  what: string;
}

/** The part of an `Ops` table entry a request uses: the opcode and the two codecs of the client's side. */
export interface CallSpec<Req, Res> {
  readonly code: number;
  writeRequest(w: JuteWriter, req: Req): void;
  readResponse(r: JuteReader): Res;
}

/**
 * Whose frame it is. "call": the caller's (a public operation's): it waits for a connection while there is none,
 * is refused locally when the server lacks a feature it needs, and its reply's zxid moves the session's
 * lastZxid. "own": the client's own frames on the link being primed or served (auth, SetWatches, SASL, feature
 * probes, closeSession): never queued (no link: CONNECTIONLOSS), never moving lastZxid (docs/session-states.md,
 * "Priming a new connection").
 */
type Lane = "call" | "own";

/**
 * What every request of a session shares (one object per session, given to each Pending): the client's chroot,
 * for `result`; who the session authenticated as, for NOAUTH's message; the largest frame the server takes.
 */
export interface CallContext {
  readonly chroot: string;
  readonly maxBufferSize: number;
  /** Where a call's `watcher` is registered when its reply comes (none for the connection's pings). */
  readonly watches?: WatchRegistry;
  /** Who the session authenticated as (credentialName's names, never secrets), for a NOAUTH's message (read only then). */
  readonly credentials?: readonly string[];
  /** Told of every call that was sent and lost its reply (outcome.ts), so that a later attempt can be resolved. */
  readonly lost?: { record(call: Call<unknown, unknown>, error: ZooKeeperError): void };
}

/**
 * One call, from the public method down: made per call (an object literal) and held by its Pending until the
 * reply, which registers its `watcher`. Nothing is added to it once made (the client's own frames' `answer()`
 * aside): a property added to an object literal after it is made costs it a backing store of its own.
 */
export interface Call<Res, Out> {
  /** The operation's name, for errors ("getData", "createWithStat", "sasl", ...). */
  op: string;
  /** The path the caller gave (inside the chroot), for errors. */
  path?: string;
  /** Default "call". */
  lane?: Lane;
  /** The "own" lane's link: the client's own frames belong to one connection and never go on another. */
  via?: Link;
  /** Server features the request needs: refused locally (UNIMPLEMENTED, nothing sent) when missing. */
  needs?: Needs;
  /** Validated by `signalOf`; an abort rejects the call with its reason (a request still waiting is never sent). */
  signal?: AbortSignal;
  /** Runs in the receive path with the reply's code, before the promise settles (go-zookeeper's recvFunc); not with a `watcher`. */
  onReply?: (err: number) => void;
  /**
   * Registered in the receive path, before the promise settles, on `path` as the server knows it (in the chroot
   * unless `absolute`): as `watchAs` on OK, as `watchAsIfNoNode` on NONODE.
   */
  watcher?: Watcher;
  /** The watch table `watcher` goes into on OK. */
  watchAs?: WatchKind;
  /** The watch table `watcher` goes into on NONODE (exists: the server keeps a watch for the creation). */
  watchAsIfNoNode?: WatchKind;
  /** Runs instead of `onReply` for a reply that arrives after `signal` aborted. */
  abandoned?: (err: number) => void;
  /** Maps the decoded reply, e.g. server paths back into the chroot; a throw rejects the call. */
  result?: (res: Res, chroot: string) => Out;
  /** The body's `path` is a server path already (outside the chroot: /zookeeper/config). */
  absolute?: boolean;
  /** A write whose bytes are its own (WriteOptions.uniqueData): found after a loss, they prove it applied (outcome.ts). */
  unique?: boolean;
  /**
   * Not a `zookeeper-ts:request` trace of its own (caller.ts): the client's own calls, and those inside an operation
   * traced as one (a linearizable read's read, a create's attempts around making its parents, multiRead's, ...).
   */
  untraced?: boolean;
  /** NONODE resolves null (exists: a missing node is an answer); applied by Caller.request after the chroot's check. */
  noNodeIsNull?: boolean;
}

/** A Pending's frame once the connection took it. */
const SENT = new Uint8Array(0);

/** The writer every request is encoded with (one frame at a time; the bytes are copied out). */
const writer: JuteWriter = frameWriter;

// Byte stores, not a DataView: reading `.buffer` of a small on-heap typed array makes V8 copy it out.
function patchXid(frame: Uint8Array, xid: number): void {
  frame[4] = xid >>> 24;
  frame[5] = xid >>> 16;
  frame[6] = xid >>> 8;
  frame[7] = xid;
}

/**
 * `spec`'s request frame for `body` (its xid still to come, unless fixed); throws BADARGUMENTS for what cannot be
 * encoded or is over the server's `maxBufferSize` (the server drops a connection that sends one).
 */
export function encodeCall(spec: CallSpec<never, unknown>, body: unknown, call: Call<never, unknown>, context: CallContext): Uint8Array {
  let frame: Uint8Array;
  try {
    frame = encodeRequest(spec.code === OpCode.auth ? Xid.AUTH : spec.code === OpCode.ping ? Xid.PING : 0, spec.code, spec.writeRequest as (w: JuteWriter, body: unknown) => void, body, writer);
  } catch (e) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `cannot encode request: ${(e as Error).message}`, { op: call.op, path: call.path });
  }
  if (frame.length - 4 > context.maxBufferSize) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `request of ${frame.length - 4} bytes exceeds maxBufferSize ${context.maxBufferSize}: send less, or raise maxBufferSize together with the servers' jute.maxbuffer`, { op: call.op, path: call.path });
  }
  return frame;
}

/** The identities a session holds, for NOAUTH's message: the names of `credentialName`, or no one. */
export function identitiesText(names: readonly string[]): string {
  if (names.length === 0) return "no one (world:anyone)";
  const list = [...new Set(names)].join(", ");
  // The server takes any digest password and makes an identity of it: a wrong one shows only here, as NOAUTH.
  return names.some((n) => n.startsWith("digest ")) ? `${list} (a wrong digest password is not refused: it gives an identity no ACL names)` : list;
}

/**
 * A request from Session.send until its reply (or its failure): one object per request (its methods are shared,
 * not closures made per call), with its frame from `encodeCall`.
 */
export class Pending {
  /** Written into the frame by `takeFrame` when the connection queues it (AuthPacket: always -4; ping: -2). */
  xid: number;
  /** Clock time its write was gathered (set by the connection; its reply acknowledges this send). */
  sentAt = 0;
  /** Its place among the frames its connection queued (1, 2, ...): the connection knows how many it wrote. */
  seq = 0;
  readonly opcode: number;
  /** The request's bytes until the connection takes them (takeFrame): a frame is a view of an arena block, kept alive by it. */
  frame: Uint8Array;
  readonly call: Call<unknown, unknown>;
  private readonly context: CallContext;
  private readonly decode: (r: JuteReader) => unknown;
  private readonly resolve: (v: unknown) => void;
  private readonly reject: (e: unknown) => void;
  /** Set once the caller's signal aborted: the promise is settled, a late reply runs `call.abandoned` only. */
  private abandonedAt: AbortSignal | null = null;
  private unlisten: (() => void) | null = null;

  /**
   * `frame` is `encodeCall`'s for `spec` and `call` (kept apart: a constructor that also encodes is too large for
   * V8 to inline the writer's methods into it). `spec`, `call` and `resolve` agree on the reply's type (Session.send's
   * signature says so; stored untyped).
   */
  constructor(spec: CallSpec<never, unknown>, frame: Uint8Array, call: Call<never, unknown>, context: CallContext, resolve: (v: never) => void, reject: (e: unknown) => void) {
    this.opcode = spec.code;
    this.xid = spec.code === OpCode.auth ? Xid.AUTH : spec.code === OpCode.ping ? Xid.PING : 0; // as encodeCall wrote it (inline: V8 did not inline a helper for the two, a call more per request)
    this.frame = frame;
    this.call = call as Call<unknown, unknown>;
    this.context = context;
    this.decode = spec.readResponse;
    this.resolve = resolve as (v: unknown) => void;
    this.reject = reject;
    if (call.signal) this.listen(call.signal);
  }

  /** The caller's signal aborted: the promise is settled, and a request still unsent is never sent. */
  get abandoned(): boolean {
    return this.abandonedAt !== null;
  }

  /** The caller's request: its reply's zxid moves the session's lastZxid (connection.ts). */
  get tracksZxid(): boolean {
    return this.call.lane !== "own";
  }

  /** Server features the request needs (checked by the session before it goes on the wire). */
  get needs(): Needs | undefined {
    return this.call.needs;
  }

  /**
   * The frame, for the connection's write as it queues it, with `xid` written in now (xids follow the order on
   * the wire; auth and ping keep their fixed ones). The Pending keeps no frame: it waits for its reply, often
   * long, and a frame is a view of an arena block, which it would keep alive.
   */
  takeFrame(xid: number): Uint8Array {
    const frame = this.frame;
    this.frame = SENT;
    if (this.xid >= 0) {
      this.xid = xid;
      patchXid(frame, xid);
    }
    return frame;
  }

  /** An abort of `signal` rejects the promise at once with its reason (a request already sent may still apply). */
  private listen(signal: AbortSignal): void {
    if (signal.aborted) {
      this.abandonedAt = signal;
      this.reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      this.abandonedAt = signal;
      this.unlisten = null;
      this.reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    this.unlisten = () => signal.removeEventListener("abort", onAbort);
  }

  /** The reply, with its error code; `body` is positioned after the header (null when err != 0). */
  onReply(err: number, body: JuteReader | null): void {
    const call = this.call;
    if (this.abandonedAt !== null) {
      call.abandoned?.(err);
      return;
    }
    if (call.watcher !== undefined) this.watch(err);
    else call.onReply?.(err);
    if (err !== 0) {
      const credentials = this.context.credentials;
      this.fail(new ZooKeeperError(err as ErrorCode, err === ErrorCode.NOAUTH && credentials ? `not authorized; this session authenticated as: ${identitiesText(credentials)}; authenticate as an identity the node's ACL grants (connect's auth option, or addAuthInfo)` : undefined, { op: call.op, path: call.path }));
      return;
    }
    let value: unknown;
    try {
      value = body ? this.decode(body) : undefined;
    } catch (e) {
      this.fail(new ZooKeeperError(ErrorCode.MARSHALLINGERROR, `malformed reply: ${(e as Error).message}`, { op: call.op, path: call.path }));
      throw e; // the connection drops: the stream cannot be trusted any more
    }
    const map = call.result;
    if (map !== undefined) {
      // Mapped here rather than in a .then of the caller's promise: one promise and one closure fewer per call.
      try {
        value = map(value, this.context.chroot);
      } catch (e) {
        this.fail(e); // the reply was fine: the link stays
        return;
      }
    }
    this.unlisten?.();
    this.resolve(value);
  }

  /** Registers the call's watcher for its reply's code `err` (no notification can come between the two). */
  private watch(err: number): void {
    const call = this.call;
    const kind = err === ErrorCode.OK ? (call.watchAs ?? "data") : err === ErrorCode.NONODE ? call.watchAsIfNoNode : undefined;
    if (kind === undefined) return;
    const path = call.path!;
    this.context.watches!.add(kind, call.absolute === true ? path : addChroot(this.context.chroot, path), call.watcher!);
  }

  /**
   * Never answered: the link went (CONNECTIONLOSS), the session ended, or the request was refused locally.
   * `sent`: whether its frame was written to a link (then it may have been applied), for the loss codes only.
   */
  onFail(code: number, reason: string, sent?: boolean): void {
    if (this.abandonedAt !== null) return;
    const call = this.call;
    const e = new ZooKeeperError(code as ErrorCode, reason, { op: call.op, path: call.path, sent });
    if (sent === true && call.lane !== "own") this.context.lost?.record(call, e);
    this.fail(e);
  }

  private fail(e: unknown): void {
    this.unlisten?.();
    this.reject(e);
  }
}

/** Session.send's shape: the one way a frame goes out (the caller's calls and the client's own frames alike). */
export type Send = <Req, Res, Out = Res>(spec: CallSpec<Req, Res>, body: Req, call: Call<Res, Out>) => Promise<Out>;

/**
 * Sends one of the client's own frames and resolves with the server's answer: an error code from the server is an
 * answer here (a probe's NONODE, a refused SASL token), not a failure. `err` 0 comes with the decoded reply.
 * Rejects only when no answer came (the link went, the session ended) or an OK reply did not decode.
 */
export function answer<Req, Res>(send: Send, spec: CallSpec<Req, Res>, body: Req, call: Call<Res, Res>): Promise<{ err: number; value: Res | undefined }> {
  let answered = 0;
  call.onReply = (err) => {
    answered = err;
  };
  return send(spec, body, call).then(
    (value) => ({ err: 0, value }),
    (e: unknown) => {
      if (answered !== 0) return { err: answered, value: undefined };
      throw e;
    },
  );
}
