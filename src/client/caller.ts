// The one path every operation takes (go-zookeeper's `c.request(opcode, req, res, recvFunc)`): the op
// table's entry encodes the request and decodes the reply, the body's path is mapped into the chroot, a
// watcher is registered in the receive path together with its reply, and the call goes to the session's
// send (call-record.ts: a signal can abandon it; the decoded reply is mapped back out of the chroot). Argument
// checks stay with each public method. It is also the one trace point: each call is one `zookeeper-ts:request`
// trace (diagnostics.ts) unless it is `untraced` (the client's own reads, the calls inside an operation traced
// as one by `trace`: a linearizable read, a create that makes its parents, multiRead, getConfig, ...).
import { AddWatchMode, CreateMode, WatcherType } from "../protocol/constants.ts";
import { type Create2Response, Ops } from "../protocol/ops.ts";
import { addChroot, stripChroot } from "../protocol/path.ts";
import type { ClientInfo, Stat } from "../protocol/records.ts";
import { signalOf } from "./abort.ts";
import { Ids } from "./acl.ts";
import { type Needs, ttlRefused } from "./session/features.ts";
import { type HelperClient, createWithParents } from "./helpers.ts";
import type { Call, CallSpec, Send } from "./wire/call-record.ts";
import type { CreateOptions, Data } from "./types.ts";
import { checkAcl, checkCreateMode, checkPath, toBytes } from "./validate.ts";
import type { WatchKind, WatchRegistry } from "./watches/watches.ts";
import { type LostWrites, type ReadBack, follow } from "./outcome.ts";
import { ErrorCode } from "../protocol/constants.ts";
import { ZooKeeperError } from "./errors.ts";
import { type Traceable, traceRequest, tracingRequests } from "./diagnostics.ts";

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
  /** The session id and server a trace carries. */
  private readonly client: Traceable;

  constructor(chroot: string, watches: WatchRegistry, send: Send, lost: LostWrites, client: Traceable) {
    this.chroot = chroot;
    this.watches = watches;
    this.send = send;
    this.lost = lost;
    this.chrootSeen = chroot === "";
    this.client = client;
  }

  /** A client path as the server knows it. */
  server(path: string): string {
    return addChroot(this.chroot, path);
  }

  /**
   * Sends `body` as `spec`'s request and resolves with its decoded (and `result`-mapped) reply; rejects with a
   * ZooKeeperError carrying `op` and `path`. A `path` field of `body` is a client path unless `absolute`. `o` is
   * this call's own descriptor (made per call), held by the request until its reply, which registers its
   * `watcher` (the chroot for that and for `result` is the session's CallContext's). One trace of `o.op` and
   * `o.path` while someone listens, unless `o.untraced`.
   */
  call<Req, Res, Out = Res>(spec: CallSpec<Req, Res>, body: Req, o: Call<Res, Out>): Promise<Out> {
    // The flags first: while nobody listens, that is all a call pays for tracing (no closure, no context).
    if (tracingRequests() && o.untraced !== true) return traceRequest(this.client, o.op, o.path, () => this.sent(spec, body, o));
    return this.sent(spec, body, o);
  }

  /** call() without its trace. */
  private sent<Req, Res, Out = Res>(spec: CallSpec<Req, Res>, body: Req, o: Call<Res, Out>): Promise<Out> {
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
    if (tracingRequests() && o.untraced !== true) return traceRequest(this.client, o.op, o.path, () => this.requested(spec, o));
    return this.requested(spec, o);
  }

  /** request() without its trace. */
  private requested<Req, Res, Out = Res>(spec: CallSpec<Req, Res>, o: Req & Call<Res, Out>): Promise<Out> {
    const done = this.sent(spec, o, o);
    // A write sent again after its reply was lost: its refusal may be the first attempt's doing (outcome.ts).
    const settled = this.lost.size === 0 ? done : follow(done, o as Call<unknown, unknown>, this.lost, this.readBack);
    // exists: a missing node is an answer (after the chroot's check, so a missing chroot is one too).
    return o.noNodeIsNull === true ? (settled.catch(nullIfNoNode) as Promise<Out>) : settled; // Out: Stat | null there
  }

  /**
   * One public operation that is more than one call, or none (a create that makes its parents, a linearizable read,
   * deleteRecursive, multiRead, ...), as one trace: the public calls `run` makes are its children; its own are
   * `untraced`. `run` rejects rather than throws.
   */
  trace<T>(op: string, path: string | undefined, run: () => Promise<T>): Promise<T> {
    return tracingRequests() ? traceRequest(this.client, op, path, run) : run();
  }

  /** A call refused before it was made (bad arguments): rejects with `e`, as one trace while someone listens. */
  refused(op: string, path: string | undefined, e: unknown): Promise<never> {
    return tracingRequests() ? traceRequest(this.client, op, path, () => Promise.reject(e)) : Promise.reject(e);
  }

  /** The node at `path` for judging a lost write (null when there is none). */
  private readonly readBack = (path: string): Promise<ReadBack> =>
    this.sent(Ops.getData, { path, watch: false }, { op: "getData", path }).then(
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
    this.sent(Ops.removeWatches, { path, type: WatcherType.Any }, { op: "addWatch", path }).catch(() => {});
  }
}

/** exists of a missing node: null. */
function nullIfNoNode(e: unknown): null {
  if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) return null;
  throw e;
}

/**
 * create (`withStat` false: resolves with the path) and createWithStat (path and Stat), in every mode: the checks,
 * then one call (or createParents' retry loop, traced once: the parents' creates are its children). Bad arguments
 * reject; nothing throws. `untraced`: an attempt inside that loop.
 */
export function createNode(c: Caller, zk: HelperClient, op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: false, untraced?: boolean): Promise<string>;
export function createNode(c: Caller, zk: HelperClient, op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: true, untraced?: boolean): Promise<Created>;
export function createNode(c: Caller, zk: HelperClient, op: string, path: string, data: Data | undefined, options: CreateOptions, withStat: boolean, untraced = false): Promise<string | Created> {
  try {
    const o = options ?? {};
    const { mode, ttl, sequential } = checkCreateMode(op, path, o.mode, o.ttl);
    checkPath(op, path, sequential);
    const signal = signalOf(op, path, o);
    const acl = checkAcl(op, path, o.acl ?? Ids.OPEN_ACL_UNSAFE);
    if (o.createParents === true) {
      const again = { ...o, createParents: false };
      const attempt = (): Promise<string | Created> => (withStat ? createNode(c, zk, op, path, data, again, true, true) : createNode(c, zk, op, path, data, again, false, true));
      return c.trace(op, path, () => createWithParents<string | Created>(zk, path, acl, signal, attempt));
    }
    const bytes = toBytes(op, path, data);
    // TTL and container creates answer as create2 does (path and Stat), also for create.
    const fromCreate2: (r: Create2Response, chroot: string) => string | Created = withStat ? createdWithStat : createdName2;
    if (ttl !== undefined) {
      // Traced once with its refusal's message (the call itself would show the server's bare UNIMPLEMENTED).
      const ttlCreate = (): Promise<string | Created> =>
        c
          .call(Ops.createTTL, { path, data: bytes, acl, flags: mode, ttl: BigInt(ttl) }, { op, path, needs: need(["ttl"], `${op} of a TTL node`), signal, result: fromCreate2, untraced: true })
          .catch((e: unknown) => Promise.reject(ttlRefused(e)));
      return untraced ? ttlCreate() : c.trace(op, path, ttlCreate);
    }
    if (mode === CreateMode.CONTAINER) return c.call(Ops.createContainer, { path, data: bytes, acl, flags: mode }, { op, path, needs: need(["containers"], `${op} of a container`), signal, result: fromCreate2, untraced });
    const unique = o.uniqueData === true;
    if (withStat) return c.request(Ops.create2, { op, path, data: bytes, acl, flags: mode, needs: need(["createWithStat"], op), signal, result: createdWithStat, unique, untraced });
    return c.request(Ops.create, { op, path, data: bytes, acl, flags: mode, signal, result: createdName, unique, untraced });
  } catch (e) {
    return untraced ? Promise.reject(e) : c.refused(op, path, e);
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
