// ZooKeeper's numeric constants as `as const` objects (erasable: no enums), with a union type of their
// values and reverse name maps for logs and error messages.

export const OpCode = {
  notification: 0,
  create: 1,
  delete: 2,
  exists: 3,
  getData: 4,
  setData: 5,
  getACL: 6,
  setACL: 7,
  getChildren: 8,
  sync: 9,
  ping: 11,
  getChildren2: 12,
  check: 13,
  multi: 14,
  create2: 15,
  reconfig: 16,
  checkWatches: 17,
  removeWatches: 18,
  createContainer: 19,
  deleteContainer: 20,
  createTTL: 21,
  multiRead: 22,
  auth: 100,
  setWatches: 101,
  sasl: 102,
  getEphemerals: 103,
  getAllChildrenNumber: 104,
  setWatches2: 105,
  addWatch: 106,
  whoAmI: 107,
  createSession: -10,
  closeSession: -11,
  error: -1,
} as const;
export type OpCode = (typeof OpCode)[keyof typeof OpCode];

/** ZooKeeper's KeeperException codes: `ZooKeeperError.code` is one of them. */
export const ErrorCode = {
  /** Success. */
  OK: 0,
  /** A server-side system error (base of the system errors). */
  SYSTEMERROR: -1,
  /** The server found its state inconsistent. */
  RUNTIMEINCONSISTENCY: -2,
  /** The server found its data inconsistent. */
  DATAINCONSISTENCY: -3,
  /** The link to the server was lost (or never made); the request may or may not have been applied. */
  CONNECTIONLOSS: -4,
  /** A request or reply could not be encoded or decoded. */
  MARSHALLINGERROR: -5,
  /** The server does not implement the operation (e.g. a 3.4 server asked for a 3.5+ op). */
  UNIMPLEMENTED: -6,
  /** The operation timed out. */
  OPERATIONTIMEOUT: -7,
  /** Invalid arguments; the client rejects bad input with it before anything is sent. */
  BADARGUMENTS: -8,
  /** The session is unknown to the server. */
  UNKNOWNSESSION: -12,
  /** reconfig: the new configuration has no quorum. */
  NEWCONFIGNOQUORUM: -13,
  /** reconfig: another reconfiguration is in progress. */
  RECONFIGINPROGRESS: -14,
  /** A misuse of the API (base of the API errors). */
  APIERROR: -100,
  /** The node does not exist. */
  NONODE: -101,
  /** Not authorised by the node's ACL. */
  NOAUTH: -102,
  /** The expected version does not match the node's. */
  BADVERSION: -103,
  /** Ephemeral nodes cannot have children. */
  NOCHILDRENFOREPHEMERALS: -108,
  /** The node already exists. */
  NODEEXISTS: -110,
  /** The node has children. */
  NOTEMPTY: -111,
  /** The session has expired; the client is finished. */
  SESSIONEXPIRED: -112,
  /** Invalid callback. */
  INVALIDCALLBACK: -113,
  /** The ACL is invalid (e.g. empty, or an unknown scheme). */
  INVALIDACL: -114,
  /** Authentication failed (SASL or an auth scheme refused the credentials). */
  AUTHFAILED: -115,
  /** The session moved to another server. */
  SESSIONMOVED: -118,
  /** A write was sent to a read-only server. */
  NOTREADONLY: -119,
  /** Ephemeral nodes cannot be created by a local session. */
  EPHEMERALONLOCALSESSION: -120,
  /** No such watcher is registered (removeWatches). */
  NOWATCHER: -121,
  /** The request timed out on the server side. */
  REQUESTTIMEOUT: -122,
  /** reconfig is disabled on the server. */
  RECONFIGDISABLED: -123,
  /** The server requires SASL authentication and closed the session (3.6+). */
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  /** A hard quota was exceeded (3.7+). */
  QUOTAEXCEEDED: -125,
  /** The server throttled the operation (3.7+). */
  THROTTLEDOP: -127,
} as const;
/** One of the values of `ErrorCode`. */
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** How `create` makes a node (`CreateOptions.mode`). */
export const CreateMode = {
  /** A node that stays until deleted. */
  PERSISTENT: 0,
  /** A node deleted when the session that created it ends. */
  EPHEMERAL: 1,
  /** A persistent node whose name gets a 10-digit increasing suffix. */
  PERSISTENT_SEQUENTIAL: 2,
  /** An ephemeral node whose name gets a 10-digit increasing suffix. */
  EPHEMERAL_SEQUENTIAL: 3,
  /** A node the server deletes once its last child is gone (server 3.5.3+). */
  CONTAINER: 4,
  /** A persistent node deleted after `ttl` ms without changes or children (server 3.5.3+, with `zookeeper.extendedTypesEnabled=true`). */
  PERSISTENT_WITH_TTL: 5,
  /** A sequential node with a TTL (as PERSISTENT_WITH_TTL). */
  PERSISTENT_SEQUENTIAL_WITH_TTL: 6,
} as const;
/** One of the values of `CreateMode`. */
export type CreateMode = (typeof CreateMode)[keyof typeof CreateMode];

/** The kind of a `WatchedEvent`. */
export const EventType = {
  /** A session event (state change); `path` is null. */
  None: -1,
  /** The watched node was created. */
  NodeCreated: 1,
  /** The watched node was deleted. */
  NodeDeleted: 2,
  /** The watched node's data changed. */
  NodeDataChanged: 3,
  /** The watched node's children changed. */
  NodeChildrenChanged: 4,
  /** A data watch was removed (removeWatches). */
  DataWatchRemoved: 5,
  /** A child watch was removed (removeWatches). */
  ChildWatchRemoved: 6,
  /** A persistent watch was removed (removeWatches). */
  PersistentWatchRemoved: 7,
} as const;
/** One of the values of `EventType`. */
export type EventType = (typeof EventType)[keyof typeof EventType];

/** The session state carried by a `WatchedEvent`. */
export const KeeperState = {
  /** The client lost its link to the server. */
  Disconnected: 0,
  /** Connected, read-write. */
  SyncConnected: 3,
  /** Authentication failed. */
  AuthFailed: 4,
  /** Connected to a read-only server. */
  ConnectedReadOnly: 5,
  /** SASL authentication succeeded. */
  SaslAuthenticated: 6,
  /** The session expired. */
  Expired: -112,
  /** The client was closed. */
  Closed: 7,
} as const;
/** One of the values of `KeeperState`. */
export type KeeperState = (typeof KeeperState)[keyof typeof KeeperState];

/** The kinds of persistent watch `addWatch` sets (server 3.6+). */
export const AddWatchMode = {
  /** A watch that stays after firing: data and child changes of the node (server 3.6+). */
  PERSISTENT: 0,
  /** A persistent watch on the node and every descendant (server 3.6+). */
  PERSISTENT_RECURSIVE: 1,
} as const;
/** One of the values of `AddWatchMode`. */
export type AddWatchMode = (typeof AddWatchMode)[keyof typeof AddWatchMode];

/** Watch kinds for checkWatches/removeWatches. Persistent (4) and PersistentRecursive (5) need a 3.9 server. */
export const WatcherType = {
  /** Child watches. */
  Children: 1,
  /** Data and exists watches. */
  Data: 2,
  /** Every kind of watch. */
  Any: 3,
  /** Persistent watches (server 3.9+). */
  Persistent: 4,
  /** Persistent recursive watches (server 3.9+). */
  PersistentRecursive: 5,
} as const;
/** One of the values of `WatcherType`. */
export type WatcherType = (typeof WatcherType)[keyof typeof WatcherType];

/** ACL permission bits; combine them with `|` (e.g. `Perms.READ | Perms.WRITE`) in `ACL.perms`. */
export const Perms = {
  /** getData, getChildren. */
  READ: 1,
  /** setData. */
  WRITE: 2,
  /** Create children. */
  CREATE: 4,
  /** Delete children. */
  DELETE: 8,
  /** setACL. */
  ADMIN: 16,
  /** All of the above. */
  ALL: 31,
} as const;
/** One of the values of `Perms`. */
export type Perms = (typeof Perms)[keyof typeof Perms];

/** Reserved xids. */
export const Xid = { NOTIFICATION: -1, PING: -2, AUTH: -4, SET_WATCHES: -8 } as const;

function reverse<T extends Record<string, number>>(o: T): Map<number, keyof T & string> {
  return new Map(Object.entries(o).map(([k, v]) => [v, k as keyof T & string]));
}

const errorNames = reverse(ErrorCode);
const eventNames = reverse(EventType);
const stateNames = reverse(KeeperState);

/** The name of an error code, e.g. "NONODE" for -101 (`UNKNOWN(n)` for an unknown code). */
export function errorCodeName(code: number): string {
  return errorNames.get(code) ?? `UNKNOWN(${code})`;
}

/** The name of an event type, e.g. "NodeDataChanged" for 3. */
export function eventTypeName(type: number): string {
  return eventNames.get(type) ?? `event(${type})`;
}

/** The name of a session state number, e.g. "SyncConnected" for 3. */
export function keeperStateName(state: number): string {
  return stateNames.get(state) ?? `state(${state})`;
}
