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

export const ErrorCode = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  UNKNOWNSESSION: -12,
  NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  SESSIONMOVED: -118,
  NOTREADONLY: -119,
  EPHEMERALONLOCALSESSION: -120,
  NOWATCHER: -121,
  REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123,
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  QUOTAEXCEEDED: -125,
  THROTTLEDOP: -127,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const CreateMode = {
  PERSISTENT: 0,
  EPHEMERAL: 1,
  PERSISTENT_SEQUENTIAL: 2,
  EPHEMERAL_SEQUENTIAL: 3,
  CONTAINER: 4,
  PERSISTENT_WITH_TTL: 5,
  PERSISTENT_SEQUENTIAL_WITH_TTL: 6,
} as const;
export type CreateMode = (typeof CreateMode)[keyof typeof CreateMode];

export const EventType = {
  None: -1,
  NodeCreated: 1,
  NodeDeleted: 2,
  NodeDataChanged: 3,
  NodeChildrenChanged: 4,
  DataWatchRemoved: 5,
  ChildWatchRemoved: 6,
  PersistentWatchRemoved: 7,
} as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export const KeeperState = {
  Disconnected: 0,
  SyncConnected: 3,
  AuthFailed: 4,
  ConnectedReadOnly: 5,
  SaslAuthenticated: 6,
  Expired: -112,
  Closed: 7,
} as const;
export type KeeperState = (typeof KeeperState)[keyof typeof KeeperState];

export const AddWatchMode = { PERSISTENT: 0, PERSISTENT_RECURSIVE: 1 } as const;
export type AddWatchMode = (typeof AddWatchMode)[keyof typeof AddWatchMode];

/** Watch kinds for checkWatches/removeWatches. Persistent (4) and PersistentRecursive (5) need a 3.9 server. */
export const WatcherType = { Children: 1, Data: 2, Any: 3, Persistent: 4, PersistentRecursive: 5 } as const;
export type WatcherType = (typeof WatcherType)[keyof typeof WatcherType];

export const Perms = { READ: 1, WRITE: 2, CREATE: 4, DELETE: 8, ADMIN: 16, ALL: 31 } as const;
export type Perms = (typeof Perms)[keyof typeof Perms];

/** Reserved xids. */
export const Xid = { NOTIFICATION: -1, PING: -2, AUTH: -4, SET_WATCHES: -8 } as const;

function reverse<T extends Record<string, number>>(o: T): Map<number, keyof T & string> {
  return new Map(Object.entries(o).map(([k, v]) => [v, k as keyof T & string]));
}

const opNames = reverse(OpCode);
const errorNames = reverse(ErrorCode);
const eventNames = reverse(EventType);
const stateNames = reverse(KeeperState);

export function opName(code: number): string {
  return opNames.get(code) ?? `op(${code})`;
}

export function errorCodeName(code: number): string {
  return errorNames.get(code) ?? `UNKNOWN(${code})`;
}

export function eventTypeName(type: number): string {
  return eventNames.get(type) ?? `event(${type})`;
}

export function keeperStateName(state: number): string {
  return stateNames.get(state) ?? `state(${state})`;
}
