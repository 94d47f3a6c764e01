// multi (14) and multiRead (22): a sequence of MultiHeader + record pairs closed by a terminator
// header {type -1, done true, err -1} in both directions (as MultiOperationRecord and MultiResponse do).
import { OpCode } from "./constants.ts";
import { ProtocolError, ProtocolErrorKind } from "./errors.ts";
import type { JuteReader, JuteWriter } from "./jute.ts";
import { type ACL, type Stat, readACL, readStat, writeACL, writeStat } from "./records.ts";

type CreateBody = { path: string; data: Uint8Array | null; acl: ACL[]; flags: number };

export type MultiOp =
  | { type: typeof OpCode.create | typeof OpCode.create2 | typeof OpCode.createContainer; request: CreateBody }
  | { type: typeof OpCode.createTTL; request: CreateBody & { ttl: bigint } }
  | { type: typeof OpCode.delete | typeof OpCode.check; request: { path: string; version: number } }
  | { type: typeof OpCode.setData; request: { path: string; data: Uint8Array | null; version: number } }
  | { type: typeof OpCode.getData | typeof OpCode.getChildren; request: { path: string; watch: boolean } };

export interface MultiRequest {
  ops: MultiOp[];
}

export type MultiResult =
  | { type: typeof OpCode.create; path: string }
  | { type: typeof OpCode.create2; path: string; stat: Stat }
  | { type: typeof OpCode.delete | typeof OpCode.check }
  | { type: typeof OpCode.setData; stat: Stat }
  | { type: typeof OpCode.getData; data: Uint8Array | null; stat: Stat }
  | { type: typeof OpCode.getChildren; children: string[] }
  | { type: typeof OpCode.error; err: number };

export interface MultiResponse {
  results: MultiResult[];
}

function writeHeader(w: JuteWriter, type: number, done: boolean, err: number): void {
  w.int(type).bool(done).int(err);
}

function writeCreateBody(w: JuteWriter, c: CreateBody): void {
  w.ustring(c.path).buffer(c.data).vector(c.acl, writeACL).int(c.flags);
}

export function writeMultiRequest(w: JuteWriter, m: MultiRequest): void {
  for (const op of m.ops) {
    writeHeader(w, op.type, false, -1);
    switch (op.type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
        writeCreateBody(w, op.request);
        break;
      case OpCode.createTTL:
        writeCreateBody(w, op.request);
        w.long(op.request.ttl);
        break;
      case OpCode.delete:
      case OpCode.check:
        w.ustring(op.request.path).int(op.request.version);
        break;
      case OpCode.setData:
        w.ustring(op.request.path).buffer(op.request.data).int(op.request.version);
        break;
      case OpCode.getData:
      case OpCode.getChildren:
        w.ustring(op.request.path).bool(op.request.watch);
        break;
    }
  }
  writeHeader(w, -1, true, -1);
}

const maxOps = 1_000_000;

function readHeaders<T>(r: JuteReader, body: (type: number, err: number) => T): T[] {
  const out: T[] = [];
  for (;;) {
    const type = r.int();
    const done = r.bool();
    const err = r.int();
    if (done) return out;
    if (out.length >= maxOps) throw new ProtocolError(ProtocolErrorKind.BAD_FRAME, "multi without terminator");
    out.push(body(type, err));
  }
}

export function readMultiRequest(r: JuteReader): MultiRequest {
  const ops = readHeaders(r, (type): MultiOp => {
    switch (type) {
      case OpCode.create:
      case OpCode.create2:
      case OpCode.createContainer:
        return { type, request: { path: r.string(), data: r.buffer(), acl: r.vector(readACL) ?? [], flags: r.int() } };
      case OpCode.createTTL:
        return { type, request: { path: r.string(), data: r.buffer(), acl: r.vector(readACL) ?? [], flags: r.int(), ttl: r.long() } };
      case OpCode.delete:
      case OpCode.check:
        return { type, request: { path: r.string(), version: r.int() } };
      case OpCode.setData:
        return { type, request: { path: r.string(), data: r.buffer(), version: r.int() } };
      case OpCode.getData:
      case OpCode.getChildren:
        return { type, request: { path: r.string(), watch: r.bool() } };
      default:
        throw new ProtocolError(ProtocolErrorKind.BAD_FRAME, `op type ${type} is not allowed in multi`);
    }
  });
  return { ops };
}

export function writeMultiResponse(w: JuteWriter, m: MultiResponse): void {
  for (const res of m.results) {
    writeHeader(w, res.type, false, res.type === OpCode.error ? res.err : 0);
    switch (res.type) {
      case OpCode.create:
        w.ustring(res.path);
        break;
      case OpCode.create2:
        w.ustring(res.path);
        writeStat(w, res.stat);
        break;
      case OpCode.setData:
        writeStat(w, res.stat);
        break;
      case OpCode.getData:
        w.buffer(res.data);
        writeStat(w, res.stat);
        break;
      case OpCode.getChildren:
        w.vector(res.children, (x, s) => x.ustring(s));
        break;
      case OpCode.error:
        w.int(res.err);
        break;
    }
  }
  writeHeader(w, -1, true, -1);
}

export function readMultiResponse(r: JuteReader): MultiResponse {
  const results = readHeaders(r, (type): MultiResult => {
    switch (type) {
      case OpCode.create:
        return { type, path: r.string() };
      // createContainer and createTTL results come back tagged as create2.
      case OpCode.create2:
        return { type, path: r.string(), stat: readStat(r) };
      case OpCode.delete:
      case OpCode.check:
        return { type };
      case OpCode.setData:
        return { type, stat: readStat(r) };
      case OpCode.getData:
        return { type, data: r.buffer(), stat: readStat(r) };
      case OpCode.getChildren:
        return { type, children: r.vector((x) => x.string()) ?? [] };
      case OpCode.error:
        return { type, err: r.int() };
      default:
        throw new ProtocolError(ProtocolErrorKind.BAD_FRAME, `unknown multi result type ${type}`);
    }
  });
  return { results };
}
