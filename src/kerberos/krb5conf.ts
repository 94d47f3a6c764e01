// A reader for MIT krb5.conf (the "profile" format of MIT krb5's doc/admin/conf_files/krb5_conf.rst):
//   # or ; comments, [section] headers, `tag = value` relations, `tag = { ... }` subsections, a `*`
//   after a value or a closing brace (final: ignored here), `include FILE` and `includedir DIR` lines.
// What the client uses of it: [libdefaults] default_realm, udp_preference_limit, ticket_lifetime, default_ccache_name;
// kdc_timeout and max_retries ([libdefaults] or a realm's, as the Java client reads them);
// [realms] REALM = { kdc = host[:port] ... }; [domain_realm] host or .domain = REALM; [capaths] CLIENT = { SERVICE = VIA }.
// The file comes from an argument, else $KRB5_CONFIG (its first existing entry of a ":"-separated
// list), else /etc/krb5.conf. Anything malformed is a KerberosError (reason "config") naming the file
// and line.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as process from "node:process"; // a namespace import: the CommonJS build has no default-import interop
import { KerberosError, KerberosErrorReason } from "./errors.ts";

/** A relation's value: a string, or a subsection (`tag = { ... }`). */
export type ProfileValue = string | ProfileSection;

/** The relations of a section or subsection, in file order (a tag may repeat). */
export interface ProfileSection {
  readonly entries: ReadonlyArray<readonly [string, ProfileValue]>;
}

/** One KDC of a realm: `kdc = host`, `host:port`, `[v6]:port`, or with a `tcp/` or `udp/` prefix. */
export interface KdcAddress {
  readonly host: string;
  readonly port: number;
  /** Restricted to one protocol by a `tcp/` or `udp/` prefix; undefined: either. */
  readonly protocol: "tcp" | "udp" | undefined;
}

export interface Krb5Config {
  /** The files read, the main one first (for messages). */
  readonly files: readonly string[];
  /** Every section by name: [libdefaults], [realms], [domain_realm], ... */
  readonly sections: ReadonlyMap<string, ProfileSection>;
  readonly defaultRealm: string | undefined;
  /** Requests larger than this many bytes go over TCP first (MIT's default 1465; 1 means always TCP). */
  readonly udpPreferenceLimit: number;
  /** [libdefaults] ticket_lifetime in ms (default 24 h). */
  readonly ticketLifetimeMs: number;
  /** [libdefaults] default_ccache_name as written (its %{uid} etc. unexpanded), when there is one. */
  readonly defaultCcacheName?: string;
}

const DEFAULT_PORT = 88;
const DEFAULT_UDP_PREFERENCE_LIMIT = 1465;
const DEFAULT_TICKET_LIFETIME_MS = 24 * 3600_000;
/** Bounds on includes: depth and number of files. */
const MAX_INCLUDE_DEPTH = 8;
const MAX_FILES = 64;
const MAX_FILE_BYTES = 1 << 20;

const configError = (message: string, cause?: unknown): KerberosError => new KerberosError(KerberosErrorReason.Config, `krb5.conf: ${message}`, { cause });

/** Reads a file's text; `readFile` lets tests (and the browser-less runtimes) supply the files. */
export type ReadText = (path: string) => string;

const defaultReadText: ReadText = (path) => {
  const b = readFileSync(path);
  if (b.length > MAX_FILE_BYTES) throw configError(`${path} is larger than ${MAX_FILE_BYTES} bytes`);
  return b.toString("utf8");
};

interface MutableSection {
  entries: Array<[string, ProfileValue]>;
}

/**
 * Parses krb5.conf text. `path` names the file in messages; `include`/`includedir` are followed with
 * `readText` (default: node:fs) unless `followIncludes` is false.
 */
export function parseKrb5Conf(
  text: string,
  options: { path?: string; readText?: ReadText; followIncludes?: boolean; listDir?: (dir: string) => string[] } = {},
): Krb5Config {
  const sections = new Map<string, MutableSection>();
  const files: string[] = [];
  const readText = options.readText ?? defaultReadText;
  const listDir = options.listDir ?? ((dir: string) => readdirSync(dir));
  parseInto(text, options.path ?? "krb5.conf", sections, files, 0, { readText, listDir, follow: options.followIncludes ?? true });
  return finish(files, sections);
}

function parseInto(
  text: string,
  path: string,
  sections: Map<string, MutableSection>,
  files: string[],
  depth: number,
  io: { readText: ReadText; listDir: (dir: string) => string[]; follow: boolean },
): void {
  if (files.length >= MAX_FILES) throw configError(`more than ${MAX_FILES} files included (at ${path})`);
  files.push(path);
  const lines = text.split(/\r?\n/);
  let current: MutableSection | undefined;
  // The open subsections of the current relation, innermost last.
  const stack: MutableSection[] = [];
  const where = (i: number): string => `${path} line ${i + 1}`;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    if (stack.length === 0) {
      const inc = /^(include|includedir)\s+(.+)$/.exec(line);
      if (inc !== null) {
        if (!io.follow) continue;
        if (depth >= MAX_INCLUDE_DEPTH) throw configError(`includes nest deeper than ${MAX_INCLUDE_DEPTH} at ${where(i)}`);
        const target = inc[2].trim();
        if (!target.startsWith("/")) throw configError(`${inc[1]} needs an absolute path at ${where(i)}`);
        const targets: string[] = [];
        if (inc[1] === "include") targets.push(target);
        else {
          let names: string[];
          try {
            names = io.listDir(target);
          } catch (e) {
            throw configError(`cannot list ${target} (${where(i)})${codeOf(e)}`, e);
          }
          // MIT reads names made only of letters, digits, "-", "_" (and ending ".conf"), in order.
          for (const n of names.filter((n) => /^[A-Za-z0-9_-]+$/.test(n) || /^[A-Za-z0-9_.-]+\.conf$/.test(n)).sort()) targets.push(join(target, n));
        }
        for (const t of targets) {
          let inner: string;
          try {
            inner = io.readText(t);
          } catch (e) {
            if (e instanceof KerberosError) throw e;
            throw configError(`cannot read ${t} (included at ${where(i)})${codeOf(e)}`, e);
          }
          parseInto(inner, t, sections, files, depth + 1, io);
        }
        current = undefined; // an included file's relations do not continue this section
        continue;
      }
      const sec = /^\[([^\]]+)\]\s*\*?$/.exec(line);
      if (sec !== null) {
        const name = sec[1].trim();
        let s = sections.get(name);
        if (s === undefined) {
          s = { entries: [] };
          sections.set(name, s);
        }
        current = s;
        continue;
      }
    }
    if (line.startsWith("}")) {
      if (stack.length === 0) throw configError(`"}" without an open "{" at ${where(i)}`);
      stack.pop();
      continue;
    }
    const rel = /^([^=\s]+|"[^"]*")\s*=\s*(.*)$/.exec(line);
    if (rel === null) throw configError(`cannot read ${JSON.stringify(line.length > 60 ? `${line.slice(0, 60)}...` : line)} at ${where(i)} (expected "tag = value", "[section]" or "}")`);
    const target = stack.length > 0 ? stack[stack.length - 1] : current;
    if (target === undefined) throw configError(`a relation outside any [section] at ${where(i)}`);
    const tag = unquote(rel[1]);
    const rest = rel[2].trim();
    if (rest === "{" || rest === "{ }" || rest === "{}") {
      const sub: MutableSection = { entries: [] };
      target.entries.push([tag, sub]);
      if (rest === "{") {
        if (stack.length >= 16) throw configError(`subsections nest too deep at ${where(i)}`);
        stack.push(sub);
      }
      continue;
    }
    target.entries.push([tag, value(rest)]);
  }
  if (stack.length > 0) throw configError(`${path} ends inside a "{ ... }" subsection`);
}

function codeOf(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? ` (${code})` : "";
}

const unquote = (s: string): string => (s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s);

/** A value: quoted (with \n, \t, \b, \\ and \" escapes) or the rest of the line, a final `*` dropped. */
function value(raw: string): string {
  if (raw.startsWith('"')) {
    let out = "";
    for (let i = 1; i < raw.length; i++) {
      const c = raw[i];
      if (c === '"') return out;
      if (c === "\\" && i + 1 < raw.length) {
        const n = raw[++i];
        out += n === "n" ? "\n" : n === "t" ? "\t" : n === "b" ? "\b" : n;
      } else out += c;
    }
    return out;
  }
  return raw.replace(/\s*\*$/, "").trim();
}

function finish(files: string[], sections: Map<string, MutableSection>): Krb5Config {
  const lib = sections.get("libdefaults");
  const first = (name: string): string | undefined => {
    for (const [k, v] of lib?.entries ?? []) if (k === name && typeof v === "string") return v;
    return undefined;
  };
  const limitText = first("udp_preference_limit");
  let udpPreferenceLimit = DEFAULT_UDP_PREFERENCE_LIMIT;
  if (limitText !== undefined) {
    if (!/^\d+$/.test(limitText)) throw configError(`udp_preference_limit = ${JSON.stringify(limitText)} is not a number`);
    udpPreferenceLimit = Math.min(Number(limitText), 32700);
  }
  const lifeText = first("ticket_lifetime");
  const ticketLifetimeMs = lifeText === undefined ? DEFAULT_TICKET_LIFETIME_MS : parseDuration(lifeText, "ticket_lifetime");
  const defaultCcacheName = first("default_ccache_name");
  return { files, sections, defaultRealm: first("default_realm"), udpPreferenceLimit, ticketLifetimeMs, ...(defaultCcacheName !== undefined ? { defaultCcacheName } : {}) };
}

/** krb5.conf durations: "36000" (seconds), "10h", "1d 2h", "1h30m", "30m", "45s", "h:m[:s]". */
export function parseDuration(text: string, what: string): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const colon = /^(\d+):(\d{1,2})(?::(\d{1,2}))?$/.exec(t);
  if (colon !== null) return ((Number(colon[1]) * 60 + Number(colon[2])) * 60 + Number(colon[3] ?? 0)) * 1000;
  const compact = t.replace(/\s+/g, "");
  if (!/^(?:\d+[dhms])+$/.test(compact)) throw configError(`${what} = ${JSON.stringify(text)} is not a duration`);
  let total = 0;
  for (const m of compact.matchAll(/(\d+)([dhms])/g)) total += Number(m[1]) * { d: 86400, h: 3600, m: 60, s: 1 }[m[2] as "d" | "h" | "m" | "s"];
  return total * 1000;
}

/**
 * Reads krb5.conf: `path` when given, else $KRB5_CONFIG (the first readable file of its ":"-separated
 * list), else /etc/krb5.conf. A missing file is an error naming it.
 */
export function loadKrb5Conf(path?: string, env: Readonly<Record<string, string | undefined>> = process.env, readText: ReadText = defaultReadText): Krb5Config {
  const candidates = path !== undefined ? [path] : env.KRB5_CONFIG ? env.KRB5_CONFIG.split(":").filter((p) => p !== "") : ["/etc/krb5.conf"];
  const source = path !== undefined ? "" : env.KRB5_CONFIG ? " (from $KRB5_CONFIG)" : " (the default; set KRB5_CONFIG or krb5Config)";
  let lastError: unknown;
  for (const p of candidates) {
    let text: string;
    try {
      text = readText(p);
    } catch (e) {
      if (e instanceof KerberosError) throw e;
      lastError = e;
      continue;
    }
    return parseKrb5Conf(text, { path: p, readText });
  }
  throw configError(`cannot read ${candidates.join(", ")}${source}${codeOf(lastError)}`, lastError);
}

/** The string values of `tag` in a section (subsections skipped). */
export function values(section: ProfileSection | undefined, tag: string): string[] {
  const out: string[] = [];
  for (const [k, v] of section?.entries ?? []) if (k === tag && typeof v === "string") out.push(v);
  return out;
}

/** The subsection of a realm in [realms] (the first one, when repeated), if any. */
export function realmSection(conf: Krb5Config, realm: string): ProfileSection | undefined {
  for (const [k, v] of conf.sections.get("realms")?.entries ?? []) if (k === realm && typeof v !== "string") return v;
  return undefined;
}

/** How long one KDC attempt may take and how often each KDC is tried, where krb5.conf says so. */
export interface KdcTiming {
  /** kdc_timeout in ms: digits are milliseconds, digits with an `s` seconds (the Java client's reading). */
  readonly timeoutMs?: number;
  /** max_retries: attempts per KDC before the next one. */
  readonly tries?: number;
}

/**
 * kdc_timeout and max_retries for `realm`: its [realms] subsection first, then [libdefaults], as the Java client reads
 * them (MIT's library has neither; estates that run Java set them). Undefined where neither says; a value that is not
 * a positive number is a config error.
 */
export function kdcTimingOf(conf: Krb5Config, realm: string): KdcTiming {
  const pick = (tag: string): string | undefined => values(realmSection(conf, realm), tag)[0] ?? values(conf.sections.get("libdefaults"), tag)[0];
  const timeout = pick("kdc_timeout")?.trim();
  const retries = pick("max_retries")?.trim();
  const out: { timeoutMs?: number; tries?: number } = {};
  if (timeout !== undefined) {
    const m = /^(\d{1,9})(s?)$/.exec(timeout);
    if (m === null || Number(m[1]) === 0) throw configError(`kdc_timeout = ${JSON.stringify(timeout)} is not a positive number of milliseconds (or seconds, with "s")`);
    out.timeoutMs = Number(m[1]) * (m[2] === "s" ? 1000 : 1);
  }
  if (retries !== undefined) {
    if (!/^\d{1,3}$/.test(retries) || Number(retries) === 0) throw configError(`max_retries = ${JSON.stringify(retries)} is not a positive number`);
    out.tries = Number(retries);
  }
  return out;
}

/** Parses a `kdc` value: "host", "host:port", "[v6]", "[v6]:port", "v6::addr", optionally "tcp/" or "udp/" first. */
export function parseKdcAddress(text: string): KdcAddress {
  let t = text.trim();
  let protocol: KdcAddress["protocol"];
  const proto = /^(tcp|udp)\/(.*)$/i.exec(t);
  if (proto !== null) {
    protocol = proto[1].toLowerCase() as "tcp" | "udp";
    t = proto[2];
  }
  let host: string;
  let portText: string | undefined;
  if (t.startsWith("[")) {
    const close = t.indexOf("]");
    if (close < 0) throw configError(`kdc = ${JSON.stringify(text)}: unterminated "["`);
    host = t.slice(1, close);
    const rest = t.slice(close + 1);
    if (rest !== "" && !rest.startsWith(":")) throw configError(`kdc = ${JSON.stringify(text)}: unexpected text after "]"`);
    portText = rest === "" ? undefined : rest.slice(1);
  } else if ((t.match(/:/g)?.length ?? 0) > 1) {
    host = t; // a bare IPv6 address
  } else {
    const at = t.indexOf(":");
    host = at < 0 ? t : t.slice(0, at);
    portText = at < 0 ? undefined : t.slice(at + 1);
  }
  if (host === "" || /\s/.test(host)) throw configError(`kdc = ${JSON.stringify(text)}: no host`);
  let port = DEFAULT_PORT;
  if (portText !== undefined) {
    if (!/^\d+$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) throw configError(`kdc = ${JSON.stringify(text)}: bad port`);
    port = Number(portText);
  }
  return { host, port, protocol };
}

/** The KDCs of a realm, in the file's order. Throws KerberosError (config) when the realm lists none. */
export function kdcsOf(conf: Krb5Config, realm: string): KdcAddress[] {
  const list = values(realmSection(conf, realm), "kdc").map(parseKdcAddress);
  if (list.length === 0) {
    throw configError(`no kdc for realm ${realm} in [realms] of ${conf.files[0] ?? "krb5.conf"} (add ${realm} = { kdc = host:port })`);
  }
  return list;
}

/**
 * The realm of a host by [domain_realm]: an entry for the host itself, else the longest ".domain" (or
 * "domain") entry it ends with; undefined when none applies. Names compare case-insensitively.
 */
export function realmOfHost(conf: Krb5Config, host: string): string | undefined {
  const h = host.toLowerCase().replace(/\.$/, "");
  let best: { len: number; realm: string } | undefined;
  for (const [k, v] of conf.sections.get("domain_realm")?.entries ?? []) {
    if (typeof v !== "string") continue;
    const key = k.toLowerCase();
    if (key === h) return v;
    const suffix = key.startsWith(".") ? key : `.${key}`;
    if (h.endsWith(suffix) && (best === undefined || suffix.length > best.len)) best = { len: suffix.length, realm: v };
  }
  return best?.realm;
}

/**
 * The realms between `client` and `service` by [capaths] (MIT krb5.conf):
 *   [capaths]  CLIENT.REALM = { SERVICE.REALM = INTERMEDIATE.REALM ...  SERVICE.REALM = . }
 * each value one realm (or several, whitespace-separated), in order from the client's side; "." alone: a direct
 * trust. [] for a direct path; undefined when [capaths] says nothing about this pair.
 */
export function capathOf(conf: Krb5Config, client: string, service: string): string[] | undefined {
  let found: string[] | undefined;
  for (const [k, v] of conf.sections.get("capaths")?.entries ?? []) {
    if (k !== client || typeof v === "string") continue;
    for (const [to, via] of v.entries) {
      if (to !== service || typeof via !== "string") continue;
      found ??= [];
      for (const r of via.split(/\s+/)) if (r !== "" && r !== ".") found.push(r);
    }
    if (found !== undefined) return found;
  }
  return found;
}
