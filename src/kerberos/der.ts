// A small DER (ASN.1, X.690) reader and writer, enough for Kerberos 5 messages (RFC 4120 §5) and the
// GSS-API token framing (RFC 2743 §3.1): SEQUENCE / SEQUENCE OF, context-specific explicit tags [n],
// [APPLICATION n], INTEGER (Int32, UInt32 and up to 48 bits), OCTET STRING, GeneralString
// (KerberosString, Realm), GeneralizedTime (KerberosTime, "YYYYMMDDHHMMSSZ"), BIT STRING (KerberosFlags),
// BOOLEAN and OBJECT IDENTIFIER.
//
// The reader parses a whole element into a tree first, with limits on input size, nesting depth and
// element count; anything malformed becomes a DerError naming what was wrong and where. It never
// loops without consuming input and never lets a TypeError or RangeError escape.
import { concatBytes } from "../protocol/bytes.ts";
import { DerError } from "./errors.ts";

export const TagClass = { Universal: 0, Application: 1, Context: 2, Private: 3 } as const;
export type TagClass = (typeof TagClass)[keyof typeof TagClass];

export const UniversalTag = {
  Boolean: 1,
  Integer: 2,
  BitString: 3,
  OctetString: 4,
  Null: 5,
  ObjectIdentifier: 6,
  Utf8String: 12,
  Sequence: 16,
  Set: 17,
  Ia5String: 22,
  GeneralizedTime: 24,
  GeneralString: 27,
} as const;

/** One decoded element. `content` is a view into the input (no copy). */
export interface DerNode {
  readonly cls: TagClass;
  readonly constructed: boolean;
  readonly tag: number;
  /** Offset of the element's first identifier byte in the input. */
  readonly offset: number;
  /** Offset of the content (after the identifier and length bytes). */
  readonly contentOffset: number;
  readonly content: Uint8Array;
  /** The children of a constructed element, in order; empty for a primitive one. */
  readonly children: readonly DerNode[];
  /** The whole encoding of this element (identifier, length, content): a view into the input. */
  readonly raw: Uint8Array;
}

export interface DerLimits {
  /** Largest input accepted, in bytes (default 1 MiB; a KDC reply or ticket is a few KiB). */
  readonly maxLength?: number;
  /** Deepest nesting accepted (default 32; Kerberos messages nest about 12 deep). */
  readonly maxDepth?: number;
  /** Most elements accepted in one input (default 65536). */
  readonly maxElements?: number;
}

const DEFAULT_MAX_LENGTH = 1 << 20;
const DEFAULT_MAX_DEPTH = 32;
const DEFAULT_MAX_ELEMENTS = 1 << 16;
/** The reader recurses once per level: no limit given can take it near the stack's end. */
const MAX_DEPTH_CAP = 256;

const CLASS_NAMES = ["UNIVERSAL", "APPLICATION", "CONTEXT", "PRIVATE"] as const;

/** "[APPLICATION 1]", "[2]", "SEQUENCE", "INTEGER", "UNIVERSAL 31" — for messages. */
export function describeTag(cls: TagClass, tag: number): string {
  if (cls === TagClass.Context) return `[${tag}]`;
  if (cls === TagClass.Universal) {
    for (const [name, n] of Object.entries(UniversalTag)) if (n === tag) return name.replace(/([a-z])([A-Z])/g, "$1 $2").toUpperCase();
    return `UNIVERSAL ${tag}`;
  }
  return `[${CLASS_NAMES[cls]} ${tag}]`;
}

const describe = (n: DerNode): string => describeTag(n.cls, n.tag);

// ---------------------------------------------------------------------------------------------------
// Reading

/**
 * Decodes exactly one DER element spanning all of `input` (trailing bytes are an error) into a tree.
 * Throws DerError on anything malformed or over the limits.
 */
export function decodeDer(input: Uint8Array, limits: DerLimits = {}): DerNode {
  if (!(input instanceof Uint8Array)) throw new DerError("input is not a Uint8Array", 0);
  input = plain(input);
  const maxLength = limits.maxLength ?? DEFAULT_MAX_LENGTH;
  if (input.length > maxLength) throw new DerError(`input of ${input.length} bytes exceeds the limit of ${maxLength}`, 0);
  if (input.length === 0) throw new DerError("empty input", 0);
  const state = { elements: 0, maxElements: limits.maxElements ?? DEFAULT_MAX_ELEMENTS, maxDepth: Math.min(limits.maxDepth ?? DEFAULT_MAX_DEPTH, MAX_DEPTH_CAP) };
  const [node, end] = readElement(input, 0, input.length, 0, state);
  if (end !== input.length) throw new DerError(`${input.length - end} trailing bytes after the ${describe(node)}`, end);
  return node;
}

/**
 * Decodes one DER element at the start of `input` and returns it with the number of bytes it used;
 * what follows is left alone (for a GSS token whose inner token is not DER, or a stream).
 */
export function decodeDerPrefix(input: Uint8Array, limits: DerLimits = {}): { node: DerNode; length: number } {
  if (!(input instanceof Uint8Array)) throw new DerError("input is not a Uint8Array", 0);
  input = plain(input);
  const maxLength = limits.maxLength ?? DEFAULT_MAX_LENGTH;
  if (input.length === 0) throw new DerError("empty input", 0);
  const state = { elements: 0, maxElements: limits.maxElements ?? DEFAULT_MAX_ELEMENTS, maxDepth: Math.min(limits.maxDepth ?? DEFAULT_MAX_DEPTH, MAX_DEPTH_CAP) };
  const [node, end] = readElement(input, 0, Math.min(input.length, maxLength), 0, state);
  return { node, length: end };
}

/** A plain Uint8Array view of the same bytes: a Buffer's slice() would share memory where callers expect a copy. */
const plain = (b: Uint8Array): Uint8Array => (Object.getPrototypeOf(b) === Uint8Array.prototype ? b : new Uint8Array(b.buffer, b.byteOffset, b.byteLength));

/** Reads the identifier and length of the element at `at`; returns [cls, constructed, tag, contentStart, contentEnd]. */
function readHeader(buf: Uint8Array, at: number, limit: number): [TagClass, boolean, number, number, number] {
  const start = at;
  if (at >= limit) throw new DerError("truncated: an element was expected", at);
  const id = buf[at++];
  const cls = (id >>> 6) as TagClass;
  const constructed = (id & 0x20) !== 0;
  let tag = id & 0x1f;
  if (tag === 0x1f) {
    // High tag number form: base-128, most significant first; at most 3 bytes (tags < 2^21).
    tag = 0;
    for (let i = 0; ; i++) {
      if (at >= limit) throw new DerError("truncated in a high tag number", at);
      if (i >= 3) throw new DerError("tag number too large", start);
      const b = buf[at++];
      if (i === 0 && b === 0x80) throw new DerError("non-minimal high tag number", start);
      tag = tag * 128 + (b & 0x7f);
      if ((b & 0x80) === 0) break;
    }
    if (tag < 31) throw new DerError("high tag number form used for a tag below 31", start);
  }
  if (at >= limit) throw new DerError(`truncated: no length after the ${describeTag(cls, tag)} identifier`, at);
  const first = buf[at++];
  let length: number;
  if (first < 0x80) {
    length = first;
  } else if (first === 0x80) {
    throw new DerError(`indefinite length (not DER) in the ${describeTag(cls, tag)}`, at - 1);
  } else {
    const n = first & 0x7f;
    if (n > 4) throw new DerError(`length of ${n} bytes in the ${describeTag(cls, tag)} is too large`, at - 1);
    if (at + n > limit) throw new DerError(`truncated in the length of the ${describeTag(cls, tag)}`, at);
    length = 0;
    for (let i = 0; i < n; i++) length = length * 256 + buf[at++];
    if (length < 0x80 || (n > 1 && length < 2 ** (8 * (n - 1)))) {
      throw new DerError(`non-minimal length encoding in the ${describeTag(cls, tag)}`, start);
    }
  }
  if (length > limit - at) {
    throw new DerError(`the ${describeTag(cls, tag)} claims ${length} content bytes but only ${limit - at} remain`, start);
  }
  return [cls, constructed, tag, at, at + length];
}

function readElement(
  buf: Uint8Array,
  at: number,
  limit: number,
  depth: number,
  state: { elements: number; maxElements: number; maxDepth: number },
): [DerNode, number] {
  if (depth > state.maxDepth) throw new DerError(`nesting deeper than ${state.maxDepth}`, at);
  if (++state.elements > state.maxElements) throw new DerError(`more than ${state.maxElements} elements`, at);
  const [cls, constructed, tag, contentStart, contentEnd] = readHeader(buf, at, limit);
  const children: DerNode[] = [];
  if (constructed) {
    let p = contentStart;
    while (p < contentEnd) {
      const [child, next] = readElement(buf, p, contentEnd, depth + 1, state);
      children.push(child);
      p = next; // always > p: every element has at least an identifier and a length byte
    }
  }
  const node: DerNode = {
    cls,
    constructed,
    tag,
    offset: at,
    contentOffset: contentStart,
    content: buf.subarray(contentStart, contentEnd),
    children,
    raw: buf.subarray(at, contentEnd),
  };
  return [node, contentEnd];
}

// --- typed access ---

/** Throws unless `node` has the given class and tag (and is constructed or primitive as asked). */
export function expect(node: DerNode, cls: TagClass, tag: number, what: string, constructed?: boolean): DerNode {
  if (node.cls !== cls || node.tag !== tag) {
    throw new DerError(`${what}: expected ${describeTag(cls, tag)}, found ${describe(node)}`, node.offset);
  }
  if (constructed !== undefined && node.constructed !== constructed) {
    throw new DerError(`${what}: the ${describe(node)} must be ${constructed ? "constructed" : "primitive"}`, node.offset);
  }
  return node;
}

/** The elements of a SEQUENCE (or SEQUENCE OF). */
export function sequence(node: DerNode, what: string): readonly DerNode[] {
  return expect(node, TagClass.Universal, UniversalTag.Sequence, what, true).children;
}

/** The single element inside an explicit tag ([n] or [APPLICATION n]). */
export function unwrapExplicit(node: DerNode, cls: TagClass, tag: number, what: string): DerNode {
  expect(node, cls, tag, what, true);
  if (node.children.length !== 1) {
    throw new DerError(`${what}: the ${describe(node)} holds ${node.children.length} elements, expected 1`, node.offset);
  }
  return node.children[0];
}

/** The element inside [APPLICATION n]. */
export const application = (node: DerNode, tag: number, what: string): DerNode => unwrapExplicit(node, TagClass.Application, tag, what);

/**
 * The fields of a Kerberos-style SEQUENCE whose members are all explicitly tagged [0], [1], …: a map
 * from the context tag to the element inside it. Tags must increase (DER order); unknown tags are kept.
 */
export class Fields {
  readonly #map = new Map<number, DerNode>();
  readonly #what: string;
  readonly #node: DerNode;

  constructor(node: DerNode, what: string) {
    this.#what = what;
    this.#node = node;
    let last = -1;
    for (const child of sequence(node, what)) {
      if (child.cls !== TagClass.Context || !child.constructed) {
        throw new DerError(`${what}: a field is ${describe(child)}, expected an explicit context tag`, child.offset);
      }
      if (child.tag <= last) throw new DerError(`${what}: field [${child.tag}] is out of order or repeated`, child.offset);
      last = child.tag;
      this.#map.set(child.tag, unwrapExplicit(child, TagClass.Context, child.tag, `${what} field [${child.tag}]`));
    }
  }

  has(tag: number): boolean {
    return this.#map.has(tag);
  }

  /** The element of field [tag]; throws DerError naming the field if it is missing. */
  required(tag: number, name: string): DerNode {
    const n = this.#map.get(tag);
    if (n === undefined) throw new DerError(`${this.#what}: required field ${name} [${tag}] is missing`, this.#node.offset);
    return n;
  }

  optional(tag: number): DerNode | undefined {
    return this.#map.get(tag);
  }
}

/** Parses a SEQUENCE of explicitly tagged fields; see Fields. */
export const fields = (node: DerNode, what: string): Fields => new Fields(node, what);

/** An INTEGER as a number; values must fit in 48 bits (±2^47), which covers every Kerberos integer. */
export function integer(node: DerNode, what: string): number {
  expect(node, TagClass.Universal, UniversalTag.Integer, what, false);
  const c = node.content;
  if (c.length === 0) throw new DerError(`${what}: empty INTEGER`, node.offset);
  if (c.length > 1 && ((c[0] === 0 && (c[1] & 0x80) === 0) || (c[0] === 0xff && (c[1] & 0x80) !== 0))) {
    throw new DerError(`${what}: non-minimal INTEGER encoding`, node.offset);
  }
  if (c.length > 6) throw new DerError(`${what}: INTEGER of ${c.length} bytes is too large`, node.offset);
  let v = c[0] & 0x80 ? c[0] - 256 : c[0];
  for (let i = 1; i < c.length; i++) v = v * 256 + c[i];
  return v;
}

/** An Int32 (-2^31 .. 2^31-1). */
export function int32(node: DerNode, what: string): number {
  const v = integer(node, what);
  if (v < -0x80000000 || v > 0x7fffffff) throw new DerError(`${what}: ${v} is outside Int32`, node.offset);
  return v;
}

/**
 * A UInt32 (0 .. 2^32-1), e.g. a nonce or a key version number. A negative Int32 is taken as its
 * unsigned 32-bit value, as some encoders write UInt32 fields as signed.
 */
export function uint32(node: DerNode, what: string): number {
  const v = integer(node, what);
  if (v < -0x80000000 || v > 0xffffffff) throw new DerError(`${what}: ${v} is outside UInt32`, node.offset);
  return v >>> 0;
}

export function boolean(node: DerNode, what: string): boolean {
  expect(node, TagClass.Universal, UniversalTag.Boolean, what, false);
  if (node.content.length !== 1) throw new DerError(`${what}: BOOLEAN of ${node.content.length} bytes`, node.offset);
  const b = node.content[0];
  if (b !== 0 && b !== 0xff) throw new DerError(`${what}: BOOLEAN must be 00 or FF in DER`, node.offset);
  return b === 0xff;
}

/** The bytes of an OCTET STRING (a view into the input). */
export function octetString(node: DerNode, what: string): Uint8Array {
  return expect(node, TagClass.Universal, UniversalTag.OctetString, what, false).content;
}

/**
 * A KerberosString / Realm: GeneralString (IA5 in RFC 4120, UTF-8 in practice), also accepting
 * UTF8String and IA5String. Invalid UTF-8 is an error.
 */
export function kerberosString(node: DerNode, what: string): string {
  if (node.cls !== TagClass.Universal || (node.tag !== UniversalTag.GeneralString && node.tag !== UniversalTag.Utf8String && node.tag !== UniversalTag.Ia5String)) {
    throw new DerError(`${what}: expected GENERAL STRING, found ${describe(node)}`, node.offset);
  }
  if (node.constructed) throw new DerError(`${what}: constructed string (not DER)`, node.offset);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(node.content);
  } catch {
    throw new DerError(`${what}: string is not valid UTF-8`, node.offset);
  }
}

/** A KerberosTime: GeneralizedTime "YYYYMMDDHHMMSSZ" (no fraction), as a Date. */
export function generalizedTime(node: DerNode, what: string): Date {
  expect(node, TagClass.Universal, UniversalTag.GeneralizedTime, what, false);
  const c = node.content;
  const bad = (why: string): DerError => new DerError(`${what}: GeneralizedTime ${why} (KerberosTime is YYYYMMDDHHMMSSZ)`, node.offset);
  if (c.length !== 15 || c[14] !== 0x5a) throw bad(`of ${c.length} bytes is not in the form YYYYMMDDHHMMSSZ`);
  const digits: number[] = [];
  for (let i = 0; i < 14; i++) {
    const d = c[i] - 0x30;
    if (d < 0 || d > 9) throw bad("has a non-digit");
    digits.push(d);
  }
  const num = (i: number, n: number): number => digits.slice(i, i + n).reduce((a, d) => a * 10 + d, 0);
  const [y, mo, d, h, mi, s] = [num(0, 4), num(4, 2), num(6, 2), num(8, 2), num(10, 2), num(12, 2)];
  const back = new Date(0);
  back.setUTCFullYear(y, mo - 1, d); // not Date.UTC, which maps years 0..99 to 1900..1999
  back.setUTCHours(h, mi, s, 0);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59 || back.getUTCDate() !== d || back.getUTCMonth() !== mo - 1) {
    throw bad("is not a valid date and time");
  }
  return back;
}

/** A BIT STRING: its bytes (a view) and the number of unused bits in the last byte. */
export function bitString(node: DerNode, what: string): { bytes: Uint8Array; unusedBits: number } {
  expect(node, TagClass.Universal, UniversalTag.BitString, what, false);
  const c = node.content;
  if (c.length === 0) throw new DerError(`${what}: BIT STRING without its unused-bits byte`, node.offset);
  const unusedBits = c[0];
  if (unusedBits > 7 || (c.length === 1 && unusedBits !== 0)) throw new DerError(`${what}: BIT STRING with ${unusedBits} unused bits`, node.offset);
  return { bytes: c.subarray(1), unusedBits };
}

/**
 * KerberosFlags (KDCOptions, TicketFlags, APOptions): a BIT STRING of at least 32 bits read as a
 * 32-bit number whose most significant bit is flag 0. Shorter strings are zero-extended; bits past 32
 * are ignored.
 */
export function kerberosFlags(node: DerNode, what: string): number {
  const { bytes } = bitString(node, what);
  let v = 0;
  for (let i = 0; i < 4; i++) v = v * 256 + (i < bytes.length ? bytes[i] : 0);
  return v >>> 0;
}

/** An OBJECT IDENTIFIER in dotted form, e.g. "1.2.840.113554.1.2.2". */
export function objectIdentifier(node: DerNode, what: string): string {
  expect(node, TagClass.Universal, UniversalTag.ObjectIdentifier, what, false);
  const c = node.content;
  if (c.length === 0) throw new DerError(`${what}: empty OBJECT IDENTIFIER`, node.offset);
  if (c.length > 64) throw new DerError(`${what}: OBJECT IDENTIFIER of ${c.length} bytes is too long`, node.offset);
  const arcs: number[] = [];
  let v = 0;
  let started = false;
  for (let i = 0; i < c.length; i++) {
    if (!started && c[i] === 0x80) throw new DerError(`${what}: non-minimal OBJECT IDENTIFIER arc`, node.offset);
    started = true;
    v = v * 128 + (c[i] & 0x7f);
    if (v > Number.MAX_SAFE_INTEGER / 256) throw new DerError(`${what}: OBJECT IDENTIFIER arc too large`, node.offset);
    if ((c[i] & 0x80) === 0) {
      if (arcs.length === 0) {
        const first = v < 40 ? 0 : v < 80 ? 1 : 2;
        arcs.push(first, v - first * 40);
      } else arcs.push(v);
      v = 0;
      started = false;
    }
  }
  if (started) throw new DerError(`${what}: truncated OBJECT IDENTIFIER`, node.offset);
  return arcs.join(".");
}

// ---------------------------------------------------------------------------------------------------
// Writing: each function returns the complete encoding of one element.

function lengthBytes(n: number): number[] {
  if (n < 0x80) return [n];
  const out: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) out.unshift(v & 0xff);
  return [0x80 | out.length, ...out];
}

/** An element of any class and tag with the given content. */
export function tlv(cls: TagClass, constructed: boolean, tag: number, content: Uint8Array): Uint8Array {
  if (!Number.isInteger(tag) || tag < 0 || tag >= 1 << 21) throw new RangeError(`DER tag ${tag} out of range`);
  const id: number[] = [];
  const first = (cls << 6) | (constructed ? 0x20 : 0);
  if (tag < 31) id.push(first | tag);
  else {
    const t: number[] = [];
    for (let v = tag; v > 0; v >>>= 7) t.unshift((v & 0x7f) | (t.length ? 0x80 : 0));
    id.push(first | 0x1f, ...t);
  }
  const len = lengthBytes(content.length);
  const out = new Uint8Array(id.length + len.length + content.length);
  out.set(id, 0);
  out.set(len, id.length);
  out.set(content, id.length + len.length);
  return out;
}

/** SEQUENCE (or SEQUENCE OF) of already-encoded elements. */
export const encodeSequence = (items: readonly Uint8Array[]): Uint8Array => tlv(TagClass.Universal, true, UniversalTag.Sequence, concatBytes(...items));

/** [n] EXPLICIT around an encoded element. */
export const encodeExplicit = (tag: number, item: Uint8Array): Uint8Array => tlv(TagClass.Context, true, tag, item);

/** [APPLICATION n] around an encoded element. */
export const encodeApplication = (tag: number, item: Uint8Array): Uint8Array => tlv(TagClass.Application, true, tag, item);

/**
 * A Kerberos-style SEQUENCE: each [tag, encoded value] pair becomes an explicit [tag] field; pairs whose
 * value is undefined (OPTIONAL fields left out) are skipped. Tags are written in the order given.
 */
export function encodeFields(fieldsList: ReadonlyArray<readonly [number, Uint8Array | undefined]>): Uint8Array {
  const items: Uint8Array[] = [];
  for (const [tag, value] of fieldsList) if (value !== undefined) items.push(encodeExplicit(tag, value));
  return encodeSequence(items);
}

/** INTEGER from a safe integer (two's complement, minimal). */
export function encodeInteger(v: number): Uint8Array {
  if (!Number.isSafeInteger(v)) throw new RangeError(`DER INTEGER ${v} is not a safe integer`);
  const bytes: number[] = [];
  let x = v;
  for (;;) {
    const b = ((x % 256) + 256) % 256;
    bytes.unshift(b);
    x = (x - b) / 256;
    if ((x === 0 && (b & 0x80) === 0) || (x === -1 && (b & 0x80) !== 0)) break;
  }
  return tlv(TagClass.Universal, false, UniversalTag.Integer, Uint8Array.from(bytes));
}

/** UInt32 (nonce, kvno, sequence number) as a non-negative INTEGER. */
export function encodeUint32(v: number): Uint8Array {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new RangeError(`UInt32 ${v} out of range`);
  return encodeInteger(v);
}

export const encodeBoolean = (v: boolean): Uint8Array => tlv(TagClass.Universal, false, UniversalTag.Boolean, Uint8Array.of(v ? 0xff : 0));

export const encodeOctetString = (b: Uint8Array): Uint8Array => tlv(TagClass.Universal, false, UniversalTag.OctetString, b);

/** KerberosString / Realm as GeneralString (UTF-8 bytes). */
export const encodeKerberosString = (s: string): Uint8Array => tlv(TagClass.Universal, false, UniversalTag.GeneralString, new TextEncoder().encode(s));

/** KerberosTime: GeneralizedTime "YYYYMMDDHHMMSSZ" (milliseconds dropped). */
export function encodeGeneralizedTime(t: Date | number): Uint8Array {
  const d = new Date(typeof t === "number" ? t : t.getTime());
  if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 0 || d.getUTCFullYear() > 9999) throw new RangeError("KerberosTime out of range");
  const p = (n: number, w = 2): string => String(n).padStart(w, "0");
  const s = `${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
  return tlv(TagClass.Universal, false, UniversalTag.GeneralizedTime, new TextEncoder().encode(s));
}

export function encodeBitString(bytes: Uint8Array, unusedBits = 0): Uint8Array {
  if (!Number.isInteger(unusedBits) || unusedBits < 0 || unusedBits > 7 || (bytes.length === 0 && unusedBits !== 0)) {
    throw new RangeError(`BIT STRING unused bits ${unusedBits} out of range`);
  }
  const c = new Uint8Array(bytes.length + 1);
  c[0] = unusedBits;
  c.set(bytes, 1);
  return tlv(TagClass.Universal, false, UniversalTag.BitString, c);
}

/** KerberosFlags as a 32-bit BIT STRING (flag 0 is the most significant bit), as RFC 4120 §5.2.8 asks. */
export function encodeKerberosFlags(flags: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, flags >>> 0);
  return encodeBitString(b, 0);
}

export function encodeObjectIdentifier(oid: string): Uint8Array {
  const arcs = oid.split(".").map((s) => (/^\d+$/.test(s) ? Number(s) : NaN));
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a)) || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40)) {
    throw new RangeError(`bad OBJECT IDENTIFIER ${oid}`);
  }
  const out: number[] = [];
  const push = (v: number): void => {
    const t: number[] = [];
    for (let x = v; ; x = Math.floor(x / 128)) {
      t.unshift((x % 128) | (t.length ? 0x80 : 0));
      if (x < 128) break;
    }
    out.push(...t);
  };
  push(arcs[0] * 40 + arcs[1]);
  for (const a of arcs.slice(2)) push(a);
  return tlv(TagClass.Universal, false, UniversalTag.ObjectIdentifier, Uint8Array.from(out));
}
