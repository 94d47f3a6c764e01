// Output of the zkts command: plain lines (pipeable, no colours) or one JSON value per result
// (--json), and the text forms of stats, ACLs and errors that both modes share.
import type { ACL, Stat } from "../index.ts";
import { Perms, ZooKeeperError } from "../index.ts";

interface Sink {
  write(chunk: string | Uint8Array): unknown;
}

export class Output {
  readonly json: boolean;
  private readonly out: Sink;
  private readonly err: Sink;

  constructor(json: boolean, out: Sink, err: Sink) {
    this.json = json;
    this.out = out;
    this.err = err;
  }

  /** One result: `value` as a JSON line with --json, else the plain lines. */
  result(value: unknown, plain: string | readonly string[]): void {
    if (this.json) this.out.write(`${toJson(value)}\n`);
    else for (const l of typeof plain === "string" ? [plain] : plain) this.out.write(`${l}\n`);
  }

  /** Bytes exactly as they are (get). */
  raw(bytes: Uint8Array): void {
    if (bytes.length > 0) this.out.write(bytes);
  }

  /** A plain line on stderr (never part of the result). */
  note(text: string): void {
    this.err.write(`${text}\n`);
  }

  error(e: unknown): void {
    if (this.json) this.err.write(`${toJson(errorJson(e))}\n`);
    else this.err.write(`${errorText(e)}\n`);
  }
}

/** JSON with bigints as strings. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

/** `NONODE (getData /missing)` for ZooKeeper errors, the message otherwise. */
export function errorText(e: unknown): string {
  if (e instanceof ZooKeeperError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

function errorJson(e: unknown): Record<string, unknown> {
  if (e instanceof ZooKeeperError) return { error: e.codeName, code: e.code, op: e.op, path: e.path, message: e.message };
  return { error: "ERROR", message: errorText(e) };
}

const hex = (n: bigint): string => `0x${n.toString(16)}`;

const STAT_FIELDS = ["czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion", "ephemeralOwner", "dataLength", "numChildren", "pzxid"] as const;

/** The Stat with zxids and the owner as 0x-hex strings (times stay ms since the epoch). */
export function statJson(s: Stat): Record<string, string | number> {
  return {
    czxid: hex(s.czxid), mzxid: hex(s.mzxid), ctime: s.ctime, mtime: s.mtime, version: s.version, cversion: s.cversion,
    aversion: s.aversion, ephemeralOwner: hex(s.ephemeralOwner), dataLength: s.dataLength, numChildren: s.numChildren, pzxid: hex(s.pzxid),
  };
}

/** `name = value` lines, times as ISO 8601 next to their ms. */
export function statLines(s: Stat): string[] {
  const j = statJson(s);
  return STAT_FIELDS.map((f) => {
    const v = j[f];
    return f === "ctime" || f === "mtime" ? `${f} = ${v} (${new Date(v as number).toISOString()})` : `${f} = ${v}`;
  });
}

// zkCli's letters, in its order.
const LETTERS: [string, number][] = [["c", Perms.CREATE], ["d", Perms.DELETE], ["r", Perms.READ], ["w", Perms.WRITE], ["a", Perms.ADMIN]];

export function permsText(perms: number): string {
  return LETTERS.filter(([, bit]) => (perms & bit) !== 0).map(([l]) => l).join("");
}

export function aclText(a: ACL): string {
  return `${a.id.scheme}:${a.id.id}:${permsText(a.perms)}`;
}

/** `scheme:id:perms[,...]` (the id may hold colons: digest user:hash, ip addr/bits); throws on bad input. */
export function parseAcl(text: string): ACL[] {
  return text.split(",").map((entry) => {
    const first = entry.indexOf(":");
    const last = entry.lastIndexOf(":");
    if (first < 0 || last === first) throw new Error(`ACL ${JSON.stringify(entry)} is not scheme:id:perms`);
    const letters = entry.slice(last + 1);
    let perms = 0;
    for (const ch of letters) {
      const bit = LETTERS.find(([l]) => l === ch)?.[1];
      if (bit === undefined) throw new Error(`ACL ${JSON.stringify(entry)}: unknown permission ${JSON.stringify(ch)} (use cdrwa)`);
      perms |= bit;
    }
    return { perms, id: { scheme: entry.slice(0, first), id: entry.slice(first + 1, last) } };
  });
}

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Data for JSON: UTF-8 text when it is valid UTF-8, else base64. */
export function dataJson(data: Uint8Array | null): { data: string | null; encoding?: "base64" } {
  if (data === null) return { data: null };
  try {
    return { data: strict.decode(data) };
  } catch {
    let bin = "";
    for (const b of data) bin += String.fromCharCode(b);
    return { data: btoa(bin), encoding: "base64" };
  }
}
