// The one error type of the public API: ZooKeeper's KeeperException code plus the path and op.
import { ErrorCode, errorCodeName } from "../protocol/constants.ts";
import type { OpResult } from "./types.ts";

export class ZooKeeperError extends Error {
  /** ZooKeeper's KeeperException code, e.g. -101. */
  readonly code: number;
  /** The code's name, e.g. "NONODE". */
  readonly codeName: string;
  readonly path?: string;
  /** The operation that failed, e.g. "create". */
  readonly op?: string;
  /** For multi: the per-op results. */
  readonly results?: OpResult[];

  constructor(code: number, message?: string, details: { path?: string; op?: string; results?: OpResult[]; cause?: unknown } = {}) {
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

export function badArguments(message: string, op?: string, path?: string): ZooKeeperError {
  return new ZooKeeperError(ErrorCode.BADARGUMENTS, message, { op, path });
}

export function connectionLoss(message: string, op?: string, path?: string): ZooKeeperError {
  return new ZooKeeperError(ErrorCode.CONNECTIONLOSS, message, { op, path });
}

export function isZooKeeperError(e: unknown, code?: number): e is ZooKeeperError {
  return e instanceof ZooKeeperError && (code === undefined || e.code === code);
}
