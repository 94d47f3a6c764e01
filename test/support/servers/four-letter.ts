// The tests' four-letter words go through the client's own (src/client/transport/four-letter.ts: one dial through
// the default transport, the command, the whole reply until the server closes, bounded on the system
// clock). This module only gives it a host/port signature and reads the `Mode:` line of `srvr`.
import { systemClock } from "../../../src/client/clock.ts";
import { fourLetterWord as clientFourLetterWord } from "../../../src/client/transport/four-letter.ts";
import { defaultTransport } from "../../../src/client/transport/transport.ts";

/** Sends one ZooKeeper four-letter word and returns the whole reply; rejects after `timeoutMs`. */
export function fourLetterWord(host: string, port: number, cmd: string, timeoutMs = 2000): Promise<string> {
  return clientFourLetterWord(defaultTransport.connect, systemClock, { host, port }, cmd, timeoutMs);
}

/** The `Mode:` value of a `srvr` reply ("standalone", "leader", "follower", "read-only"), or null. */
export function parseMode(srvr: string): string | null {
  const m = /^Mode: (\S+)/m.exec(srvr);
  return m ? m[1] : null;
}

/** A server's mode from `srvr` (1 s timeout), or null when it does not answer. */
export async function serverMode(host: string, port: number): Promise<string | null> {
  try {
    return parseMode(await fourLetterWord(host, port, "srvr", 1000));
  } catch {
    return null;
  }
}
