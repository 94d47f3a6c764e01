// The one path every operation takes (go-zookeeper's `c.request(opcode, req, res, recvFunc)`): the op
// table's entry encodes the request and decodes the reply, the body's path is mapped into the chroot, a
// watcher is registered in the receive path together with its reply, and the call goes to the session's
// send (request.ts: a signal can abandon it; the decoded reply is mapped back out of the chroot). Argument
// checks stay with each public method.
import { AddWatchMode, CreateMode, WatcherType } from "../protocol/constants.ts";
import { type Create2Response, Ops } from "../protocol/ops.ts";
import { addChroot, stripChroot } from "../protocol/path.ts";
import type { ClientInfo, Stat } from "../protocol/records.ts";
import { signalOf } from "./abort.ts";
import { Ids } from "./acl.ts";
import { type Needs, ttlRefused } from "./session/features.ts";
import { type HelperClient, createWithParents } from "./helpers.ts";
import type { Call, CallSpec, Send } from "./wire/request.ts";
import type { CreateOptions, Data } from "./types.ts";
import { checkAcl, checkCreateMode, checkPath, toBytes } from "./validate.ts";
import type { WatchKind, WatchRegistry } from "./watches/watches.ts";
import { type LostWrites, type ReadBack, follow } from "./outcome.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { ZooKeeperError } from "./errors.ts";

export type { Call, CallSpec };

/** Runs operations for one client: its chroot, its watch tables and its session's submit. */
export class Caller {
  readonly chroot: string;
  readonly watches: WatchRegistry;
  private readonly send: Send;
  /** The session's writes that were sent and lost their replies (outcome.ts). */
  private readonly lost: LostWrites;
  /** The chroot was seen to exist (a call under it succeeded, or an exists of it): a NONODE is then the node's. */
  private chrootSeen: boolean;

  constructor(chroot: string, watches: WatchRegistry, send: Send, lost: LostWrites) {
    this.chroot = chroot;
    this.watches = watches;
    this.send = send;
    this.lost = lost;
    this.chrootSeen = chroot === "";
  }

  /** A client path as the server knows it. */
  server(path: string): string {
    return addChroot(this.chroot, path);
  }

  /**
   * Sends `body` as `spec`'s request and resolves with its decoded (and `result`-mapped) reply; rejects with a
   * ZooKeeperError carrying `op` and `path`. A `path` field of `body` is a client path unless `absolute`. `o` is
   * this call's own descriptor (made per call), held by the request until its reply, which registers its
   * `watcher` (the chroot for that and for `result` is the session's CallContext's).
   */
  call<Req, Res, Out = Res>(spec: CallSpec<Req, Res>, body: Req, o: Call<Res, Out>): Promise<Out> {
    const chroot = this.chroot;
    const pathed = body as (Req & { path?: unknown }) | undefined;
    if (chroot !== "" && o.absolute !== true && typeof pathed?.path === "string") body = { ...body, path: addChroot(chroot, pathed.path) };
    const sent = this.send(spec, body, o);
    if (this.chrootSeen || o.absolute === true || typeof pathed?.path !== "string") return sent;
    return sent.then(
      (r) => {
        this.chrootSeen = true; // a node under the chroot answered: the chroot exists
        return r;
      },
      (e: unknown) => this.chrootMissing(e),
    );
  }

  /**
   * A NONODE under a chroot not yet seen to exist: one exists of the chroot; when it is missing, the error says so,
   * with the same code, path and op. Rejects with the error to throw.
   */
  private async chrootMissing(e: unknown): Promise<never> {
    if (!(e instanceof ZooKeeperError) || e.code !== ErrorCode.NONODE || this.chrootSeen) throw e;
    const there = await this.send(Ops.exists, { path: this.chroot, watch: false }, { op: "exists", path: this.chroot, absolute: true }).then(
      () => "yes",
      (x: unknown) => (x instanceof ZooKeeperError && x.code === ErrorCode.NONODE ? "no" : "unknown"), // unknown: asked again on the next NONODE
    );
    if (there === "yes") this.chrootSeen = true;
    if (there !== "no") throw e;
    throw new ZooKeeperError(ErrorCode.NONODE, `the chroot ${this.chroot} of the connect string does not exist: create it (from a client without the chroot), or fix the connect string`, {
      op: e.op,
      path: e.path,
      results: e.results,
      cause: e,
    });
  }

  /**
   * call() with one object as both the request's body and the call's descriptor (the hot reads and writes:
   * getData, exists, getChildren, setData, delete, create): one object per call instead of two.
   */
  request<Req, Res, Out = Res>(spec: CallSpec<Req, Res>, o: Req & Call<Res, Out>): Promise<Out> {
    const done = this.call(spec, o, o);
    // A write sent again after its reply was lost: its refusal may be the first attempt's doing (outcome.ts).
    return this.lost.size === 0 ? done : follow(done, o as Call<unknown, unknown>, this.lost, this.readBack);
  }

  /** The node at `path` for judging a lost write (null when there is none). */
  private readonly readBack = (path: string): Promise<ReadBack> =>
    this.call(Ops.getData, { path, watch: false }, { op: "getData", path }).then(
      (r) => r,
      (e: unknown) => {
        if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) return null;
        throw e;
      },
    );

  /** After an abandoned addWatch succeeded: the server's watch has no listener; drop it unless another needs it. */
  dropUnwatched(path: string): void {
    const serverPath = this.server(path);
    if (this.watches.needsServerTable("data", serverPath) || this.watches.needsServerTable("child", serverPath)) return;
    this.call(Ops.removeWatches, { path, type: WatcherType.Any }, { op: "addWatch", path }).catch(() => {});
  }
}

/**
 * create (`withStat` false: resolves with the path) and createWithStat (path and Stat), in every mode: the checks,
 * then one call (or createParents' retry loop). Bad arguments reject; nothing throws.
 */
export function createNode(c: Caller, zk: HelperClient, op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: false): Promise<string>;
export function createNode(c: Caller, zk: HelperClient, op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: true): Promise<Created>;
export function createNode(c: Caller, zk: HelperClient, op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: boolean): Promise<string | Created> {
  try {
    const o = options ?? {};
    const { mode, ttl, sequential } = checkCreateMode(op, path, o.mode, o.ttl);
    checkPath(op, path, sequential);
    const signal = signalOf(op, path, o);
    const acl = checkAcl(op, path, o.acl ?? Ids.OPEN_ACL_UNSAFE);
    if (o.createParents === true) {
      const again = { ...o, createParents: false };
      return createWithParents<string | Created>(zk, path, acl, signal, () => (withStat ? createNode(c, zk, op, path, data, again, true) : createNode(c, zk, op, path, data, again, false)));
    }
    const bytes = toBytes(op, path, data);
    // TTL and container creates answer as create2 does (path and Stat), also for create.
    const fromCreate2: (r: Create2Response, chroot: string) => string | Created = withStat ? createdWithStat : createdName2;
    if (ttl !== undefined) {
      const created = c.call(Ops.createTTL, { path, data: bytes, acl, flags: mode, ttl: BigInt(ttl) }, { op, path, needs: need(["ttl"], `${op} of a TTL node`), signal, result: fromCreate2 });
      return created.catch((e: unknown) => Promise.reject(ttlRefused(e)));
    }
    if (mode === CreateMode.CONTAINER) return c.call(Ops.createContainer, { path, data: bytes, acl, flags: mode }, { op, path, needs: need(["containers"], `${op} of a container`), signal, result: fromCreate2 });
    const unique = o.uniqueData === true;
    if (withStat) return c.request(Ops.create2, { op, path, data: bytes, acl, flags: mode, needs: need(["createWithStat"], op), signal, result: createdWithStat, unique });
    return c.request(Ops.create, { op, path, data: bytes, acl, flags: mode, signal, result: createdName, unique });
  } catch (e) {
    return Promise.reject(e);
  }
}

/** The `needs` of a call: server features, and what to call the request in UNIMPLEMENTED's message. */
export function need(features: Needs["features"], what: string): Needs {
  return { features, what };
}

// --- result mappings (shared functions, so a call allocates none) ---

/** What createWithStat resolves with. */
type Created = { path: string; stat: Stat };

/** create: the new node's path, inside the chroot. */
export const createdName = (path: string, chroot: string): string => stripChroot(chroot, path);

/** create of a container or TTL node (answered as create2): the new node's path, inside the chroot. */
const createdName2 = (r: Create2Response, chroot: string): string => stripChroot(chroot, r.path);

/** create2, container and TTL creates: path (inside the chroot) and Stat. */
const createdWithStat = (r: Create2Response, chroot: string): Created => ({ path: stripChroot(chroot, r.path), stat: r.stat });

/** getEphemerals: server paths back inside the chroot. */
export const clientPaths = (paths: string[], chroot: string): string[] => (chroot === "" ? paths : paths.map((p) => stripChroot(chroot, p)));

/** whoAmI: the public names of ClientInfo. */
export const identities = (infos: ClientInfo[]): { scheme: string; id: string }[] => infos.map((c) => ({ scheme: c.authScheme, id: c.user }));

/** getEphemerals: the server matches a plain string prefix; inside a chroot, "/" means the chroot's subtree. */
export function ephemeralsPrefix(chroot: string, prefixPath: string): string {
  return chroot ? (prefixPath === "/" ? `${chroot}/` : chroot + prefixPath) : prefixPath;
}

/** The watch table of an addWatch mode. */
export function persistentKind(mode: AddWatchMode): WatchKind {
  return mode === AddWatchMode.PERSISTENT ? "persistent" : "persistentRecursive";
}
