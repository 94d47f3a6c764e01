// MIT keytab files (the FILE keytab type), read by hand. Format, as MIT krb5 writes it (its
// doc/formats/keytab_file_format.rst, checked against files written by kadmin.local ktadd 1.20):
//   05 02 (version 2: big-endian; 05 01 is version 1: the writing host's byte order)
//   then records: int32 length; > 0 an entry of at most that many bytes, < 0 a hole of -length zero
//   bytes, 0 (or the end of the file) the end.
//   entry: uint16 component count (version 1: including the realm), realm and components each as
//   uint16 length + bytes, uint32 name type (not in version 1), uint32 timestamp, uint8 kvno,
//   uint16 enctype, uint16 key length + key, and, when at least 4 record bytes remain, a uint32 kvno
//   that replaces the 8-bit one unless it is 0.
// (The MIT document gives the component count and the key length as 32 bits; the files have 16.)
import { readFileSync } from "node:fs";
import { KeytabError } from "./errors.ts";
import { BinReader, KeyBlock, NameType, type Principal } from "./types.ts";

export interface KeytabEntry {
  readonly principal: Principal;
  /** When the entry was written, in seconds since the epoch. */
  readonly timestamp: number;
  /** Key version number (the 32-bit extension when present, else the 8-bit field). */
  readonly kvno: number;
  readonly key: KeyBlock;
}

export interface Keytab {
  /** 1 or 2 (the second byte of the file). */
  readonly version: number;
  readonly entries: readonly KeytabEntry[];
}

export interface KeytabReadOptions {
  /** Byte order of a version 1 file (the writer's native order); default: this host's. */
  readonly littleEndian?: boolean;
}

const HOST_LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
/** More than any real keytab holds; a bound on the work a hostile file can cause. */
const MAX_ENTRIES = 100_000;

/** Parses keytab bytes. Throws KeytabError (with the offset) on a truncated or malformed file. */
export function parseKeytab(bytes: Uint8Array, options: KeytabReadOptions = {}): Keytab {
  const r = new BinReader(bytes, (m, o) => new KeytabError(m, o));
  if (bytes.length < 2) throw r.fail(`file of ${bytes.length} bytes is too short for a keytab`, 0);
  const magic = r.u8("format byte");
  const version = r.u8("format version");
  if (magic !== 5 || (version !== 1 && version !== 2)) {
    throw r.fail(`unknown format 0x${hex2(magic)}${hex2(version)} (expected 0x0502 or 0x0501; is this a keytab?)`, 0);
  }
  if (version === 1) r.littleEndian = options.littleEndian ?? HOST_LITTLE_ENDIAN;
  const entries: KeytabEntry[] = [];
  while (r.remaining > 0) {
    const at = r.pos;
    if (r.remaining < 4) throw r.fail(`truncated record length (${r.remaining} bytes left)`, at);
    const length = r.i32("record length");
    if (length === 0) break;
    if (length < 0) {
      const hole = -length;
      if (hole > r.remaining) throw r.fail(`hole of ${hole} bytes runs past the end of the file`, at);
      r.pos += hole;
      continue;
    }
    if (length > r.remaining) throw r.fail(`record of ${length} bytes runs past the end of the file (${r.remaining} bytes left)`, at);
    if (entries.length >= MAX_ENTRIES) throw r.fail(`more than ${MAX_ENTRIES} entries`, at);
    const recordEnd = r.pos + length;
    const fileEnd = r.end;
    r.end = recordEnd; // nothing in the entry may read past its record
    try {
      entries.push(readEntry(r, version));
    } finally {
      r.end = fileEnd;
    }
    r.pos = recordEnd;
  }
  return { version, entries };
}

function readEntry(r: BinReader, version: number): KeytabEntry {
  const start = r.pos;
  let count = r.u16("principal component count");
  if (version === 1) {
    if (count === 0) throw r.fail("version 1 principal without a realm", start);
    count -= 1;
  }
  const realm = r.text(r.u16("realm length"), "realm");
  const components: string[] = [];
  for (let i = 0; i < count; i++) components.push(r.text(r.u16(`component ${i} length`), `principal component ${i}`));
  const nameType = version === 1 ? NameType.UNKNOWN : r.u32("name type");
  const timestamp = r.u32("timestamp");
  let kvno = r.u8("key version");
  const enctype = r.u16("enctype");
  const keyLength = r.u16("key length");
  const key = r.bytes(keyLength, `key of ${keyLength} bytes`);
  if (r.remaining >= 4) {
    const kvno32 = r.u32("32-bit key version");
    if (kvno32 !== 0) kvno = kvno32;
  }
  return { principal: { nameType, components, realm }, timestamp, kvno, key: new KeyBlock(enctype, key) };
}

const hex2 = (n: number): string => n.toString(16).padStart(2, "0");

/** Reads a keytab from a path ("FILE:" / "WRFILE:" prefixes allowed) or takes its bytes. */
export function loadKeytab(source: string | Uint8Array, options: KeytabReadOptions = {}): Keytab {
  if (typeof source !== "string") return parseKeytab(source, options);
  const path = source.replace(/^(?:WR)?FILE:/, "");
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new KeytabError(`cannot read ${path}${typeof code === "string" ? ` (${code})` : ""}`, 0);
  }
  return parseKeytab(bytes, options);
}

/** True when two principals name the same thing (name types are not compared, as MIT does). */
export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.realm === b.realm && a.components.length === b.components.length && a.components.every((c, i) => c === b.components[i]);
}

/**
 * The entries of `principal` in a keytab: of one kvno (default: the highest present) and, when given,
 * of the listed enctypes only, in the order of `enctypes`.
 */
export function keysFor(keytab: Keytab, principal: Principal, options: { kvno?: number; enctypes?: readonly number[] } = {}): KeytabEntry[] {
  const mine = keytab.entries.filter((e) => samePrincipal(e.principal, principal));
  if (mine.length === 0) return [];
  const kvno = options.kvno ?? Math.max(...mine.map((e) => e.kvno));
  const ofKvno = mine.filter((e) => e.kvno === kvno);
  if (options.enctypes === undefined) return ofKvno;
  const out: KeytabEntry[] = [];
  for (const et of options.enctypes) {
    const e = ofKvno.find((x) => x.key.enctype === et);
    if (e !== undefined) out.push(e);
  }
  return out;
}
