// FILE credentials caches as MIT kinit writes them, read by hand. Format (MIT krb5's
// doc/formats/ccache_file_format.rst, checked against caches written by kinit and kvno 1.20):
//   05 04 (version 4) or 05 03 (version 3): big-endian. Versions 1 and 2 (native byte order) are refused.
//   version 4 only: uint16 header length, then fields (uint16 tag, uint16 length, value); tag 1 is the
//   KDC time offset (int32 seconds, int32 microseconds).
//   default principal: uint32 name type, uint32 component count, realm and components as
//   uint32 length + bytes.
//   credentials until the end of the file: client, server (principals), keyblock (uint16 enctype,
//   repeated in version 3; uint32 length + key), uint32 authtime, starttime, endtime, renew_till,
//   uint8 is_skey, uint32 ticket flags, addresses (uint32 count; uint16 type + data each), authdata
//   (uint32 count; uint16 type + data each), ticket (data), second ticket (data).
// Entries whose server realm is "X-CACHECONF:" are configuration (fast_avail, pa_type, …), not tickets.
import { readFileSync } from "node:fs";
import * as process from "node:process"; // a namespace import: the CommonJS build has no default-import interop
import { CcacheError } from "./errors.ts";
import { BinReader, KeyBlock, type Principal } from "./types.ts";

/** Ticket flags (RFC 4120 §5.3) as the 32-bit number of a ccache: flag 0 is the most significant bit. */
export const TicketFlags = {
  FORWARDABLE: 0x40000000,
  FORWARDED: 0x20000000,
  PROXIABLE: 0x10000000,
  PROXY: 0x08000000,
  MAY_POSTDATE: 0x04000000,
  POSTDATED: 0x02000000,
  INVALID: 0x01000000,
  RENEWABLE: 0x00800000,
  INITIAL: 0x00400000,
  PRE_AUTHENT: 0x00200000,
  HW_AUTHENT: 0x00100000,
  TRANSITED_POLICY_CHECKED: 0x00080000,
  OK_AS_DELEGATE: 0x00040000,
  ANONYMOUS: 0x00008000,
} as const;

/** klist -f's letters for ticket flags, in klist's order ("RIA" for a renewable initial preauthenticated TGT). */
export function ticketFlagLetters(flags: number): string {
  const letters: Array<[number, string]> = [
    [TicketFlags.FORWARDABLE, "F"],
    [TicketFlags.FORWARDED, "f"],
    [TicketFlags.PROXIABLE, "P"],
    [TicketFlags.PROXY, "p"],
    [TicketFlags.MAY_POSTDATE, "D"],
    [TicketFlags.POSTDATED, "d"],
    [TicketFlags.INVALID, "i"],
    [TicketFlags.RENEWABLE, "R"],
    [TicketFlags.INITIAL, "I"],
    [TicketFlags.HW_AUTHENT, "H"],
    [TicketFlags.PRE_AUTHENT, "A"],
    [TicketFlags.TRANSITED_POLICY_CHECKED, "T"],
    [TicketFlags.OK_AS_DELEGATE, "O"],
    [TicketFlags.ANONYMOUS, "a"],
  ];
  return letters.filter(([bit]) => (flags & bit) !== 0).map(([, l]) => l).join("");
}

export interface Address {
  readonly type: number;
  readonly data: Uint8Array;
}

export interface AuthData {
  readonly type: number;
  readonly data: Uint8Array;
}

export interface Credential {
  readonly client: Principal;
  readonly server: Principal;
  /** The session key. */
  readonly key: KeyBlock;
  /** Seconds since the epoch; 0 when absent (a starttime of 0 means the authtime). */
  readonly authTime: number;
  readonly startTime: number;
  readonly endTime: number;
  readonly renewTill: number;
  readonly isSkey: boolean;
  readonly flags: number;
  readonly addresses: readonly Address[];
  readonly authData: readonly AuthData[];
  /** The DER Ticket ([APPLICATION 1]), as sent in an AP-REQ. */
  readonly ticket: Uint8Array;
  readonly secondTicket: Uint8Array;
}

/** A configuration entry (server realm "X-CACHECONF:"): e.g. fast_avail = "yes", pa_type = "2". */
export interface CcacheConfig {
  readonly key: string;
  /** The principal the key is about (the third server component), when there is one. */
  readonly principal: string | undefined;
  readonly value: Uint8Array;
}

export interface HeaderField {
  readonly tag: number;
  readonly value: Uint8Array;
}

export interface Ccache {
  /** 3 or 4. */
  readonly version: number;
  readonly header: readonly HeaderField[];
  /** The KDC's clock minus ours at the initial authentication (header tag 1), when recorded. */
  readonly kdcOffset: { readonly seconds: number; readonly microseconds: number } | undefined;
  readonly defaultPrincipal: Principal;
  /** The tickets, in file order (configuration entries left out). */
  readonly credentials: readonly Credential[];
  readonly config: readonly CcacheConfig[];
}

const CONF_REALM = "X-CACHECONF:";
const CONF_NAME = "krb5_ccache_conf_data";
/** Bounds on what a hostile file can make the reader do. */
const MAX_COMPONENTS = 64;
const MAX_CREDENTIALS = 100_000;

/** Parses ccache bytes. Throws CcacheError (with the offset) on a truncated or malformed file. */
export function parseCcache(bytes: Uint8Array): Ccache {
  const r = new BinReader(bytes, (m, o) => new CcacheError(m, o));
  if (bytes.length < 2) throw r.fail(`file of ${bytes.length} bytes is too short for a credentials cache`, 0);
  const magic = r.u8("format byte");
  const version = r.u8("format version");
  if (magic !== 5 || version < 1 || version > 4) {
    throw r.fail(`unknown format 0x${hex2(magic)}${hex2(version)} (expected 0x0504; is this a FILE credentials cache?)`, 0);
  }
  if (version < 3) throw r.fail(`format 0x050${version} (native byte order, from krb5 before 1.0) is not supported; run kinit again`, 0);
  const header: HeaderField[] = [];
  let kdcOffset: Ccache["kdcOffset"];
  if (version === 4) {
    const headerLength = r.u16("header length");
    r.need(headerLength, "header");
    const headerEnd = r.pos + headerLength;
    while (r.pos < headerEnd) {
      const at = r.pos;
      if (headerEnd - r.pos < 4) throw r.fail("truncated header field", at);
      const tag = r.u16("header tag");
      const length = r.u16("header field length");
      if (length > headerEnd - r.pos) throw r.fail(`header field ${tag} of ${length} bytes runs past the header`, at);
      const value = r.bytes(length, `header field ${tag}`);
      header.push({ tag, value });
      if (tag === 1) {
        if (length !== 8) throw r.fail(`time offset field of ${length} bytes (expected 8)`, at);
        const v = new DataView(value.buffer, value.byteOffset, 8);
        kdcOffset = { seconds: v.getInt32(0), microseconds: v.getInt32(4) };
      }
    }
  }
  const defaultPrincipal = readPrincipal(r, "default principal");
  const credentials: Credential[] = [];
  const config: CcacheConfig[] = [];
  while (r.remaining > 0) {
    if (credentials.length + config.length >= MAX_CREDENTIALS) throw r.fail(`more than ${MAX_CREDENTIALS} entries`);
    const c = readCredential(r, version, credentials.length + config.length);
    if (c.server.realm === CONF_REALM && c.server.components[0] === CONF_NAME && c.server.components.length >= 2) {
      config.push({ key: c.server.components[1], principal: c.server.components[2], value: c.ticket });
    } else credentials.push(c);
  }
  return { version, header, kdcOffset, defaultPrincipal, credentials, config };
}

function readPrincipal(r: BinReader, what: string): Principal {
  const at = r.pos;
  const nameType = r.u32(`${what} name type`);
  const count = r.u32(`${what} component count`);
  if (count > MAX_COMPONENTS) throw r.fail(`${what} has ${count} components (at most ${MAX_COMPONENTS})`, at);
  const realm = r.text(r.u32(`${what} realm length`), `${what} realm`);
  const components: string[] = [];
  for (let i = 0; i < count; i++) components.push(r.text(r.u32(`${what} component ${i} length`), `${what} component ${i}`));
  return { nameType, components, realm };
}

function readData(r: BinReader, what: string): Uint8Array {
  return r.bytes(r.u32(`${what} length`), what);
}

function readCredential(r: BinReader, version: number, index: number): Credential {
  const w = `credential ${index}`;
  const client = readPrincipal(r, `${w} client`);
  const server = readPrincipal(r, `${w} server`);
  const enctype = r.u16(`${w} key enctype`);
  if (version === 3) r.u16(`${w} repeated key enctype`);
  const key = new KeyBlock(enctype, readData(r, `${w} session key`));
  const authTime = r.u32(`${w} authtime`);
  const startTime = r.u32(`${w} starttime`);
  const endTime = r.u32(`${w} endtime`);
  const renewTill = r.u32(`${w} renew_till`);
  const skeyAt = r.pos;
  const skey = r.u8(`${w} is_skey`);
  if (skey > 1) throw r.fail(`${w} is_skey is ${skey} (expected 0 or 1)`, skeyAt);
  const flags = r.u32(`${w} ticket flags`);
  const addresses: Address[] = [];
  const nAddr = r.u32(`${w} address count`);
  for (let i = 0; i < nAddr; i++) addresses.push({ type: r.u16(`${w} address ${i} type`), data: readData(r, `${w} address ${i}`) });
  const authData: AuthData[] = [];
  const nAd = r.u32(`${w} authdata count`);
  for (let i = 0; i < nAd; i++) authData.push({ type: r.u16(`${w} authdata ${i} type`), data: readData(r, `${w} authdata ${i}`) });
  const ticket = readData(r, `${w} ticket`);
  const secondTicket = readData(r, `${w} second ticket`);
  return { client, server, key, authTime, startTime, endTime, renewTill, isSkey: skey === 1, flags, addresses, authData, ticket, secondTicket };
}

const hex2 = (n: number): string => n.toString(16).padStart(2, "0");

/**
 * The path of a ccache name: "FILE:path" or a plain path. Other cache types (KEYRING:, KCM:, DIR:, MEMORY:, API:)
 * are refused with a CcacheError saying to use a FILE: cache; `from` names where the name came from.
 */
export function ccacheFilePath(name: string, from: string): string {
  const m = /^([A-Za-z][A-Za-z0-9]*):(.*)$/.exec(name);
  if (m === null) return name;
  if (m[1] === "FILE") return m[2];
  throw new CcacheError(`${from} names a ${m[1]}: cache; only FILE: caches can be read (run kinit -c FILE:/path and set KRB5CCNAME=FILE:/path, or the ccache option)`, 0);
}

/**
 * Where the default ccache is: $KRB5CCNAME ("FILE:path" or a plain path), else krb5.conf's [libdefaults]
 * default_ccache_name (`configured`, its %{uid}, %{euid}, %{USERID} and %{TEMP} expanded), else
 * /tmp/krb5cc_<uid>. Other cache types (KEYRING:, KCM:, DIR:, MEMORY:, API:) are refused with a message saying so.
 */
export function defaultCcachePath(env: Readonly<Record<string, string | undefined>> = process.env, uid?: number, configured?: string): string {
  const name = env.KRB5CCNAME;
  if (name !== undefined && name !== "") return ccacheFilePath(name, "KRB5CCNAME");
  const id = uid ?? (typeof process.getuid === "function" ? process.getuid() : undefined);
  if (configured !== undefined && configured !== "") {
    const expanded = configured.replace(/%\{(\w+)\}/g, (token, key: string) => {
      if (key === "TEMP") return env.TMPDIR || "/tmp";
      const euid = key === "euid" && typeof process.geteuid === "function" ? process.geteuid() : id;
      if ((key === "uid" || key === "USERID" || key === "euid") && euid !== undefined) return String(euid);
      throw new CcacheError(`krb5.conf default_ccache_name ${JSON.stringify(configured)}: cannot expand ${token}; set KRB5CCNAME=FILE:/path`, 0);
    });
    return ccacheFilePath(expanded, "krb5.conf default_ccache_name");
  }
  if (id === undefined) throw new CcacheError("no KRB5CCNAME and no user id to find /tmp/krb5cc_<uid>", 0);
  return `/tmp/krb5cc_${id}`;
}

/** Reads a FILE ccache from a path ("FILE:" prefix allowed). */
export function loadCcache(path: string): Ccache {
  const p = path.replace(/^FILE:/, "");
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(p);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw new CcacheError(`cannot read ${p}${typeof code === "string" ? ` (${code})` : ""}; run kinit`, 0);
  }
  return parseCcache(bytes);
}
