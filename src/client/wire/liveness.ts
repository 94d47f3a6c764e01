// The liveness rule, written once: how long a link may stay silent, how often to ping, when the
// client itself declares the session expired, when a stalled process must distrust what it reads,
// and the lease every "am I still connected?" reading is taken from. The connection, the session,
// `zk.readTimeout`, `zk.heardWithin()` and `zk.leaseRemaining()` (and through them the recipes)
// all read these functions; no other file does this arithmetic.

/** Read timeout of a link: 2/3 of the negotiated session timeout (Java ClientCnxn, go-zookeeper). */
export function readTimeoutFor(negotiatedTimeout: number): number {
  return (negotiatedTimeout * 2) / 3;
}

/** Pings go at half the read timeout (at most every 10 s), and only when nothing else was sent. */
export function pingIntervalFor(readTimeout: number): number {
  return Math.min(readTimeout / 2, 10_000);
}

/** The connection's timer tick for a ping interval (50 ms to 1 s). */
export function tickFor(pingInterval: number): number {
  return Math.max(50, Math.min(pingInterval / 4, 1000));
}

/** The tick of a connection whose session timeout is `negotiatedTimeout` (the attempt's timer steps by it too). */
export function tickForTimeout(negotiatedTimeout: number): number {
  return tickFor(pingIntervalFor(readTimeoutFor(negotiatedTimeout)));
}

/** Client-side expiry: 4/3 of the negotiated timeout without hearing a server (Java client 3.9.3+). */
export function clientExpiryAfter(negotiatedTimeout: number): number {
  return (negotiatedTimeout * 4) / 3;
}

/**
 * True when the periodic tick is well overdue, i.e. this process was not running on time (SIGSTOP,
 * a long GC, a blocked loop): bytes read now may have sat in the socket buffer since long before.
 */
export function isStalled(now: number, lastTick: number, tickMs: number): boolean {
  return tickMs > 0 && now - lastTick > 2 * tickMs + 100;
}

/**
 * The lease: ms left before `ackedSendAt` (when the last request the server has acknowledged was
 * sent) is older than `within`. Counted from the send, not from when the reply's bytes arrived: the
 * server heard us no earlier than that, and replies that piled up while this process was paused
 * acknowledge old sends, so they cannot refresh it. 0 once lapsed.
 */
export function leaseLeft(now: number, ackedSendAt: number, within: number): number {
  return Math.max(0, ackedSendAt + within - now);
}
