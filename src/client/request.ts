// A user request as the client layer describes it, and its translation into a frame (xid patched in
// at send time) plus the InFlight entry that settles the caller's promise from the reply.
import { ErrorCode } from "../protocol/constants.ts";
import { encodeRequest } from "../protocol/frame.ts";
import type { JuteReader, JuteWriter } from "../protocol/jute.ts";
import type { InFlight } from "./connection.ts";
import { ZooKeeperError } from "./errors.ts";
import type { Needs } from "./features.ts";

export interface Request<T> {
  opcode: number;
  /** Name and client path for error messages. */
  op: string;
  path?: string;
  /** Writes the body (`body` is handed to it, so an `Ops` table codec needs no closure per request). */
  write?(w: JuteWriter, body: unknown): void;
  /** The request record `write` encodes. */
  body?: unknown;
  decode?: (r: JuteReader) => unknown;
  /** Maps the decoded reply (with `chroot`) in the receive path, before the promise settles; a throw rejects. */
  result?: ((res: never, chroot: string) => T) | undefined;
  /** The client's chroot, for `result`. */
  chroot?: string;
  /** Runs in the receive path with the reply's error code, before the promise settles. */
  onReply?: (err: number) => void;
  /** While the request waits for a connection, an abort drops it unsent (the caller already rejected). */
  signal?: AbortSignal;
  /** Server features this request needs; refused locally (UNIMPLEMENTED) when the server lacks one. */
  needs?: Needs;
  /** Who the session authenticated as, for a NOAUTH's message (called only then; never secrets). */
  identities?: () => string;
}

/** Encodes `req` with xid 0 (patched by patchXid); throws BADARGUMENTS when it cannot be sent. */
export function encodeUserRequest<T>(req: Request<T>, writer: JuteWriter, maxBufferSize: number): Uint8Array {
  let frame: Uint8Array;
  try {
    frame = encodeRequest(0, req.opcode, req.write, req.body, writer);
  } catch (e) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `cannot encode request: ${(e as Error).message}`, { op: req.op, path: req.path });
  }
  // The server drops a connection that sends a frame above its jute.maxbuffer: refuse it here instead.
  if (frame.length - 4 > maxBufferSize) {
    throw new ZooKeeperError(ErrorCode.BADARGUMENTS, `request of ${frame.length - 4} bytes exceeds maxBufferSize ${maxBufferSize}`, { op: req.op, path: req.path });
  }
  return frame;
}

// Byte stores, not a DataView: reading `.buffer` of a small on-heap typed array makes V8 copy it out.
export function patchXid(frame: Uint8Array, xid: number): void {
  frame[4] = xid >>> 24;
  frame[5] = xid >>> 16;
  frame[6] = xid >>> 8;
  frame[7] = xid;
}

/** NOAUTH's message: the identities the session holds (the same NOAUTH otherwise hides a wrong password). */
function notAuthorized(req: Request<unknown>): string | undefined {
  return req.identities ? `not authorized; this session authenticated as: ${req.identities()}` : undefined;
}

/** The pipeline entry for `req`: decodes the reply and settles the promise. */
export function inFlightFor<T>(req: Request<T>, resolve: (v: T) => void, reject: (e: Error) => void): InFlight {
  return new PendingCall(req, resolve, reject);
}

/** A user request in the pipeline: one object per call (its methods are shared, not closures made per call). */
class PendingCall<T> implements InFlight {
  xid = 0;
  sentAt = 0;
  /** The caller's request: its reply's zxid moves the session's lastZxid (connection.ts). */
  readonly tracksZxid = true;
  readonly opcode: number;
  readonly needs: Needs | undefined;
  private readonly req: Request<T>;
  private readonly resolve: (v: T) => void;
  private readonly reject: (e: Error) => void;

  constructor(req: Request<T>, resolve: (v: T) => void, reject: (e: Error) => void) {
    this.opcode = req.opcode;
    this.needs = req.needs;
    this.req = req;
    this.resolve = resolve;
    this.reject = reject;
  }

  onReply(err: number, body: JuteReader | null): void {
    const req = this.req;
    req.onReply?.(err);
    if (err !== 0) {
      this.reject(new ZooKeeperError(err as ErrorCode, err === ErrorCode.NOAUTH ? notAuthorized(req) : undefined, { op: req.op, path: req.path }));
      return;
    }
    let value: unknown;
    try {
      value = req.decode && body ? req.decode(body) : undefined;
    } catch (e) {
      this.reject(new ZooKeeperError(ErrorCode.MARSHALLINGERROR, `malformed reply: ${(e as Error).message}`, { op: req.op, path: req.path }));
      throw e; // the connection drops: the stream cannot be trusted any more
    }
    const map = req.result as ((res: unknown, chroot: string) => T) | undefined;
    if (map === undefined) {
      this.resolve(value as T);
      return;
    }
    // Mapped here rather than in a .then of the caller's promise: one promise and one closure fewer per call.
    try {
      value = map(value, req.chroot ?? "");
    } catch (e) {
      this.reject(e as Error); // the reply was fine: the link stays
      return;
    }
    this.resolve(value as T);
  }

  onFail(code: number, reason: string): void {
    this.reject(new ZooKeeperError(code as ErrorCode, reason, { op: this.req.op, path: this.req.path }));
  }
}
