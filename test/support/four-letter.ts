// Sends one ZooKeeper four-letter word and returns the whole reply (the server closes after it).
import { connect } from "node:net";

export function fourLetterWord(host: string, port: number, cmd: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = connect({ host, port });
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`4lw ${cmd} to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on("connect", () => sock.end(cmd));
    sock.on("data", (c: Buffer) => chunks.push(c));
    sock.on("error", (err) => {
      clearTimeout(timer);
      sock.destroy();
      reject(err);
    });
    sock.on("close", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
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
