// Ops for multi(): plain descriptions built by Op.create/delete/setData/check, validated and encoded
// when multi() runs so bad input rejects like every other call.
import { CreateMode, ErrorCode, OpCode } from "../protocol/constants.ts";
import type { MultiOp, MultiResult } from "../protocol/multi.ts";
import { addChroot, stripChroot } from "../protocol/path.ts";
import { Ids } from "./acl.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import type { Feature, Needs } from "./session/features.ts";
import type { CreateOptions, Data, OpResult } from "./types.ts";
import { checkAcl, checkCreateMode, checkPath, checkVersion, toBytes } from "./validate.ts";

/** One operation of a `multi` (or `Transaction`): build it with `Op.create`, `Op.delete`, `Op.setData` or `Op.check`. */
export type Op =
  | {
      /** Which operation. */
      readonly type: "create";
      /** The node's path. */
      readonly path: string;
      /** The new node's data. */
      readonly data?: Data;
      /** Mode and ACL, as for `ZooKeeper.create`. */
      readonly options?: CreateOptions;
    }
  | {
      /** Which operation. */
      readonly type: "delete";
      /** The node's path. */
      readonly path: string;
      /** The expected version (any when omitted). */
      readonly version?: number;
    }
  | {
      /** Which operation. */
      readonly type: "setData";
      /** The node's path. */
      readonly path: string;
      /** The new data. */
      readonly data: Data;
      /** The expected version (any when omitted). */
      readonly version?: number;
    }
  | {
      /** Which operation. */
      readonly type: "check";
      /** The node's path. */
      readonly path: string;
      /** The version the node must have. */
      readonly version: number;
    };

/** Builders of the ops of `ZooKeeper.multi`; arguments are validated when `multi` runs (it rejects with `BADARGUMENTS`). */
export const Op: {
  /** Create a node, as `ZooKeeper.create` (a TTL or container mode is refused inside multi). */
  readonly create: (path: string, data?: Data, options?: CreateOptions) => Op;
  /** Delete a node; with a version, only if the node's version matches. */
  readonly delete: (path: string, version?: number) => Op;
  /** Set a node's data; with a version, only if the node's version matches. */
  readonly setData: (path: string, data: Data, version?: number) => Op;
  /** Fail the whole multi (BADVERSION, or NONODE) unless the node exists with this version. */
  readonly check: (path: string, version: number) => Op;
} = Object.freeze({
  create: (path: string, data?: Data, options?: CreateOptions): Op => ({ type: "create", path, data, options }),
  delete: (path: string, version?: number): Op => ({ type: "delete", path, version }),
  setData: (path: string, data: Data, version?: number): Op => ({ type: "setData", path, data, version }),
  check: (path: string, version: number): Op => ({ type: "check", path, version }),
});

/** Validates one op and turns it into its wire form (server paths). */
export function encodeOp(op: Op, chroot: string): MultiOp {
  if (op === null || typeof op !== "object") throw badArguments("multi ops must come from Op.create/delete/setData/check", "multi");
  switch (op.type) {
    case "create": {
      const o = op.options ?? {};
      const { mode, ttl, sequential } = checkCreateMode("multi", op.path, o.mode, o.ttl);
      const path = addChroot(chroot, checkPath("multi", op.path, sequential));
      const request = { path, data: toBytes("multi", op.path, op.data), acl: checkAcl("multi", op.path, o.acl ?? Ids.OPEN_ACL_UNSAFE), flags: mode };
      if (ttl !== undefined) return { type: OpCode.createTTL, request: { ...request, ttl: BigInt(ttl) } };
      return { type: mode === CreateMode.CONTAINER ? OpCode.createContainer : OpCode.create, request };
    }
    case "delete":
      return { type: OpCode.delete, request: { path: addChroot(chroot, checkPath("multi", op.path)), version: checkVersion("multi", op.path, op.version) } };
    case "setData":
      return {
        type: OpCode.setData,
        request: { path: addChroot(chroot, checkPath("multi", op.path)), data: toBytes("multi", op.path, op.data), version: checkVersion("multi", op.path, op.version) },
      };
    case "check":
      if (op.version === undefined) throw badArguments("check needs a version", "multi", op.path);
      return { type: OpCode.check, request: { path: addChroot(chroot, checkPath("multi", op.path)), version: checkVersion("multi", op.path, op.version) } };
    default:
      throw badArguments(`unknown op type ${JSON.stringify((op as { type?: unknown }).type)}`, "multi");
  }
}

/** What a multi's sub-ops need: 3.4 fails a whole multi holding a container, TTL or create2 op. */
export function multiNeeds(ops: readonly MultiOp[]): Needs | undefined {
  const features = new Set<Feature>();
  for (const op of ops) {
    if (op.type === OpCode.createContainer) features.add("containers");
    else if (op.type === OpCode.createTTL) features.add("ttl");
    else if (op.type === OpCode.create2) features.add("createWithStat");
  }
  if (features.size === 0) return undefined;
  const names = { containers: "a container create", ttl: "a TTL create", createWithStat: "a create2" } as Record<Feature, string>;
  return { features: [...features], what: `multi with ${[...features].map((f) => names[f]).join(" and ")}` };
}

/** Maps the server's results; a failed transaction rejects with the first failing op's code. */
export function decodeResults(results: MultiResult[], chroot: string, ops: readonly Op[]): OpResult[] {
  const out: OpResult[] = results.map((r): OpResult => {
    switch (r.type) {
      case OpCode.create:
        return { type: "create", path: stripChroot(chroot, r.path) };
      case OpCode.create2:
        return { type: "create", path: stripChroot(chroot, r.path), stat: r.stat };
      case OpCode.delete:
        return { type: "delete" };
      case OpCode.setData:
        return { type: "setData", stat: r.stat };
      case OpCode.check:
        return { type: "check" };
      case OpCode.error:
        return { type: "error", code: r.err as ErrorCode };
      default:
        return { type: "error", code: ErrorCode.MARSHALLINGERROR };
    }
  });
  const failed = out.findIndex((r) => r.type === "error" && r.code !== ErrorCode.OK);
  if (failed >= 0) {
    const code = (out[failed] as { code: ErrorCode }).code;
    throw new ZooKeeperError(code, `multi op ${failed} (${ops[failed]?.type}) failed`, { op: "multi", path: ops[failed]?.path, results: out });
  }
  return out;
}
