// Four-letter words ("isro", "srvr", ...): a fresh connection, 4 ASCII bytes, read text until the
// server closes. Used to find a read-write server while connected read-only.
import type { ConnectionOptions } from "node:tls";
import type { HostPort } from "../protocol/connect-string.ts";
import { dialSocket } from "./transport.ts";

export function fourLetterWord(host: HostPort, cmd: string, timeoutMs = 2000, tls?: boolean | ConnectionOptions): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(() => {
      link?.close();
      finish(new Error(`${cmd} to ${host.host}:${host.port} timed out`));
    }, timeoutMs);
    let link: { close(): void } | undefined;
    dialSocket(host, { onData: (c) => chunks.push(c), onDrain: () => {}, onClose: () => finish() }, { tls, timeoutMs })
      .then((l) => {
        link = l;
        l.write(new TextEncoder().encode(cmd));
      })
      .catch((e: Error) => finish(e));
  });
}
