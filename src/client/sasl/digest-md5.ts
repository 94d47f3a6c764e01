// Client side of SASL DIGEST-MD5 (RFC 2831) as ZooKeeper's Java server speaks it: no initial
// response; one challenge (realm, nonce, charset, algorithm=md5-sess), one response, then the
// server's rspauth, which we verify. Only qop=auth (authentication without integrity or privacy
// layers) is implemented: ZooKeeper never negotiates more, and a server that offers only
// auth-int/auth-conf is refused.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { Buffer } from "node:buffer";
import { bytesToOctetString, DirectiveSyntaxError, parseDirectives, quote } from "./directives.ts";
import { SaslError, SaslErrorReason } from "./errors.ts";
import type { SaslMechanism } from "./mechanism.ts";

export interface DigestMd5Options {
  readonly username: string;
  readonly password: string;
  /** Identity to act as, if different from username (sent as authzid). */
  readonly authzid?: string;
  /** Realm to use; default: the first realm the server offers (none → empty). */
  readonly realm?: string;
  /** SASL service name; ZooKeeper uses "zookeeper". */
  readonly protocol?: string;
  /** Server name in digest-uri; ZooKeeper's DIGEST-MD5 server is "zk-sasl-md5". */
  readonly serverName?: string;
  /** Client nonce source; tests pin it. Default: 128 random bits as hex. */
  readonly cnonce?: () => string;
}

/** What the client took from the server's first challenge. String values are decoded text. */
export interface DigestChallenge {
  readonly realms: readonly string[];
  /** Raw octets of the nonce (one char per octet): hashed exactly as received. */
  readonly nonce: string;
  readonly qop: readonly string[];
  readonly utf8: boolean;
  readonly algorithm: string;
}

const NAME = "DIGEST-MD5";
// RFC 2831 §2.1.1: "The size of a digest-challenge MUST be less than 2048 bytes."
const MAX_CHALLENGE = 2048;
const SINGLE = new Set(["nonce", "qop", "stale", "maxbuf", "charset", "algorithm", "cipher"]);

function fail(reason: SaslErrorReason, message: string): never {
  throw new SaslError(NAME, reason, message);
}

function parse(bytes: Uint8Array, what: string) {
  try {
    return parseDirectives(bytesToOctetString(bytes));
  } catch (e) {
    if (e instanceof DirectiveSyntaxError) fail(SaslErrorReason.BadChallenge, `malformed ${what}: ${e.message}`);
    throw e;
  }
}

// Octets (one char each) → text, per the negotiated charset.
function octetsToText(octets: string, utf8: boolean): string {
  if (!utf8) return octets;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(octets, "latin1"));
  } catch {
    return fail(SaslErrorReason.BadChallenge, "challenge is not valid UTF-8");
  }
}

// Text → octets for the wire: UTF-8 when the server said charset=utf-8, else ISO-8859-1.
function textToWire(text: string, utf8: boolean, what: string): string {
  if (utf8) return Buffer.from(text, "utf8").toString("latin1");
  if (/[^\u0000-\u00ff]/.test(text)) fail(SaslErrorReason.Encoding, `${what} is not ISO-8859-1 and the server did not offer utf-8`);
  return text;
}

// Text → octets for hashing (RFC 2831 §2.1.2.1): ISO-8859-1 whenever every char fits, even under
// charset=utf-8; UTF-8 only when it must. The Java server does the same.
function textToHash(text: string, utf8: boolean, what: string): string {
  return /[^\u0000-\u00ff]/.test(text) ? textToWire(text, utf8, what) : text;
}

function md5(octets: string): Buffer {
  return createHash("md5").update(Buffer.from(octets, "latin1")).digest();
}
const md5hex = (octets: string): string => md5(octets).toString("hex");

export function parseDigestChallenge(bytes: Uint8Array): DigestChallenge {
  if (bytes.length >= MAX_CHALLENGE) fail(SaslErrorReason.BadChallenge, `challenge of ${bytes.length} bytes exceeds the 2047-byte limit`);
  const seen = new Map<string, string>();
  const realms: string[] = [];
  for (const d of parse(bytes, "challenge")) {
    if (d.name === "realm") { realms.push(d.value); continue; }
    if (!SINGLE.has(d.name)) continue; // auth-param extensions are ignored (RFC 2831 §2.1.1)
    if (seen.has(d.name)) fail(SaslErrorReason.BadChallenge, `challenge repeats ${d.name}`);
    seen.set(d.name, d.value);
  }
  const charset = seen.get("charset");
  if (charset !== undefined && charset.toLowerCase() !== "utf-8") fail(SaslErrorReason.BadChallenge, "challenge charset must be utf-8");
  const utf8 = charset !== undefined;
  const nonce = seen.get("nonce");
  if (nonce === undefined || nonce === "") fail(SaslErrorReason.BadChallenge, "challenge has no nonce");
  const algorithm = seen.get("algorithm");
  if (algorithm === undefined) fail(SaslErrorReason.BadChallenge, "challenge has no algorithm");
  if (algorithm.toLowerCase() !== "md5-sess") fail(SaslErrorReason.Unsupported, "algorithm must be md5-sess");
  // No qop directive means "auth" (RFC 2831 §2.1.1); ZooKeeper's server sends none.
  const qopText = seen.get("qop");
  const qop = qopText === undefined ? ["auth"] : qopText.split(",").map((q) => q.trim().toLowerCase()).filter((q) => q !== "");
  return { realms: realms.map((r) => octetsToText(r, utf8)), nonce, qop, utf8, algorithm };
}

export function digestMd5(opts: DigestMd5Options): SaslMechanism {
  const protocol = opts.protocol ?? "zookeeper";
  const serverName = opts.serverName ?? "zk-sasl-md5";
  const digestUri = `${protocol}/${serverName}`;
  const nextCnonce = opts.cnonce ?? (() => randomBytes(16).toString("hex"));
  let password: string | undefined = opts.password;
  let state: "challenge" | "rspauth" | "done" | "failed" = "challenge";
  let expectedRspauth = "";

  function respond(challenge: Uint8Array): Uint8Array {
    const c = parseDigestChallenge(challenge);
    if (!c.qop.includes("auth")) fail(SaslErrorReason.Unsupported, "server does not offer qop=auth (only auth is implemented)");
    const realm = opts.realm ?? c.realms[0];
    const cnonce = nextCnonce();
    if (cnonce === "" || /[\u0000-\u0020"\\\u007f-\uffff]/.test(cnonce)) fail(SaslErrorReason.State, "cnonce must be non-empty printable ASCII");
    const nc = "00000001";
    const qop = "auth";
    const pw = password ?? fail(SaslErrorReason.State, "password already used");
    password = undefined; // one exchange per mechanism; keep the secret no longer than needed

    const userHash = [
      textToHash(opts.username, c.utf8, "username"),
      textToHash(realm ?? "", c.utf8, "realm"),
      textToHash(pw, c.utf8, "password"),
    ].join(":");
    let a1 = `${md5(userHash).toString("latin1")}:${c.nonce}:${cnonce}`;
    if (opts.authzid !== undefined) a1 += `:${textToHash(opts.authzid, c.utf8, "authzid")}`;
    const ha1 = md5hex(a1);
    const kd = (ha2: string): string => md5hex(`${ha1}:${c.nonce}:${nc}:${cnonce}:${qop}:${ha2}`);
    const response = kd(md5hex(`AUTHENTICATE:${digestUri}`));
    expectedRspauth = kd(md5hex(`:${digestUri}`));

    // Directive order as in RFC 2831 §4 and the Java client.
    const parts: string[] = [];
    if (c.utf8) parts.push("charset=utf-8");
    parts.push(`username=${quote(textToWire(opts.username, c.utf8, "username"))}`);
    if (realm !== undefined) parts.push(`realm=${quote(textToWire(realm, c.utf8, "realm"))}`);
    parts.push(`nonce=${quote(c.nonce)}`, `nc=${nc}`, `cnonce=${quote(cnonce)}`);
    parts.push(`digest-uri=${quote(textToWire(digestUri, c.utf8, "digest-uri"))}`);
    parts.push(`response=${response}`, `qop=${qop}`);
    if (opts.authzid !== undefined) parts.push(`authzid=${quote(textToWire(opts.authzid, c.utf8, "authzid"))}`);
    return new Uint8Array(Buffer.from(parts.join(","), "latin1"));
  }

  function verify(final: Uint8Array): void {
    const values = parse(final, "final server message").filter((d) => d.name === "rspauth").map((d) => d.value);
    if (values.length !== 1) fail(SaslErrorReason.ServerAuthFailed, values.length === 0 ? "final server message has no rspauth" : "final server message repeats rspauth");
    const got = Buffer.from(values[0].toLowerCase(), "latin1");
    const want = Buffer.from(expectedRspauth, "latin1");
    if (got.length !== want.length || !timingSafeEqual(got, want)) fail(SaslErrorReason.ServerAuthFailed, "server's rspauth does not match: it does not know the password");
  }

  return {
    name: NAME,
    get complete() { return state === "done"; },
    initial: () => new Uint8Array(0),
    step(challenge: Uint8Array): Uint8Array | null {
      const at = state;
      if (at === "done" || at === "failed") fail(SaslErrorReason.State, `step() called after the exchange ${at === "done" ? "completed" : "failed"}`);
      state = "failed"; // until this step succeeds
      if (at === "challenge") {
        const out = respond(challenge);
        state = "rspauth";
        return out;
      }
      verify(challenge);
      state = "done";
      return null;
    },
  };
}
