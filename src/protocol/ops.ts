// Request and response records of every operation, and the op table that ties an opcode to its
// request encoder and reply decoder (zookeeper.jute).
import { OpCode } from "./constants.ts";
import type { JuteReader, JuteWriter } from "./jute.ts";
import {
  type ACL,
  type ClientInfo,
  type Stat,
  readACL,
  readClientInfo,
  readSetWatches,
  readSetWatches2,
  readStat,
  readStrings,
  writeACL,
  writeSetWatches,
  writeSetWatches2,
  writeStat,
  writeStringItem,
  type SetWatches,
  type SetWatches2,
  readAuthPacket,
  writeAuthPacket,
  type AuthPacket,
} from "./records.ts";
import { type MultiRequest, type MultiResponse, readMultiRequest, readMultiResponse, writeMultiRequest, writeMultiResponse } from "./multi.ts";

export interface CreateRequest {
  path: string;
  data: Uint8Array | null;
  acl: ACL[];
  flags: number;
}
export interface CreateTTLRequest extends CreateRequest {
  ttl: bigint;
}
interface PathRequest {
  path: string;
}
export interface PathWatchRequest {
  path: string;
  watch: boolean;
}
interface PathVersionRequest {
  path: string;
  version: number;
}
interface SetDataRequest {
  path: string;
  data: Uint8Array | null;
  version: number;
}
interface SetACLRequest {
  path: string;
  acl: ACL[];
  version: number;
}
interface PathTypeRequest {
  path: string;
  type: number;
}
interface AddWatchRequest {
  path: string;
  mode: number;
}
interface GetEphemeralsRequest {
  prefixPath: string;
}
interface ReconfigRequest {
  joiningServers: string | null;
  leavingServers: string | null;
  newMembers: string | null;
  curConfigId: bigint;
}
interface SaslToken {
  token: Uint8Array | null;
}
export interface Create2Response {
  path: string;
  stat: Stat;
}
export interface GetDataResponse {
  data: Uint8Array | null;
  stat: Stat;
}
export interface GetACLResponse {
  acl: ACL[];
  stat: Stat;
}
export interface GetChildren2Response {
  children: string[];
  stat: Stat;
}

// --- request encoders / decoders (decoders serve the golden tests and the fuzzers) ---

function writeCreateRequest(w: JuteWriter, r: CreateRequest): void {
  w.ustring(r.path).buffer(r.data).vector(r.acl, writeACL).int(r.flags);
}
function readCreateRequest(r: JuteReader): CreateRequest {
  return { path: r.string(), data: r.buffer(), acl: r.vector(readACL) ?? [], flags: r.int() };
}
function writeCreateTTLRequest(w: JuteWriter, r: CreateTTLRequest): void {
  writeCreateRequest(w, r);
  w.long(r.ttl);
}
function readCreateTTLRequest(r: JuteReader): CreateTTLRequest {
  return { ...readCreateRequest(r), ttl: r.long() };
}
const writePathRequest = (w: JuteWriter, r: PathRequest): void => {
  w.ustring(r.path);
};
const readPathRequest = (r: JuteReader): PathRequest => ({ path: r.string() });
const writePathWatchRequest = (w: JuteWriter, r: PathWatchRequest): void => {
  w.ustring(r.path).bool(r.watch);
};
const readPathWatchRequest = (r: JuteReader): PathWatchRequest => ({ path: r.string(), watch: r.bool() });
const writePathVersionRequest = (w: JuteWriter, r: PathVersionRequest): void => {
  w.ustring(r.path).int(r.version);
};
const readPathVersionRequest = (r: JuteReader): PathVersionRequest => ({ path: r.string(), version: r.int() });
const writeSetDataRequest = (w: JuteWriter, r: SetDataRequest): void => {
  w.ustring(r.path).buffer(r.data).int(r.version);
};
const readSetDataRequest = (r: JuteReader): SetDataRequest => ({ path: r.string(), data: r.buffer(), version: r.int() });
const writeSetACLRequest = (w: JuteWriter, r: SetACLRequest): void => {
  w.ustring(r.path).vector(r.acl, writeACL).int(r.version);
};
const readSetACLRequest = (r: JuteReader): SetACLRequest => ({
  path: r.string(),
  acl: r.vector(readACL) ?? [],
  version: r.int(),
});
const writePathTypeRequest = (w: JuteWriter, r: PathTypeRequest): void => {
  w.ustring(r.path).int(r.type);
};
const readPathTypeRequest = (r: JuteReader): PathTypeRequest => ({ path: r.string(), type: r.int() });
const writeAddWatchRequest = (w: JuteWriter, r: AddWatchRequest): void => {
  w.ustring(r.path).int(r.mode);
};
const readAddWatchRequest = (r: JuteReader): AddWatchRequest => ({ path: r.string(), mode: r.int() });
const writeGetEphemeralsRequest = (w: JuteWriter, r: GetEphemeralsRequest): void => {
  w.ustring(r.prefixPath);
};
const readGetEphemeralsRequest = (r: JuteReader): GetEphemeralsRequest => ({ prefixPath: r.string() });
const writeReconfigRequest = (w: JuteWriter, r: ReconfigRequest): void => {
  w.ustring(r.joiningServers).ustring(r.leavingServers).ustring(r.newMembers).long(r.curConfigId);
};
const readReconfigRequest = (r: JuteReader): ReconfigRequest => ({
  joiningServers: r.ustring(),
  leavingServers: r.ustring(),
  newMembers: r.ustring(),
  curConfigId: r.long(),
});
const writeSaslToken = (w: JuteWriter, r: SaslToken): void => {
  w.buffer(r.token);
};
const readSaslToken = (r: JuteReader): SaslToken => ({ token: r.buffer() });
const writeNothing = (): void => {};
const readNothing = (): void => undefined;

// --- response encoders / decoders (encoders serve tests that play the server) ---

const readCreateResponse = (r: JuteReader): string => r.string();
const writeCreateResponse = (w: JuteWriter, path: string): void => {
  w.ustring(path);
};
const readCreate2Response = (r: JuteReader): Create2Response => ({ path: r.string(), stat: readStat(r) });
const writeCreate2Response = (w: JuteWriter, v: Create2Response): void => {
  w.ustring(v.path);
  writeStat(w, v.stat);
};
const readGetDataResponse = (r: JuteReader): GetDataResponse => ({ data: r.buffer(), stat: readStat(r) });
const writeGetDataResponse = (w: JuteWriter, v: GetDataResponse): void => {
  w.buffer(v.data);
  writeStat(w, v.stat);
};
const readGetACLResponse = (r: JuteReader): GetACLResponse => ({ acl: r.vector(readACL) ?? [], stat: readStat(r) });
const writeGetACLResponse = (w: JuteWriter, v: GetACLResponse): void => {
  w.vector(v.acl, writeACL);
  writeStat(w, v.stat);
};
const readGetChildrenResponse = readStrings;
const writeGetChildrenResponse = (w: JuteWriter, v: string[]): void => {
  w.vector(v, writeStringItem);
};
const readGetChildren2Response = (r: JuteReader): GetChildren2Response => ({ children: readStrings(r), stat: readStat(r) });
const writeGetChildren2Response = (w: JuteWriter, v: GetChildren2Response): void => {
  w.vector(v.children, writeStringItem);
  writeStat(w, v.stat);
};
const readStringResponse = (r: JuteReader): string => r.string();
const writeStringResponse = writeCreateResponse;
const readIntResponse = (r: JuteReader): number => r.int();
const writeIntResponse = (w: JuteWriter, v: number): void => {
  w.int(v);
};
const readWhoAmIResponse = (r: JuteReader): ClientInfo[] => r.vector(readClientInfo) ?? [];
const writeWhoAmIResponse = (w: JuteWriter, v: ClientInfo[]): void => {
  w.vector(v, (x, c) => x.ustring(c.authScheme).ustring(c.user));
};

/** One opcode's codecs, both directions, so tests can play either side. */
interface OpSpec<Req, Res> {
  readonly code: number;
  readonly name: string;
  writeRequest(w: JuteWriter, req: Req): void;
  readRequest(r: JuteReader): Req;
  writeResponse(w: JuteWriter, res: Res): void;
  readResponse(r: JuteReader): Res;
}

function spec<Req, Res>(
  name: keyof typeof OpCode,
  writeRequest: (w: JuteWriter, v: Req) => void,
  readRequest: (r: JuteReader) => Req,
  writeResponse: (w: JuteWriter, v: Res) => void,
  readResponse: (r: JuteReader) => Res,
): OpSpec<Req, Res> {
  return { code: OpCode[name], name, writeRequest, readRequest, writeResponse, readResponse };
}

const stat = [writeStat, readStat] as const;
const none = [writeNothing, readNothing] as const;

/** The op table: every opcode a client sends, with its request and reply record. */
export const Ops = {
  create: spec<CreateRequest, string>("create", writeCreateRequest, readCreateRequest, writeCreateResponse, readCreateResponse),
  create2: spec<CreateRequest, Create2Response>("create2", writeCreateRequest, readCreateRequest, writeCreate2Response, readCreate2Response),
  createContainer: spec<CreateRequest, Create2Response>("createContainer", writeCreateRequest, readCreateRequest, writeCreate2Response, readCreate2Response),
  createTTL: spec<CreateTTLRequest, Create2Response>("createTTL", writeCreateTTLRequest, readCreateTTLRequest, writeCreate2Response, readCreate2Response),
  delete: spec<PathVersionRequest, void>("delete", writePathVersionRequest, readPathVersionRequest, ...none),
  exists: spec<PathWatchRequest, Stat>("exists", writePathWatchRequest, readPathWatchRequest, ...stat),
  getData: spec<PathWatchRequest, GetDataResponse>("getData", writePathWatchRequest, readPathWatchRequest, writeGetDataResponse, readGetDataResponse),
  setData: spec<SetDataRequest, Stat>("setData", writeSetDataRequest, readSetDataRequest, ...stat),
  getACL: spec<PathRequest, GetACLResponse>("getACL", writePathRequest, readPathRequest, writeGetACLResponse, readGetACLResponse),
  setACL: spec<SetACLRequest, Stat>("setACL", writeSetACLRequest, readSetACLRequest, ...stat),
  getChildren: spec<PathWatchRequest, string[]>("getChildren", writePathWatchRequest, readPathWatchRequest, writeGetChildrenResponse, readGetChildrenResponse),
  getChildren2: spec<PathWatchRequest, GetChildren2Response>("getChildren2", writePathWatchRequest, readPathWatchRequest, writeGetChildren2Response, readGetChildren2Response),
  sync: spec<PathRequest, string>("sync", writePathRequest, readPathRequest, writeStringResponse, readStringResponse),
  ping: spec<void, void>("ping", ...none, ...none),
  multi: spec<MultiRequest, MultiResponse>("multi", writeMultiRequest, readMultiRequest, writeMultiResponse, readMultiResponse),
  multiRead: spec<MultiRequest, MultiResponse>("multiRead", writeMultiRequest, readMultiRequest, writeMultiResponse, readMultiResponse),
  reconfig: spec<ReconfigRequest, GetDataResponse>("reconfig", writeReconfigRequest, readReconfigRequest, writeGetDataResponse, readGetDataResponse),
  checkWatches: spec<PathTypeRequest, void>("checkWatches", writePathTypeRequest, readPathTypeRequest, ...none),
  removeWatches: spec<PathTypeRequest, void>("removeWatches", writePathTypeRequest, readPathTypeRequest, ...none),
  auth: spec<AuthPacket, void>("auth", writeAuthPacket, readAuthPacket, ...none),
  setWatches: spec<SetWatches, void>("setWatches", writeSetWatches, readSetWatches, ...none),
  setWatches2: spec<SetWatches2, void>("setWatches2", writeSetWatches2, readSetWatches2, ...none),
  sasl: spec<SaslToken, SaslToken>("sasl", writeSaslToken, readSaslToken, writeSaslToken, readSaslToken),
  getEphemerals: spec<GetEphemeralsRequest, string[]>("getEphemerals", writeGetEphemeralsRequest, readGetEphemeralsRequest, writeGetChildrenResponse, readStrings),
  getAllChildrenNumber: spec<PathRequest, number>("getAllChildrenNumber", writePathRequest, readPathRequest, writeIntResponse, readIntResponse),
  // addWatch replies with an ErrorResponse whose err is always 0.
  addWatch: spec<AddWatchRequest, number>("addWatch", writeAddWatchRequest, readAddWatchRequest, writeIntResponse, readIntResponse),
  whoAmI: spec<void, ClientInfo[]>("whoAmI", ...none, writeWhoAmIResponse, readWhoAmIResponse),
  closeSession: spec<void, void>("closeSession", ...none, ...none),
} as const;

export type OpName = keyof typeof Ops;

const byCode = new Map<number, OpSpec<unknown, unknown>>(
  Object.values(Ops).map((s) => [s.code, s as OpSpec<unknown, unknown>]),
);

export function opSpec(code: number): OpSpec<unknown, unknown> | undefined {
  return byCode.get(code);
}
