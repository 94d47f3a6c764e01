// The SASL exchange on a fresh connection (opcode 102, normal xids, before anything else is sent):
// token out, challenge in, until the mechanism is done.
import { type ErrorCode, OpCode, errorCodeName } from "../protocol/constants.ts";
import { encodeRequest } from "../protocol/frame.ts";
import type { JuteReader, JuteWriter } from "../protocol/jute.ts";
import type { Connection } from "./connection.ts";
import { ZooKeeperError, badArguments } from "./errors.ts";
import { digestMd5 } from "./sasl/index.ts";
import type { ConnectOptions } from "./types.ts";

/** A SASL client mechanism: tokens in, tokens out. */
export interface SaslClient {
  initial(): Uint8Array;
  step(challenge: Uint8Array): Uint8Array | null;
  readonly complete: boolean;
}

export class SaslRefused extends Error {
  constructor(why: string) {
    super(`SASL authentication failed: ${why}`);
    this.name = "SaslRefused";
  }
}

/**
 * Runs the exchange. Rejects SaslRefused when the server or the mechanism says no (terminal), or a
 * CONNECTIONLOSS ZooKeeperError when the link drops (worth retrying on another connection).
 */
export async function saslExchange(conn: Connection, mech: SaslClient, nextXid: () => number, writer: JuteWriter): Promise<void> {
  let token = mech.initial();
  for (;;) {
    const reply = await rawRequest(conn, nextXid(), writer, (w) => w.buffer(token), (r) => r.buffer());
    if (reply.err !== 0) {
      throw new SaslRefused(`the server rejected the credentials (${errorCodeName(reply.err)} ${reply.err})`);
    }
    let next: Uint8Array | null;
    try {
      next = mech.step(reply.value ?? new Uint8Array(0));
    } catch (e) {
      throw new SaslRefused((e as Error).message);
    }
    if (next === null) break;
    token = next;
  }
  if (!mech.complete) throw new SaslRefused("the exchange ended early");
}

function rawRequest<T>(
  conn: Connection,
  xid: number,
  writer: JuteWriter,
  write: (w: JuteWriter) => void,
  decode: (r: JuteReader) => T,
): Promise<{ err: number; value: T | null }> {
  return new Promise((resolve, reject) => {
    const frame = encodeRequest(xid, OpCode.sasl, (w) => write(w), undefined, writer);
    conn.send(frame, {
      xid,
      opcode: OpCode.sasl,
      onReply: (err, body) => resolve({ err, value: body ? decode(body) : null }),
      onFail: (code, reason) => reject(new ZooKeeperError(code as ErrorCode, reason, { op: "sasl" })),
    });
  });
}

/** The mechanism factory for ConnectOptions.sasl (a fresh mechanism per connection). */
export function saslFactory(o: NonNullable<ConnectOptions["sasl"]>): () => ReturnType<typeof digestMd5> {
  if (o.mechanism !== "DIGEST-MD5") throw badArguments(`unsupported SASL mechanism ${JSON.stringify(o.mechanism)} (DIGEST-MD5 is supported)`, "connect");
  if (typeof o.username !== "string" || typeof o.password !== "string") throw badArguments("sasl needs a username and a password", "connect");
  return () => digestMd5({ username: o.username, password: o.password, protocol: "zookeeper", serverName: o.serverName ?? "zk-sasl-md5" });
}
