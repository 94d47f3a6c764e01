// One connection attempt: the SASL mechanism (a Kerberos service ticket before any socket), dial a host,
// send the ConnectRequest, check the answer. It returns an Outcome for the session's loop to act on (and
// never ends the session itself): a connection to authenticate and prime, a failure worth another try, a
// verdict that ends the session, or "stopped" when the session ended meanwhile. The connection reports to
// its owner (the session) directly: nothing is relayed through here.
import { ErrorCode } from "../../protocol/constants.ts";
import { type HostPort, hostText } from "../../protocol/connect-string.ts";
import type { ConnectRequest, ConnectResponse } from "../../protocol/records.ts";
import { Connection, type ConnectionOwner } from "../wire/connection.ts";
import { tickForTimeout } from "../wire/liveness.ts";
import type { Clock } from "../clock.ts";
import { type SaslClient, type SaslFactory, SaslRefused } from "../sasl/exchange.ts";
import { EXPIRED_ADVICE, type EndState } from "./session-states.ts";
import { type Dialer, type Link, type Resolver, dialWithin } from "../transport/transport.ts";
import type { ConnectDeadline } from "./deadline.ts";
import type { Logger, TlsSetting } from "../types.ts";

export type Outcome =
  | { kind: "established"; conn: Connection; res: ConnectResponse; mech: SaslClient | undefined }
  | { kind: "failed"; error: Error }
  | { kind: "fatal"; state: EndState; code: ErrorCode; reason: string }
  | { kind: "stopped" };

/** What an attempt needs from the session. */
export interface DialContext {
  dialer: Dialer;
  tls?: TlsSetting;
  /** ConnectOptions.resolver: host names resolved by it on each attempt (else by the transport). */
  resolver?: Resolver;
  sasl?: SaslFactory;
  clock: Clock;
  logger: Logger;
  maxBufferSize: number;
  sessionTimeout: number;
  connectTimeout: number;
  readOnly: boolean;
  hostCount: number;
  negotiatedTimeout: number;
  lastZxid: bigint;
  /** No session yet (the first connect): one stuck attempt must not use up connectTimeout. */
  first: boolean;
  /** The session's connect deadlines: connect()'s, and this attempt's (its dial's, then its handshake's). */
  deadline: ConnectDeadline;
  /** The session to resume, or null to ask for a new one. */
  resume: { id: bigint; password: Uint8Array } | null;
  /** Where the attempt and its connection report (the session). */
  session: AttemptOwner;
}

/**
 * What an attempt tells the session (methods of the session: nothing is made per attempt); the attempt's
 * connection reports to it too (notifications, zxids, stalls, its end) and takes its xids from it.
 */
export interface AttemptOwner extends ConnectionOwner {
  /** The session ended (or is closing): give up this attempt. */
  attemptStopped(): boolean;
  /** The attempt's connection exists (so ending the session can close it). */
  attempting(c: Connection): void;
  /** The handshake is accepted (its answer read at clock time `heardAt`): learn the session's id, password and timeout. */
  accepted(res: ConnectResponse, heardAt: number): void;
}

/** A new session's ConnectRequest password: 16 zero bytes (only ever read). */
const NO_PASSWORD = new Uint8Array(16);

/** One attempt on `host`: `done` is told its Outcome once, for the session's loop to act on. */
export function establish(x: DialContext, host: HostPort, done: (out: Outcome) => void): void {
  if (x.sasl) establishWithSasl(x, host, x.sasl, done);
  else handshake(x, host, undefined, done);
}

/**
 * The SASL client first (GSSAPI: the service ticket from the KDC), so a refused login leaves no session behind on the
 * server and an unreachable KDC is this attempt's error (the connect timeout's message names it).
 */
function establishWithSasl(x: DialContext, host: HostPort, sasl: SaslFactory, done: (out: Outcome) => void): void {
  x.deadline.watch(); // no attempt's deadline runs through the KDC exchange: connect()'s is watched through it
  let mech: Promise<SaslClient>;
  try {
    mech = Promise.resolve(sasl(host));
  } catch (e) {
    mech = Promise.reject(e);
  }
  mech.then(
    (m) => {
      if (x.session.attemptStopped()) done({ kind: "stopped" });
      else handshake(x, host, m, done);
    },
    (e: unknown) => {
      if (e instanceof SaslRefused) done({ kind: "fatal", state: "authFailed", code: ErrorCode.AUTHFAILED, reason: e.message });
      else done({ kind: "failed", error: e as Error });
    },
  );
}

/**
 * Dials `host` and performs the handshake, telling `done` from the dial's callbacks and the connection's handshake
 * callback (no promise of its own), the attempt's deadline ended whichever way it goes.
 */
function handshake(x: DialContext, host: HostPort, mech: SaslClient | undefined, done: (out: Outcome) => void): void {
  let perHost = Math.max(1000, (x.negotiatedTimeout || x.sessionTimeout) / x.hostCount);
  if (x.first) perHost = Math.min(perHost, Math.max(500, x.connectTimeout / 2));
  // The connection exists before its link and is the link's handlers: a runtime may report the TLS 1.3 refusal
  // (an error, then close) in the same turn as the handshake, before the dial's promise settles.
  const c = new Connection(x.session, hostText(host), x.maxBufferSize, x.logger, x.clock);
  // The dial's deadline, then the handshake's (perHost from its request), on the session's one deadline timer,
  // which steps by the connection's tick (deadline.ts).
  x.deadline.attempt(perHost, tickForTimeout(x.negotiatedTimeout || x.sessionTimeout));
  // GSSAPI names the server's principal from one address of the host's name: the dial goes there (the name kept for TLS).
  const address = mech?.address;
  const resolver = address === undefined ? x.resolver : (): Promise<string[]> => Promise.resolve([address]);
  let over = false;
  /** The attempt's end, told once (a throw in a callback below, say, may come after the connection's end told it). */
  const end = (out: Outcome): void => {
    if (over) return;
    over = true;
    x.deadline.endAttempt(); // connect()'s deadline is still watched (SASL and priming are still to come)
    done(out);
  };
  const failed = (e: unknown): void => end({ kind: "failed", error: e as Error });
  const linked = (link: Link): void => {
    try {
      c.attach(link);
      if (x.session.attemptStopped()) {
        c.close("the session ended while connecting");
        return end({ kind: "stopped" });
      }
      x.session.attempting(c);
      x.deadline.move(perHost, c); // told c.deadlinePassed(perHost)
      const request: ConnectRequest = {
        protocolVersion: 0,
        lastZxidSeen: x.lastZxid,
        timeOut: x.sessionTimeout,
        sessionId: x.resume ? x.resume.id : 0n,
        passwd: x.resume ? x.resume.password : NO_PASSWORD,
        readOnly: x.readOnly,
      };
      c.connect(request, (res, error) => {
        if (res === null) return failed(error);
        let out: Outcome;
        try {
          out = accepted(x, c, res, mech);
        } catch (e) {
          c.close(`connecting failed: ${(e as Error).message}`);
          out = { kind: "failed", error: e as Error };
        }
        end(out);
      });
    } catch (e) {
      // What the steps above threw (a custom Transport's close or a custom clock's setTimeout, say) fails the
      // attempt, as in any of its steps: never a hang. Told first, so that the attempt's error is this one, not the
      // CONNECTIONLOSS of the close (which would end a handshake already begun).
      failed(e);
      c.close(`connecting failed: ${(e as Error).message}`);
    }
  };
  dialWithin(x.deadline, perHost, host, x.tls, x.dialer, c, resolver, linked, failed);
}

/** The server's answer to the ConnectRequest: an expired or mixed-up session ends the session, else it is established. */
function accepted(x: DialContext, c: Connection, res: ConnectResponse, mech: SaslClient | undefined): Outcome {
  const id = x.resume?.id ?? 0n;
  if (res.timeOut <= 0) {
    c.close("session expired");
    return { kind: "fatal", state: "expired", code: ErrorCode.SESSIONEXPIRED, reason: `session 0x${id.toString(16)} has expired; ${EXPIRED_ADVICE}` };
  }
  if (x.resume && res.sessionId !== id) {
    // Cannot happen with a correct server; treat it like an expiry rather than mix two sessions.
    c.close("server answered with another session");
    return { kind: "fatal", state: "expired", code: ErrorCode.SESSIONEXPIRED, reason: `server 0x${res.sessionId.toString(16)} answered for session 0x${id.toString(16)}; ${EXPIRED_ADVICE}` };
  }
  x.session.accepted(res, c.lastReceived);
  c.startTimers(res.timeOut);
  return { kind: "established", conn: c, res, mech };
}

/** The host was dropped by updateServerList() while we dialled it: the session must not settle on a server that left. */
export function leftTheList(conn: Connection, host: HostPort): Outcome {
  conn.close("the server is no longer in the server list");
  return { kind: "failed", error: new Error(`${host.host}:${host.port} left the server list while connecting`) };
}
