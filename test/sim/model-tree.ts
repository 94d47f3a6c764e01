// The model's data tree: znodes with Stat and ACL, ephemeral, sequential, container and TTL nodes,
// the checks and codes of ZooKeeper's PrepRequestProcessor, and atomic multi (all or nothing).
// Changes queue their watch triggers in `fire`; the caller runs them once the transaction commits.
import { ErrorCode, EventType, OpCode, type ACL, type MultiOp, type MultiResult, type Stat } from "../../src/protocol/index.ts";
import { parentOf } from "./model-watches.ts";

export interface Znode {
  data: Uint8Array | null;
  stat: Stat;
  acl: ACL[];
  children: Set<string>;
}

export class Fail extends Error {
  readonly code: number;
  constructor(code: number) {
    super(`zk error ${code}`);
    this.code = code;
  }
}

export type Fire = Array<() => void>;
type Trigger = (path: string, type: number, zxid: bigint) => void;

const nameOf = (p: string): string => p.slice(p.lastIndexOf("/") + 1);
const validPath = (p: string): boolean => p === "/" || (p.startsWith("/") && !p.endsWith("/") && !p.includes("//"));
const OPEN: ACL[] = [{ perms: 31, id: { scheme: "world", id: "anyone" } }];
/** EphemeralType: a TTL node's ephemeralOwner is 0xFF in the top byte and the TTL below. */
/** A child was added or removed at `zxid`: the parent's child version, count and pzxid follow. */
function childrenChanged(parent: Znode, zxid: bigint): void {
  parent.stat.cversion++;
  parent.stat.numChildren = parent.children.size;
  parent.stat.pzxid = zxid;
}
const ttlOwner = (ttl: bigint): bigint => BigInt.asIntN(64, (0xffn << 56n) | ttl);

export class Tree {
  readonly nodes = new Map<string, Znode>();
  zxid = 0n;
  private readonly now: () => number;
  private readonly trigger: Trigger;

  constructor(now: () => number, trigger: Trigger, system: boolean) {
    this.now = now;
    this.trigger = trigger;
    this.nodes.set("/", this.fresh(null, 0n, 0n));
    this.system("/zookeeper");
    // 3.5+ servers hold the dynamic-config znode (the client's first feature probe reads it) and quotas.
    if (system) {
      this.system("/zookeeper/config");
      this.system("/zookeeper/quota");
    }
  }

  private system(path: string): void {
    this.nodes.set(path, this.fresh(null, 0n, 0n));
    const parent = this.nodes.get(parentOf(path))!;
    parent.children.add(nameOf(path));
    parent.stat.numChildren = parent.children.size;
  }

  private fresh(data: Uint8Array | null, zxid: bigint, owner: bigint, acl: ACL[] = OPEN): Znode {
    const t = Math.floor(this.now());
    const stat = { czxid: zxid, mzxid: zxid, ctime: t, mtime: t, version: 0, cversion: 0, aversion: 0, ephemeralOwner: owner, dataLength: data?.length ?? 0, numChildren: 0, pzxid: zxid };
    return { data, stat, acl: acl.length > 0 ? acl : OPEN, children: new Set() };
  }

  node(path: string): Znode {
    const n = this.nodes.get(path);
    if (!n) throw new Fail(ErrorCode.NONODE);
    return n;
  }

  /** Creates a node at the current zxid; `session` owns it if ephemeral; returns the final path. */
  create(type: number, path0: string, data: Uint8Array | null, acl: ACL[], flags: number, ttl: bigint, session: { id: bigint; ephemerals: Set<string> }, fire: Fire): string {
    const isTtl = flags === 5 || flags === 6;
    if (flags < 0 || flags > 6 || (type === OpCode.createContainer) !== (flags === 4) || (type === OpCode.createTTL) !== isTtl) throw new Fail(ErrorCode.BADARGUMENTS);
    if (isTtl && (ttl <= 0n || ttl > 0xffffffffffn)) throw new Fail(ErrorCode.BADARGUMENTS);
    if (!validPath(path0) || path0 === "/") throw new Fail(ErrorCode.BADARGUMENTS);
    const parentPath = parentOf(path0);
    const parent = this.nodes.get(parentPath);
    if (!parent) throw new Fail(ErrorCode.NONODE);
    if (parent.stat.ephemeralOwner !== 0n && parent.stat.ephemeralOwner > 0n) throw new Fail(ErrorCode.NOCHILDRENFOREPHEMERALS);
    const sequential = flags === 2 || flags === 3 || flags === 6;
    const path = sequential ? path0 + String(parent.stat.cversion).padStart(10, "0") : path0;
    if (this.nodes.has(path)) throw new Fail(ErrorCode.NODEEXISTS);
    const ephemeral = flags === 1 || flags === 3;
    const owner = ephemeral ? session.id : isTtl ? ttlOwner(ttl) : 0n;
    const zxid = this.zxid;
    this.nodes.set(path, this.fresh(data, zxid, owner, acl));
    if (ephemeral) session.ephemerals.add(path);
    parent.children.add(nameOf(path));
    childrenChanged(parent, zxid);
    fire.push(() => {
      this.trigger(path, EventType.NodeCreated, zxid);
      this.trigger(parentPath, EventType.NodeChildrenChanged, zxid);
    });
    return path;
  }

  checkDelete(path: string, version: number): void {
    const n = this.node(path);
    if (version !== -1 && n.stat.version !== version) throw new Fail(ErrorCode.BADVERSION);
    if (n.children.size > 0) throw new Fail(ErrorCode.NOTEMPTY);
  }

  /** Deletes a node; `ephemerals` of its owner (if any) forget it. */
  del(path: string, version: number, owners: (id: bigint) => Set<string> | undefined, fire: Fire): void {
    if (path === "/" || path === "/zookeeper" || path.startsWith("/zookeeper/")) throw new Fail(ErrorCode.BADARGUMENTS);
    this.checkDelete(path, version);
    const n = this.nodes.get(path)!;
    const zxid = this.zxid;
    this.nodes.delete(path);
    if (n.stat.ephemeralOwner > 0n) owners(n.stat.ephemeralOwner)?.delete(path);
    const parentPath = parentOf(path);
    const parent = this.nodes.get(parentPath)!;
    parent.children.delete(nameOf(path));
    childrenChanged(parent, zxid);
    fire.push(() => {
      this.trigger(path, EventType.NodeDeleted, zxid);
      this.trigger(parentPath, EventType.NodeChildrenChanged, zxid);
    });
  }

  checkSet(path: string, version: number): void {
    const n = this.node(path);
    if (version !== -1 && n.stat.version !== version) throw new Fail(ErrorCode.BADVERSION);
  }

  set(path: string, data: Uint8Array | null, fire: Fire): Stat {
    this.checkSet(path, -1);
    const n = this.nodes.get(path)!;
    const zxid = this.zxid;
    n.data = data;
    n.stat.version++;
    n.stat.mzxid = zxid;
    n.stat.mtime = Math.floor(this.now());
    n.stat.dataLength = data?.length ?? 0;
    fire.push(() => this.trigger(path, EventType.NodeDataChanged, zxid));
    return { ...n.stat };
  }

  /** setACL: checked against aversion; no watch fires. */
  setAcl(path: string, acl: ACL[], version: number): Stat {
    const n = this.node(path);
    if (version !== -1 && n.stat.aversion !== version) throw new Fail(ErrorCode.BADVERSION);
    if (acl.length === 0) throw new Fail(ErrorCode.INVALIDACL);
    n.acl = acl;
    n.stat.aversion++;
    return { ...n.stat };
  }

  /** Every node below `path` (getAllChildrenNumber). */
  descendants(path: string): number {
    let count = 0;
    const n = this.node(path);
    for (const c of n.children) count += 1 + this.descendants(path === "/" ? `/${c}` : `${path}/${c}`);
    return count;
  }

  /** Atomic multi under one zxid: every op or none (the failing op's code, the ops after it RUNTIMEINCONSISTENCY). */
  multi(ops: MultiOp[], session: { id: bigint; ephemerals: Set<string> }, sessions: Iterable<{ ephemerals: Set<string> }>, owners: (id: bigint) => Set<string> | undefined, fire: Fire): MultiResult[] {
    const snapshot = new Map([...this.nodes].map(([p, n]) => [p, { data: n.data, stat: { ...n.stat }, acl: n.acl, children: new Set(n.children) }]));
    const ephem = new Map([...sessions].map((s) => [s, new Set(s.ephemerals)]));
    this.zxid++;
    const results: MultiResult[] = [];
    for (const [i, op] of ops.entries()) {
      try {
        switch (op.type) {
          case OpCode.create:
          case OpCode.create2:
          case OpCode.createContainer:
          case OpCode.createTTL: {
            const q = op.request;
            const path = this.create(op.type, q.path, q.data, q.acl, q.flags, "ttl" in q ? q.ttl : 0n, session, fire);
            results.push(op.type === OpCode.create ? { type: OpCode.create, path } : { type: OpCode.create2, path, stat: { ...this.nodes.get(path)!.stat } });
            break;
          }
          case OpCode.delete:
            this.del(op.request.path, op.request.version, owners, fire);
            results.push({ type: OpCode.delete });
            break;
          case OpCode.check:
            this.checkSet(op.request.path, op.request.version);
            results.push({ type: OpCode.check });
            break;
          case OpCode.setData:
            this.checkSet(op.request.path, op.request.version);
            results.push({ type: OpCode.setData, stat: this.set(op.request.path, op.request.data, fire) });
            break;
          default:
            throw new Fail(ErrorCode.BADARGUMENTS);
        }
      } catch (e) {
        if (!(e instanceof Fail)) throw e;
        this.nodes.clear();
        for (const [p, n] of snapshot) this.nodes.set(p, n);
        for (const [s, set] of ephem) s.ephemerals = set;
        fire.length = 0;
        return ops.map((_, j) => ({ type: OpCode.error, err: j < i ? 0 : j === i ? e.code : ErrorCode.RUNTIMEINCONSISTENCY }));
      }
    }
    return results;
  }
}
