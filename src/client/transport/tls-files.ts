// TLS material that can change while a client runs: `caFile`, `certFile` and `keyFile` are read again,
// and a `tls` function is called again, for each new connection (every reconnect and read-only probe),
// so a rotated certificate or CA bundle is used from the next connection on without a restart. A file
// that cannot be read, or holds no complete PEM block (e.g. caught half-written), fails that attempt
// with code ERR_TLS_FILE: not a certificate refusal (tls-errors.ts), so the session keeps trying at its
// usual pace and the next attempt reads the file again. Messages name the file, never its content.
import { readFile } from "node:fs/promises";
import type { TlsOptions, TlsSetting } from "./tls-options.ts";

/** The code of an attempt's error when its TLS material could not be had (a file, or the `tls` function). */
export const TLS_FILE = "ERR_TLS_FILE";

const PEM = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?-----END [A-Z0-9 ]+-----/;

function materialError(message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code: TLS_FILE });
}

const hasFiles = (o: TlsOptions): boolean => o.caFile !== undefined || o.certFile !== undefined || o.keyFile !== undefined;

/** True when `tls` must be loaded before each dial (a function, or options naming files); false: use it as it is. */
export function tlsNeedsLoading(tls: TlsSetting | undefined): tls is TlsOptions | (() => TlsOptions | Promise<TlsOptions>) {
  return typeof tls === "function" || (typeof tls === "object" && tls !== null && hasFiles(tls));
}

/** Checks the file fields of static TlsOptions at connect(); returns what is wrong, or null. */
export function tlsFilesProblem(tls: TlsSetting | undefined): string | null {
  if (typeof tls === "function" || typeof tls === "boolean" || tls === undefined) return null;
  if (typeof tls !== "object" || tls === null) return "tls must be true, TlsOptions or a function returning TlsOptions";
  const str = (v: unknown): boolean => typeof v === "string" && v.length > 0;
  if (tls.caFile !== undefined && !(str(tls.caFile) || (Array.isArray(tls.caFile) && tls.caFile.length > 0 && tls.caFile.every(str)))) {
    return "tls.caFile must be a file path or a non-empty array of them";
  }
  if (tls.certFile !== undefined && !str(tls.certFile)) return "tls.certFile must be a file path";
  if (tls.keyFile !== undefined && !str(tls.keyFile)) return "tls.keyFile must be a file path";
  return null;
}

async function readPem(field: string, file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    throw materialError(`TLS ${field} ${file} could not be read${typeof code === "string" ? ` (${code})` : ""}`, e);
  }
  if (!PEM.test(text)) throw materialError(`TLS ${field} ${file} holds no complete PEM block (${text.length} bytes)`);
  return text;
}

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The TLS options of one dial: the function's current answer, with its files read now. Rejects with code ERR_TLS_FILE. */
export async function loadTls(tls: TlsOptions | (() => TlsOptions | Promise<TlsOptions>)): Promise<TlsOptions> {
  let options: TlsOptions;
  if (typeof tls === "function") {
    try {
      options = await tls();
    } catch (e) {
      throw materialError(`the tls function failed: ${e instanceof Error ? e.message : String(e)}`, e);
    }
    const problem = typeof options === "object" && options !== null ? tlsFilesProblem(options) : "the tls function must return TlsOptions";
    if (problem !== null) throw materialError(problem);
  } else {
    options = tls;
  }
  if (!hasFiles(options)) return options;
  const { caFile, certFile, keyFile, ...rest } = options;
  const [ca, cert, key] = await Promise.all([
    Promise.all(list(caFile).map((f) => readPem("caFile", f))),
    certFile === undefined ? undefined : readPem("certFile", certFile),
    keyFile === undefined ? undefined : readPem("keyFile", keyFile),
  ]);
  const out: TlsOptions = { ...rest };
  if (ca.length > 0) out.ca = [...list(rest.ca), ...ca];
  if (cert !== undefined) out.cert = cert;
  if (key !== undefined) out.key = key;
  return out;
}
