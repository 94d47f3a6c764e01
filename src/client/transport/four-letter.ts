// Four-letter words ("isro", "srvr", ...): a fresh connection, 4 ASCII bytes, read text until the
// server closes. Used to find a read-write server while connected read-only. It dials through the
// session's Transport (a proxy, Deno.connect, the simulation's network) like every other connection,
// and times out on the session's clock.
import type { HostPort } from "../../protocol/connect-string.ts";
import { concatBytes } from "../../protocol/bytes.ts";
import type { Clock } from "../clock.ts";
import type { TlsSetting } from "./tls-options.ts";
import { type DialDeadline, type Dialer, type Expiring, type Link, type Resolver, dialWithin } from "./transport.ts";

export function fourLetterWord(dialer: Dialer, clock: Clock, host: HostPort, cmd: string, timeoutMs = 2000, tls?: TlsSetting, resolver?: Resolver): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    let done = false;
    // The whole exchange, not just the dial, is bounded: a server that accepts and never answers.
    let onExpiry: Expiring = { deadlinePassed() {} };
    const timer = clock.setTimeout(() => onExpiry.deadlinePassed(timeoutMs), timeoutMs);
    const deadline: DialDeadline = { expireWith: (e) => (onExpiry = e) };
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clock.clearTimeout(timer);
      if (err) reject(err);
      else resolve(new TextDecoder().decode(concatBytes(...chunks)));
    };
    const linked = (l: Link): void => {
      if (done) return l.close();
      deadline.expireWith({
        deadlinePassed: () => {
          l.close();
          finish(new Error(`${cmd} to ${host.host}:${host.port} timed out`));
        },
      });
      try {
        l.write(new TextEncoder().encode(cmd));
      } catch (e) {
        l.close();
        finish(e as Error);
      }
    };
    dialWithin(deadline, timeoutMs, host, tls, dialer, { onData: (c) => chunks.push(c), onDrain: () => {}, onClose: () => finish() }, resolver, linked, (e) => finish(e as Error));
  });
}
