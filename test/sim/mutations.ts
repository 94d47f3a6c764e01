// Planted bugs for the mutation check, applied from the test side only (SIM_MUTATE=<name>): each
// wraps a prototype method of the real code for one seed and is undone afterwards. src/ has no flags.
import type { Connection } from "../../src/client/wire/connection.ts";
import { LeaderElection } from "../../src/recipes/leader-election.ts";
import { Session } from "../../src/client/session/session.ts";

type Proto = Record<string, (...a: unknown[]) => unknown>;

export const MUTATIONS = ["no-revoke", "no-rewatch", "no-fail-on-cut", "stale-bytes", "no-ping", "priming-zxid"] as const;

export function plantMutation(name: string, mods: { Connection: typeof Connection }): () => void {
  if (!name) return () => {};
  const patch = (proto: object, method: string, make: (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => unknown): (() => void) => {
    const p = proto as Proto;
    const orig = p[method];
    if (typeof orig !== "function") throw new Error(`mutation ${name}: ${method} not found`);
    p[method] = make(orig);
    return () => {
      p[method] = orig;
    };
  };
  const C = mods.Connection.prototype;
  switch (name) {
    // The leader never steps down on its own: revoke() does nothing.
    case "no-revoke":
      return patch(LeaderElection.prototype, "revoke", () => function () {});
    // Watches are not re-registered on reconnect: prime() skips the SetWatches batches (the queued requests
    // go once connected, in serve()).
    case "no-rewatch":
      return patch(Session.prototype, "prime", () => function () {});
    // Requests in flight are not failed when the connection is cut.
    case "no-fail-on-cut":
      return patch(C, "close", (orig) =>
        function (this: { inFlight: { drain(): unknown[] } }, ...a: unknown[]) {
          this.inFlight.drain = () => [];
          return orig.apply(this, a);
        },
      );
    // Replies read after a pause refresh the lease: it counts from when their bytes arrived instead of
    // from when the acknowledged request was sent (liveness.ts leaseLeft's rule broken).
    case "stale-bytes":
      return patch(C, "ack", () =>
        function (this: { acked: number; now(): number }) {
          this.acked = this.now();
        },
      );
    // The ping timer is never re-armed after the first tick.
    case "no-ping":
      return patch(C, "onTick", (orig) =>
        function (this: { schedule(): void; pingInterval: number }, ...a: unknown[]) {
          this.pingInterval = Number.POSITIVE_INFINITY;
          return orig.apply(this, a);
        },
      );
    // The order of issue 34: every reply moves lastZxid, also those to the client's own frames on a new link
    // (feature probes, SetWatches, SASL), so a link cut after the probes' replies and before SetWatches'
    // catch-up notifications makes the next SetWatches skip the change.
    case "priming-zxid":
      return patch(C, "send", (orig) =>
        function (this: unknown, pending: unknown) {
          Object.defineProperty(pending, "tracksZxid", { value: true });
          return orig.call(this, pending);
        },
      );
    default:
      throw new Error(`unknown SIM_MUTATE ${name}; one of ${MUTATIONS.join(", ")}`);
  }
}
