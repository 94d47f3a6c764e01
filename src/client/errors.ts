// The one error type of the public API: ZooKeeper's KeeperException code plus the path and op.
import { ErrorCode, errorCodeName } from "../protocol/constants.ts";
import type { OpResult } from "./types.ts";

/**
 * The brand every ZooKeeperError carries, shared through the global symbol registry so that the ESM and
 * the CommonJS build (or two installed copies) recognise each other's errors.
 */
const BRAND = Symbol.for("zookeeper-ts.ZooKeeperError");

/**
 * The one error type of the public API: every operation rejects with it. `code` is ZooKeeper's KeeperException
 * code (`ErrorCode`); test it with `isZooKeeperError(e, ErrorCode.NONODE)` or `e.code === ErrorCode.NONODE`.
 */
export class ZooKeeperError extends Error {
  /**
   * `err instanceof ZooKeeperError` is true for a ZooKeeperError of any copy of this package (ESM, CommonJS,
   * or another version installed next to this one), not only for this module's own class.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null || (value as Record<symbol, unknown>)[BRAND] !== true) return false;
    if (this === ZooKeeperError) return true;
    // A subclass (e.g. a recipe's LockNotReentrantError): that class of any copy, found by name on the prototype chain.
    for (let p: unknown = Object.getPrototypeOf(value); p; p = Object.getPrototypeOf(p)) {
      if ((p as { constructor?: { name?: string } }).constructor?.name === this.name) return true;
    }
    return false;
  }


  /** ZooKeeper's KeeperException code, e.g. -101. */
  readonly code: ErrorCode;
  /** The code's name, e.g. "NONODE". */
  readonly codeName: string;
  /** The path the failed operation was given (inside the chroot), when it had one. */
  readonly path?: string;
  /** The operation that failed, e.g. "create". */
  readonly op?: string;
  /** For multi: the per-op results. */
  readonly results?: OpResult[];
  /**
   * Whether the request left the client, on a failure that came without the server's answer (CONNECTIONLOSS,
   * SESSIONEXPIRED): `false`, it was never written to a connection, so it did not happen and can always be sent
   * again; `true`, it was written and its reply never came, so it may have happened. Absent on the server's
   * own answers (NONODE, BADVERSION, ...: the request reached the server and was refused) and on errors
   * raised before anything could be sent (BADARGUMENTS, UNIMPLEMENTED).
   */
  readonly sent?: boolean;

  /** Builds the error; the message is `CODENAME (op path): message`, then "(not sent)" on a CONNECTIONLOSS never sent, "(sent: ...)" on any loss of a sent request. */
  constructor(code: ErrorCode, message?: string, details: { path?: string; op?: string; results?: OpResult[]; cause?: unknown; sent?: boolean } = {}) {
    const codeName = errorCodeName(code);
    const where = [details.op, details.path].filter(Boolean).join(" ");
    // Said in the message where it matters: a connection loss either way, any loss of a request that was sent.
    const sent = details.sent === true ? " (sent: it may have been applied)" : details.sent === false && code === ErrorCode.CONNECTIONLOSS ? " (not sent)" : "";
    super(`${codeName}${where ? ` (${where})` : ""}${message ? `: ${message}` : ""}${sent}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ZooKeeperError";
    this.code = code;
    this.codeName = codeName;
    if (details.path !== undefined) this.path = details.path;
    if (details.op !== undefined) this.op = details.op;
    if (details.results !== undefined) this.results = details.results;
    if (details.sent !== undefined) this.sent = details.sent;
  }
}

Object.defineProperty(ZooKeeperError.prototype, BRAND, { value: true });

export function badArguments(message: string, op?: string, path?: string): ZooKeeperError {
  return new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op, path });
}

/**
 * A write whose outcome nobody can tell: an attempt was sent and its reply lost, and what came after (a later
 * attempt's answer, a read of the node) cannot say whether the server applied it. Code CONNECTIONLOSS and
 * `sent: true`, like the lost attempt itself; `attempts` holds every attempt's error, oldest first (and a
 * read-back's, when that failed too). Never retried by `withRetry`.
 */
export class OutcomeUnknownError extends ZooKeeperError {
  /** Each attempt's error, oldest first: at least one of them was sent and lost its reply. */
  readonly attempts: readonly unknown[];

  /** `why` ends the message: what the later attempts and the read-back found. */
  constructor(attempts: readonly unknown[], why: string, details: { op?: string; path?: string } = {}) {
    super(ErrorCode.CONNECTIONLOSS, `the outcome is unknown: ${why}`, { op: details.op, path: details.path, cause: attempts[attempts.length - 1] });
    this.name = "OutcomeUnknownError";
    this.attempts = attempts;
    // Not through the constructor: the message says "the outcome is unknown" instead of "(sent: ...)".
    Object.defineProperty(this, "sent", { value: true, enumerable: true });
  }
}

/** True when `e` is a ZooKeeperError of any copy of this package (ESM or CommonJS), with `code` when given. */
export function isZooKeeperError(e: unknown, code?: ErrorCode): e is ZooKeeperError {
  return e instanceof ZooKeeperError && (code === undefined || e.code === code);
}
