// Values shared by the keytab and ccache readers (and, later, the Kerberos messages): principal names,
// key blocks that do not print their key, and a bounds-checked big-endian reader for binary files.

/** Principal name types (RFC 4120 §6.2). */
export const NameType = {
  UNKNOWN: 0,
  PRINCIPAL: 1,
  SRV_INST: 2,
  SRV_HST: 3,
  SRV_XHST: 4,
  UID: 5,
  X500_PRINCIPAL: 6,
  SMTP_NAME: 7,
  ENTERPRISE: 10,
} as const;

export interface Principal {
  readonly nameType: number;
  /** The name components: ["alice"], ["zookeeper", "zk1.example.com"], ["krbtgt", "EXAMPLE.COM"]. */
  readonly components: readonly string[];
  readonly realm: string;
}

// A name from a KDC or a ticket may hold any character: control characters are written as escapes (\n, \t,
// \0, else \xNN; ESC, DEL and C1 too), so a principal in a message cannot break or colour a line.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const controls = (s: string): string =>
  s.replace(CONTROL, (c) => (c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\0" ? "\\0" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`));

/** "zookeeper/zk1.example.com@EXAMPLE.COM", with "/", "@" and "\" in components escaped as MIT does. */
export function principalToString(p: Principal): string {
  const esc = (s: string): string => controls(s.replace(/[\\/@]/g, (c) => `\\${c}`));
  return `${p.components.map(esc).join("/")}@${controls(p.realm.replace(/[\\@]/g, (c) => `\\${c}`))}`;
}

const INSPECT_NODE = Symbol.for("nodejs.util.inspect.custom");
const INSPECT_DENO = Symbol.for("Deno.customInspect");

/**
 * An encryption key of an enctype. The key bytes are kept out of JSON.stringify, util.inspect,
 * console.log and Deno's inspector, which show "<redacted>" instead.
 */
export class KeyBlock {
  readonly enctype: number;
  readonly #key: Uint8Array;

  constructor(enctype: number, key: Uint8Array) {
    this.enctype = enctype;
    this.#key = key;
  }

  /** The raw key bytes. */
  get key(): Uint8Array {
    return this.#key;
  }

  get length(): number {
    return this.#key.length;
  }

  toJSON(): { enctype: number; key: string } {
    return { enctype: this.enctype, key: "<redacted>" };
  }

  toString(): string {
    return `KeyBlock(enctype ${this.enctype}, ${this.#key.length} bytes, <redacted>)`;
  }

  [INSPECT_NODE](): string {
    return this.toString();
  }

  [INSPECT_DENO](): string {
    return this.toString();
  }
}

/** Reads big-endian (or, for old native-order formats, little-endian) integers and byte strings, never past `end`. */
export class BinReader {
  readonly #buf: Uint8Array;
  readonly #view: DataView;
  readonly #fail: (message: string, offset: number) => Error;
  #le: boolean;
  pos: number;
  end: number;

  constructor(buf: Uint8Array, fail: (message: string, offset: number) => Error, littleEndian = false) {
    // A plain view even when given a Buffer, whose slice() would share memory instead of copying.
    this.#buf = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    this.#view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.#fail = fail;
    this.#le = littleEndian;
    this.pos = 0;
    this.end = buf.length;
  }

  set littleEndian(v: boolean) {
    this.#le = v;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  fail(message: string, offset = this.pos): Error {
    return this.#fail(message, offset);
  }

  need(n: number, what: string): void {
    if (n > this.end - this.pos) throw this.#fail(`truncated: ${what} needs ${n} bytes, ${Math.max(0, this.end - this.pos)} remain`, this.pos);
  }

  u8(what: string): number {
    this.need(1, what);
    return this.#buf[this.pos++];
  }

  u16(what: string): number {
    this.need(2, what);
    const v = this.#view.getUint16(this.pos, this.#le);
    this.pos += 2;
    return v;
  }

  u32(what: string): number {
    this.need(4, what);
    const v = this.#view.getUint32(this.pos, this.#le);
    this.pos += 4;
    return v;
  }

  i32(what: string): number {
    this.need(4, what);
    const v = this.#view.getInt32(this.pos, this.#le);
    this.pos += 4;
    return v;
  }

  /** n bytes, copied (so the caller may wipe or drop the file buffer). */
  bytes(n: number, what: string): Uint8Array {
    this.need(n, what);
    const out = this.#buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** n bytes as UTF-8 text; invalid UTF-8 is an error naming `what`. */
  text(n: number, what: string): string {
    const at = this.pos;
    const b = this.bytes(n, what);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(b);
    } catch {
      throw this.#fail(`${what} is not valid UTF-8`, at);
    }
  }
}
