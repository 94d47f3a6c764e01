// RFC 2831 §7.1 directive lists: `name=value` pairs joined by commas (the HTTP "#rule", so empty
// elements and linear whitespace are allowed), values either tokens or quoted strings with
// backslash escapes. Works on a byte string (one char per octet): the caller picks the charset.

export interface Directive {
  /** Lower-cased directive name (names are case-insensitive). */
  readonly name: string;
  /** Unescaped value, one char per octet. */
  readonly value: string;
}

/** Thrown for a syntax error; `at` is the octet offset. Never carries the text itself. */
export class DirectiveSyntaxError extends Error {
  readonly at: number;
  constructor(message: string, at: number) {
    super(`${message} at offset ${at}`);
    this.name = "DirectiveSyntaxError";
    this.at = at;
  }
}

const SEPARATORS = '()<>@,;:\\"/[]?={} \t';

function isTokenChar(c: number): boolean {
  return c > 0x20 && c < 0x7f && !SEPARATORS.includes(String.fromCharCode(c));
}

function isLws(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/** Octets to a string with one char per octet (ISO-8859-1), without TextDecoder's cp1252 quirks. */
export function bytesToOctetString(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x2000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x2000));
  }
  return s;
}

export function parseDirectives(text: string): Directive[] {
  const out: Directive[] = [];
  let i = 0;
  const skipLws = (): void => {
    while (i < text.length && isLws(text.charCodeAt(i))) i++;
  };
  const token = (what: string): string => {
    const start = i;
    while (i < text.length && isTokenChar(text.charCodeAt(i))) i++;
    if (i === start) throw new DirectiveSyntaxError(`expected ${what}`, start);
    return text.slice(start, i);
  };
  const quoted = (): string => {
    const open = i++;
    let v = "";
    for (;;) {
      if (i >= text.length) throw new DirectiveSyntaxError("unterminated quoted string", open);
      const c = text[i++];
      if (c === '"') return v;
      if (c === "\\") {
        if (i >= text.length) throw new DirectiveSyntaxError("unterminated quoted string", open);
        v += text[i++];
      } else {
        v += c;
      }
    }
  };

  for (;;) {
    skipLws();
    while (text[i] === ",") { i++; skipLws(); } // empty list elements
    if (i >= text.length) return out;
    const name = token("directive name").toLowerCase();
    skipLws();
    if (text[i] !== "=") throw new DirectiveSyntaxError(`expected '=' after ${name}`, i);
    i++;
    skipLws();
    const value = text[i] === '"' ? quoted() : token(`value of ${name}`);
    out.push({ name, value });
    skipLws();
    if (i < text.length && text[i] !== ",") throw new DirectiveSyntaxError(`expected ',' after ${name}`, i);
  }
}

/** Quotes a value for a directive list: backslash before `"` and `\`. */
export function quote(value: string): string {
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}
