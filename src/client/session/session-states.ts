// The session's lifecycle as data: each state carries what exists only in it (the live connection,
// the dial attempt, the client-side expiry timer, the read-only probe, the end's code and reason),
// and TRANSITIONS is the one table of legal moves (docs/session-states.md mirrors it; a unit test
// keeps the two equal). Session.transition() checks every move against it before anything happens.
import { ErrorCode } from "../../protocol/constants.ts";
import type { HostPort } from "../../protocol/connect-string.ts";
import type { TimerHandle } from "../clock.ts";
import type { Connection } from "../wire/connection.ts";
import { ZooKeeperError } from "../errors.ts";
import type { ReadOnlyProbe } from "./readonly-probe.ts";
import type { SessionState } from "../types.ts";

/** The final states of a session. */
export type EndState = "expired" | "authFailed" | "closed";

/** Whether `state` is a final one (the session is over: nothing reconnects, every call fails). */
export function isEndState(state: SessionState): state is EndState {
  return state === "expired" || state === "closed" || state === "authFailed";
}

export type Phase =
  /** No session yet: dialling for the first one (`attempt` is the connection being tried). */
  | { kind: "connecting"; attempt: Connection | null }
  /** A session on `conn`; on a read-only server, `probe` looks for a read-write one. */
  | { kind: "connected"; conn: Connection; host: HostPort; readOnly: boolean; probe: ReadOnlyProbe | null }
  /** The link dropped at `since`; reconnecting, with the client-side expiry armed. */
  | { kind: "disconnected"; since: number; expiry: TimerHandle | null; attempt: Connection | null }
  /** close() was called: closeSession is in flight on `conn`; the public state stays `was` meanwhile. */
  | { kind: "closing"; was: SessionState; conn: Connection | null }
  /** Over for good; every call fails with `code`. */
  | { kind: "ended"; state: EndState; code: ErrorCode; reason: string };

export type PhaseKind = Phase["kind"];

/**
 * The legal moves (from -> to). Against Apache ZooKeeper's ClientCnxn.States and Curator's ConnectionState:
 * - connecting   = CONNECTING/ASSOCIATING before the first session (Curator: before CONNECTED)
 * - connected    = CONNECTED, or CONNECTEDREADONLY with readOnly (Curator: CONNECTED/RECONNECTED, READ_ONLY)
 * - disconnected = CONNECTING again after KeeperState.Disconnected (Curator: SUSPENDED)
 * - closing      = close() running; ClientCnxn stays CONNECTED until the closeSession reply
 * - ended        = CLOSED with KeeperState.Expired or Closed, or AUTH_FAILED (Curator: LOST, or closed)
 * Moving from a read-only to a read-write server goes through disconnected, as in ClientCnxn.
 */
export const TRANSITIONS: Readonly<Record<PhaseKind, readonly PhaseKind[]>> = {
  connecting: ["connected", "closing", "ended"],
  connected: ["disconnected", "closing", "ended"],
  disconnected: ["connected", "closing", "ended"],
  closing: ["ended"],
  ended: [],
};

// TRANSITIONS as a Map: TRANSITIONS[from] by a computed key is a megamorphic lookup on every move.
const ALLOWED: ReadonlyMap<PhaseKind, readonly PhaseKind[]> = new Map(Object.entries(TRANSITIONS) as [PhaseKind, readonly PhaseKind[]][]);

/** Throws on a move the table does not allow (a bug in the session, never a network condition). */
export function checkTransition(from: PhaseKind, to: PhaseKind): void {
  if (!ALLOWED.get(from)!.includes(to)) throw new Error(`zookeeper: illegal session transition ${from} -> ${to}`);
}

/** The public SessionState a phase shows. */
export function publicState(p: Phase): SessionState {
  switch (p.kind) {
    case "connected":
      return p.readOnly ? "connectedReadOnly" : "connected";
    case "closing":
      return p.was;
    case "ended":
      return p.state;
    default:
      return p.kind;
  }
}

/**
 * Why calls fail once close() was called. Code SESSIONEXPIRED, as the Java client answers in its CLOSED state:
 * the session is gone for good, so withRetry and the recipes stop at once (CONNECTIONLOSS would be retried).
 */
export const CLOSED_REASON = "the client is closed (close() was called); connect a new client";

/** What an expired session's errors end with: the client is finished too (there is no reconnecting it). */
export const EXPIRED_ADVICE = "connect a new client";

/** The error of a call made once the session is over (or closing), by the state it shows. */
export function endedError(shown: SessionState, req: { op: string; path?: string }): ZooKeeperError {
  const details = { op: req.op, path: req.path, sent: false };
  switch (shown) {
    case "expired":
      return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, `the session has expired; ${EXPIRED_ADVICE}`, details);
    case "authFailed":
      return new ZooKeeperError(ErrorCode.AUTHFAILED, "authentication failed; the client is finished", details);
    default:
      // closed, or close() under way (the state shown is still the one before it)
      return new ZooKeeperError(ErrorCode.SESSIONEXPIRED, CLOSED_REASON, details);
  }
}
