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

  /** Builds the error; the message is `CODENAME (op path): message`. */
  constructor(code: ErrorCode, message?: string, details: { path?: string; op?: string; results?: OpResult[]; cause?: unknown } = {}) {
    const codeName = errorCodeName(code);
    const where = [details.op, details.path].filter(Boolean).join(" ");
    super(`${codeName}${where ? ` (${where})` : ""}${message ? `: ${message}` : ""}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "ZooKeeperError";
    this.code = code;
    this.codeName = codeName;
    if (details.path !== undefined) this.path = details.path;
    if (details.op !== undefined) this.op = details.op;
    if (details.results !== undefined) this.results = details.results;
  }
}

Object.defineProperty(ZooKeeperError.prototype, BRAND, { value: true });

export function badArguments(message: string, op?: string, path?: string): ZooKeeperError {
  return new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op, path });
}

export function connectionLoss(message: string, op?: string, path?: string): ZooKeeperError {
  return new ZooKeeperError(ErrorCode.CONNECTIONLOSS, message, { op, path });
}

/** True when `e` is a ZooKeeperError of any copy of this package (ESM or CommonJS), with `code` when given. */
export function isZooKeeperError(e: unknown, code?: ErrorCode): e is ZooKeeperError {
  return e instanceof ZooKeeperError && (code === undefined || e.code === code);
}
