// fast-check arbitraries for every Jute record and every op of the op table, plus a catalogue that
// pairs each record's arbitrary with its codec so one property can walk all of them.
import fc from "fast-check";
import {
  type ACL,
  type AuthPacket,
  type ClientInfo,
  type ConnectRequest,
  type ConnectResponse,
  type Id,
  type JuteReader,
  type JuteWriter,
  type MultiOp,
  type MultiRequest,
  type MultiResponse,
  type MultiResult,
  type ReplyHeader,
  type RequestHeader,
  type SetWatches,
  type SetWatches2,
  type Stat,
  type WatcherEvent,
  OpCode,
  Ops,
  type OpName,
  readACL,
  readAuthPacket,
  readClientInfo,
  readConnectRequest,
  readConnectResponse,
  readId,
  readReplyHeader,
  readRequestHeader,
  readSetWatches,
  readSetWatches2,
  readStat,
  readWatcherEvent,
  writeACL,
  writeAuthPacket,
  writeClientInfo,
  writeConnectRequest,
  writeConnectResponse,
  writeId,
  writeReplyHeader,
  writeRequestHeader,
  writeSetWatches,
  writeSetWatches2,
  writeStat,
  writeWatcherEvent,
} from "../../src/protocol/index.ts";

type Arb<T> = fc.Arbitrary<T>;

/** Plain objects, like the decoders build (fc.record defaults to null-prototype objects). */
function rec<T>(model: { [K in keyof T]: Arb<T[K]> }): Arb<T> {
  return fc.record(model, { noNullPrototype: true }) as Arb<T>;
}

// --- primitives ---

export const int32: Arb<number> = fc.integer({ min: -0x80000000, max: 0x7fffffff });
export const int64: Arb<bigint> = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
/** Epoch-millisecond fields decode to numbers, so they stay within the safe-integer range. */
export const millis: Arb<number> = fc.maxSafeNat();
/** Any code point, never a lone surrogate (those cannot survive UTF-8). */
export const ustr: Arb<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: "binary", maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom("", "/", "/zookeeper/config", "/a/b-0000000001", "world", "anyone") },
);
export const nullableStr: Arb<string | null> = fc.option(ustr, { nil: null, freq: 4 });
export const bytes: Arb<Uint8Array> = fc.uint8Array({ maxLength: 48 });
export const nullableBytes: Arb<Uint8Array | null> = fc.option(bytes, { nil: null, freq: 4 });
const strList: Arb<string[]> = fc.array(ustr, { maxLength: 6 });

// --- common records ---

export const id: Arb<Id> = rec({ scheme: ustr, id: ustr });
export const acl: Arb<ACL> = rec({ perms: int32, id });
export const acls: Arb<ACL[]> = fc.array(acl, { maxLength: 4 });
export const stat: Arb<Stat> = rec({
  czxid: int64,
  mzxid: int64,
  ctime: millis,
  mtime: millis,
  version: int32,
  cversion: int32,
  aversion: int32,
  ephemeralOwner: int64,
  dataLength: int32,
  numChildren: int32,
  pzxid: int64,
});
export const requestHeader: Arb<RequestHeader> = rec({ xid: int32, type: int32 });
export const replyHeader: Arb<ReplyHeader> = rec({ xid: int32, zxid: int64, err: int32 });
export const connectRequest: Arb<ConnectRequest> = rec({
  protocolVersion: int32,
  lastZxidSeen: int64,
  timeOut: int32,
  sessionId: int64,
  passwd: bytes,
  readOnly: fc.boolean(),
});
export const connectResponse: Arb<ConnectResponse> = rec({
  protocolVersion: int32,
  timeOut: int32,
  sessionId: int64,
  passwd: bytes,
  readOnly: fc.boolean(),
});
export const watcherEvent: Arb<WatcherEvent> = rec({ type: int32, state: int32, path: ustr });
export const authPacket: Arb<AuthPacket> = rec({ type: int32, scheme: ustr, auth: bytes });
export const setWatches: Arb<SetWatches> = rec({
  relativeZxid: int64,
  dataWatches: strList,
  existWatches: strList,
  childWatches: strList,
});
export const setWatches2: Arb<SetWatches2> = rec({
  relativeZxid: int64,
  dataWatches: strList,
  existWatches: strList,
  childWatches: strList,
  persistentWatches: strList,
  persistentRecursiveWatches: strList,
});
export const clientInfo: Arb<ClientInfo> = rec({ authScheme: ustr, user: ustr });

// --- per-operation bodies ---

const createBody = rec({ path: ustr, data: nullableBytes, acl: acls, flags: int32 });
const createTTLBody = rec({ path: ustr, data: nullableBytes, acl: acls, flags: int32, ttl: int64 });
const pathVersion = rec({ path: ustr, version: int32 });
const pathWatch = rec({ path: ustr, watch: fc.boolean() });
const pathOnly = rec({ path: ustr });
const setDataBody = rec({ path: ustr, data: nullableBytes, version: int32 });
const pathType = rec({ path: ustr, type: int32 });

export const multiOp: Arb<MultiOp> = fc.oneof(
  rec({ type: fc.constantFrom(OpCode.create, OpCode.create2, OpCode.createContainer), request: createBody }),
  rec({ type: fc.constant(OpCode.createTTL), request: createTTLBody }),
  rec({ type: fc.constantFrom(OpCode.delete, OpCode.check), request: pathVersion }),
  rec({ type: fc.constant(OpCode.setData), request: setDataBody }),
  rec({ type: fc.constantFrom(OpCode.getData, OpCode.getChildren), request: pathWatch }),
);
export const multiRequest: Arb<MultiRequest> = rec({ ops: fc.array(multiOp, { maxLength: 6 }) });

/** A result that is not a failure. */
const multiOk: Arb<MultiResult> = fc.oneof(
  rec({ type: fc.constant(OpCode.create), path: ustr }),
  rec({ type: fc.constant(OpCode.create2), path: ustr, stat }),
  rec({ type: fc.constantFrom(OpCode.delete, OpCode.check) }),
  rec({ type: fc.constant(OpCode.setData), stat }),
  rec({ type: fc.constant(OpCode.getData), data: nullableBytes, stat }),
  rec({ type: fc.constant(OpCode.getChildren), children: strList }),
);
const multiError = (err: Arb<number>): Arb<MultiResult> => rec({ type: fc.constant(OpCode.error), err });

/** Random result mixes, plus the shape of a failed atomic multi: 0 … real code … -2. */
export const multiResponse: Arb<MultiResponse> = fc.oneof(
  rec({ results: fc.array(fc.oneof(multiOk, multiError(int32)), { maxLength: 6 }) }),
  fc
    .tuple(fc.nat(4), fc.nat(4), fc.constantFrom(-101, -110, -103, -111, -108, -8))
    .map(([before, after, code]) => ({
      results: [
        ...Array.from({ length: before }, (): MultiResult => ({ type: OpCode.error, err: 0 })),
        { type: OpCode.error, err: code },
        ...Array.from({ length: after }, (): MultiResult => ({ type: OpCode.error, err: -2 })),
      ],
    })),
);

const none: Arb<undefined> = fc.constant(undefined);

/** Request and response arbitraries for every entry of `Ops`. */
export const opArbitraries: { [K in OpName]: { request: Arb<unknown>; response: Arb<unknown> } } = {
  create: { request: createBody, response: ustr },
  create2: { request: createBody, response: rec({ path: ustr, stat }) },
  createContainer: { request: createBody, response: rec({ path: ustr, stat }) },
  createTTL: { request: createTTLBody, response: rec({ path: ustr, stat }) },
  delete: { request: pathVersion, response: none },
  exists: { request: pathWatch, response: stat },
  getData: { request: pathWatch, response: rec({ data: nullableBytes, stat }) },
  setData: { request: setDataBody, response: stat },
  getACL: { request: pathOnly, response: rec({ acl: acls, stat }) },
  setACL: { request: rec({ path: ustr, acl: acls, version: int32 }), response: stat },
  getChildren: { request: pathWatch, response: strList },
  getChildren2: { request: pathWatch, response: rec({ children: strList, stat }) },
  sync: { request: pathOnly, response: ustr },
  ping: { request: none, response: none },
  multi: { request: multiRequest, response: multiResponse },
  multiRead: { request: multiRequest, response: multiResponse },
  reconfig: {
    request: rec({ joiningServers: nullableStr, leavingServers: nullableStr, newMembers: nullableStr, curConfigId: int64 }),
    response: rec({ data: nullableBytes, stat }),
  },
  checkWatches: { request: pathType, response: none },
  removeWatches: { request: pathType, response: none },
  auth: { request: authPacket, response: none },
  setWatches: { request: setWatches, response: none },
  setWatches2: { request: setWatches2, response: none },
  sasl: { request: rec({ token: nullableBytes }), response: rec({ token: nullableBytes }) },
  getEphemerals: { request: rec({ prefixPath: ustr }), response: strList },
  getAllChildrenNumber: { request: pathOnly, response: int32 },
  addWatch: { request: rec({ path: ustr, mode: int32 }), response: int32 },
  whoAmI: { request: none, response: fc.array(clientInfo, { maxLength: 4 }) },
  closeSession: { request: none, response: none },
};

/** One codec under test: a name, an arbitrary, and its writer/reader. */
export interface RecordCase {
  name: string;
  arb: Arb<unknown>;
  write: (w: JuteWriter, v: unknown) => void;
  read: (r: JuteReader) => unknown;
  /** True when the last byte is optional (ConnectRequest/Response readOnly): that prefix decodes. */
  optionalLastByte?: boolean;
}

function rc<T>(name: string, arb: Arb<T>, write: (w: JuteWriter, v: T) => void, read: (r: JuteReader) => T, optionalLastByte = false): RecordCase {
  return { name, arb, write: write as (w: JuteWriter, v: unknown) => void, read, optionalLastByte };
}

/** Every standalone record, then both directions of every op. */
export const recordCases: RecordCase[] = [
  rc("Id", id, writeId, readId),
  rc("ACL", acl, writeACL, readACL),
  rc("Stat", stat, writeStat, readStat),
  rc("RequestHeader", requestHeader, writeRequestHeader, readRequestHeader),
  rc("ReplyHeader", replyHeader, writeReplyHeader, readReplyHeader),
  rc("ConnectRequest", connectRequest, writeConnectRequest, readConnectRequest, true),
  rc("ConnectResponse", connectResponse, writeConnectResponse, readConnectResponse, true),
  rc("WatcherEvent", watcherEvent, writeWatcherEvent, readWatcherEvent),
  rc("AuthPacket", authPacket, writeAuthPacket, readAuthPacket),
  rc("SetWatches", setWatches, writeSetWatches, readSetWatches),
  rc("SetWatches2", setWatches2, writeSetWatches2, readSetWatches2),
  rc("ClientInfo", clientInfo, writeClientInfo, readClientInfo),
  ...(Object.keys(Ops) as OpName[]).flatMap((name): RecordCase[] => {
    const spec = Ops[name] as unknown as {
      writeRequest: (w: JuteWriter, v: unknown) => void;
      readRequest: (r: JuteReader) => unknown;
      writeResponse: (w: JuteWriter, v: unknown) => void;
      readResponse: (r: JuteReader) => unknown;
    };
    const arbs = opArbitraries[name];
    return [
      rc(`${name} request`, arbs.request, spec.writeRequest, spec.readRequest),
      rc(`${name} response`, arbs.response, spec.writeResponse, spec.readResponse),
    ];
  }),
];
