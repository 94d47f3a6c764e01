// Records shared by many operations (zookeeper.jute): Id, ACL, Stat, headers, the connect handshake,
// WatcherEvent, AuthPacket and the SetWatches records. Fields are in wire order; `long` is bigint
// except Stat times, which are epoch milliseconds and always fit a double.
import type { JuteReader, JuteWriter } from "./jute.ts";

/** An identity an ACL entry names: a scheme and an id in that scheme's format. */
export interface Id {
  /** "world", "auth", "digest", "ip", "x509", "sasl", ... */
  scheme: string;
  /** e.g. "anyone" (world), "user:base64hash" (digest, see `digestId`), "10.0.0.0/8" (ip). */
  id: string;
}

/** One ACL entry: the permissions an identity has on a node. */
export interface ACL {
  /** A bit mask of `Perms` values, e.g. `Perms.READ | Perms.WRITE`. */
  perms: number;
  /** Who the entry is for. */
  id: Id;
}

/** A node's metadata, as the server returns it. */
export interface Stat {
  /** The zxid of the transaction that created the node. */
  czxid: bigint;
  /** The zxid of the transaction that last changed the node's data. */
  mzxid: bigint;
  /** Creation time, epoch milliseconds. */
  ctime: number;
  /** Last data change time, epoch milliseconds. */
  mtime: number;
  /** The number of changes to the node's data (what `setData`'s version checks). */
  version: number;
  /** The number of changes to the node's children. */
  cversion: number;
  /** The number of changes to the node's ACL. */
  aversion: number;
  /** The session id of an ephemeral node's owner; 0n for other nodes. */
  ephemeralOwner: bigint;
  /** The length of the node's data, bytes. */
  dataLength: number;
  /** The number of children. */
  numChildren: number;
  /** The zxid of the last change to the node's children. */
  pzxid: bigint;
}

export interface RequestHeader {
  xid: number;
  type: number;
}

export interface ReplyHeader {
  xid: number;
  zxid: bigint;
  err: number;
}

export interface ConnectRequest {
  protocolVersion: number;
  lastZxidSeen: bigint;
  timeOut: number;
  sessionId: bigint;
  passwd: Uint8Array;
  readOnly: boolean;
}

export interface ConnectResponse {
  protocolVersion: number;
  timeOut: number;
  sessionId: bigint;
  passwd: Uint8Array;
  readOnly: boolean;
}

export interface WatcherEvent {
  type: number;
  state: number;
  path: string;
}

export interface AuthPacket {
  type: number;
  scheme: string;
  auth: Uint8Array;
}

export interface SetWatches {
  relativeZxid: bigint;
  dataWatches: string[];
  existWatches: string[];
  childWatches: string[];
}

export interface SetWatches2 extends SetWatches {
  persistentWatches: string[];
  persistentRecursiveWatches: string[];
}

export interface ClientInfo {
  authScheme: string;
  user: string;
}

export const writeId = (w: JuteWriter, v: Id): void => {
  w.ustring(v.scheme).ustring(v.id);
};
export const readId = (r: JuteReader): Id => ({ scheme: r.string(), id: r.string() });

export const writeACL = (w: JuteWriter, v: ACL): void => {
  w.int(v.perms);
  writeId(w, v.id);
};
export const readACL = (r: JuteReader): ACL => ({ perms: r.int(), id: readId(r) });

export function writeStat(w: JuteWriter, s: Stat): void {
  w.long(s.czxid).long(s.mzxid).long(BigInt(s.ctime)).long(BigInt(s.mtime));
  w.int(s.version).int(s.cversion).int(s.aversion).long(s.ephemeralOwner);
  w.int(s.dataLength).int(s.numChildren).long(s.pzxid);
}

export function readStat(r: JuteReader): Stat {
  return {
    czxid: r.long(),
    mzxid: r.long(),
    ctime: r.longNumber(),
    mtime: r.longNumber(),
    version: r.int(),
    cversion: r.int(),
    aversion: r.int(),
    ephemeralOwner: r.long(),
    dataLength: r.int(),
    numChildren: r.int(),
    pzxid: r.long(),
  };
}

export const writeRequestHeader = (w: JuteWriter, h: RequestHeader): void => {
  w.int(h.xid).int(h.type);
};
export const readRequestHeader = (r: JuteReader): RequestHeader => ({ xid: r.int(), type: r.int() });

export const writeReplyHeader = (w: JuteWriter, h: ReplyHeader): void => {
  w.int(h.xid).long(h.zxid).int(h.err);
};
export const readReplyHeader = (r: JuteReader): ReplyHeader => ({ xid: r.int(), zxid: r.long(), err: r.int() });

export function writeConnectRequest(w: JuteWriter, c: ConnectRequest): void {
  w.int(c.protocolVersion).long(c.lastZxidSeen).int(c.timeOut).long(c.sessionId).buffer(c.passwd);
  // Always sent: 3.9.0-3.9.2 servers require it, older ones read it as an optional extra.
  w.bool(c.readOnly);
}

export function readConnectRequest(r: JuteReader): ConnectRequest {
  const protocolVersion = r.int();
  const lastZxidSeen = r.long();
  const timeOut = r.int();
  const sessionId = r.long();
  const passwd = r.buffer() ?? new Uint8Array(0);
  const readOnly = r.remaining > 0 ? r.bool() : false;
  return { protocolVersion, lastZxidSeen, timeOut, sessionId, passwd, readOnly };
}

export function writeConnectResponse(w: JuteWriter, c: ConnectResponse): void {
  w.int(c.protocolVersion).int(c.timeOut).long(c.sessionId).buffer(c.passwd).bool(c.readOnly);
}

export function readConnectResponse(r: JuteReader): ConnectResponse {
  const protocolVersion = r.int();
  const timeOut = r.int();
  const sessionId = r.long();
  const passwd = r.buffer() ?? new Uint8Array(0);
  // The readOnly byte is absent when the server mirrors a client that did not send it (36-byte reply).
  const readOnly = r.remaining > 0 ? r.bool() : false;
  return { protocolVersion, timeOut, sessionId, passwd, readOnly };
}

export const writeWatcherEvent = (w: JuteWriter, e: WatcherEvent): void => {
  w.int(e.type).int(e.state).ustring(e.path);
};
export const readWatcherEvent = (r: JuteReader): WatcherEvent => ({ type: r.int(), state: r.int(), path: r.string() });

export const writeAuthPacket = (w: JuteWriter, a: AuthPacket): void => {
  w.int(a.type).ustring(a.scheme).buffer(a.auth);
};
export const readAuthPacket = (r: JuteReader): AuthPacket => ({
  type: r.int(),
  scheme: r.string(),
  auth: r.buffer() ?? new Uint8Array(0),
});

const writeStr = (w: JuteWriter, s: string): void => {
  w.ustring(s);
};
const readStrings = (r: JuteReader): string[] => r.vector((x) => x.string()) ?? [];

export function writeSetWatches(w: JuteWriter, s: SetWatches): void {
  w.long(s.relativeZxid);
  w.vector(s.dataWatches, writeStr).vector(s.existWatches, writeStr).vector(s.childWatches, writeStr);
}

export function readSetWatches(r: JuteReader): SetWatches {
  return { relativeZxid: r.long(), dataWatches: readStrings(r), existWatches: readStrings(r), childWatches: readStrings(r) };
}

export function writeSetWatches2(w: JuteWriter, s: SetWatches2): void {
  writeSetWatches(w, s);
  w.vector(s.persistentWatches, writeStr).vector(s.persistentRecursiveWatches, writeStr);
}

export function readSetWatches2(r: JuteReader): SetWatches2 {
  const base = readSetWatches(r);
  return { ...base, persistentWatches: readStrings(r), persistentRecursiveWatches: readStrings(r) };
}

export const writeClientInfo = (w: JuteWriter, c: ClientInfo): void => {
  w.ustring(c.authScheme).ustring(c.user);
};
export const readClientInfo = (r: JuteReader): ClientInfo => ({ authScheme: r.string(), user: r.string() });

export { writeStr as writeStringItem, readStrings };
