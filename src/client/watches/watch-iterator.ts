// An async iterator over a persistent watch: events queue up until the loop takes them; the watch
// is removed when the loop ends (break/return), the signal aborts, or the session ends.
import { ErrorCode, EventType, KeeperState } from "../../protocol/constants.ts";
import { ZooKeeperError } from "../errors.ts";
import type { WatchedEvent, Watcher } from "../types.ts";

interface WatchIteratorHooks {
  signal?: AbortSignal;
  add(watcher: Watcher): Promise<void>;
  remove(watcher: Watcher): Promise<void>;
}

export function watchIterator(hooks: WatchIteratorHooks): AsyncIterable<WatchedEvent> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<WatchedEvent> {
      const buffered: WatchedEvent[] = [];
      let waiting: { resolve(r: IteratorResult<WatchedEvent>): void; reject(e: unknown): void } | null = null;
      let ended = false;
      let failure: unknown = null;

      const end = (error?: unknown): void => {
        if (ended) return;
        ended = true;
        if (error) failure = error;
        hooks.signal?.removeEventListener("abort", onAbort);
        void hooks.remove(watcher);
        if (waiting) {
          const w = waiting;
          waiting = null;
          if (failure) w.reject(failure);
          else w.resolve({ value: undefined, done: true });
        }
      };
      const watcher: Watcher = (event) => {
        if (ended) return;
        if (event.type === EventType.None) {
          if (event.state === KeeperState.Expired) end(new ZooKeeperError(ErrorCode.SESSIONEXPIRED, "the session expired while watching; connect a new client"));
          else if (event.state === KeeperState.Closed || event.state === KeeperState.AuthFailed) end();
          return;
        }
        if (event.type === EventType.PersistentWatchRemoved) return end();
        if (waiting) {
          const w = waiting;
          waiting = null;
          w.resolve({ value: event, done: false });
        } else buffered.push(event);
      };
      // Listening from the start: an abort while addWatch is still under way ends the loop once the
      // watch is in place (and so can be removed), instead of being missed.
      const onAbort = (): void => void registered.then(() => end());
      const registered = hooks.signal?.aborted
        ? Promise.resolve((ended = true) as unknown as void)
        : hooks.add(watcher).then(
            () => {},
            (e: unknown) => {
              ended = true;
              failure = e;
            },
          );
      if (!ended) hooks.signal?.addEventListener("abort", onAbort, { once: true });

      return {
        async next(): Promise<IteratorResult<WatchedEvent>> {
          await registered;
          const event = buffered.shift();
          if (event) return { value: event, done: false };
          if (failure) {
            const f = failure;
            failure = null;
            throw f;
          }
          if (ended) return { value: undefined, done: true };
          return new Promise((resolve, reject) => (waiting = { resolve, reject }));
        },
        async return(): Promise<IteratorResult<WatchedEvent>> {
          await registered;
          end();
          return { value: undefined, done: true };
        },
      };
    },
  };
}
