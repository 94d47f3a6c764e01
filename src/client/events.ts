// WatchedEvents as watchers get them: the numbers of the wire and, beside them, their names.
import { EventType, KeeperState } from "../protocol/constants.ts";
import type { EventTypeName, KeeperStateName, WatchedEvent } from "./types.ts";

const typeNames = new Map<number, EventTypeName>(Object.entries(EventType).map(([name, v]) => [v, name as EventTypeName]));
const stateNames = new Map<number, KeeperStateName>(Object.entries(KeeperState).map(([name, v]) => [v, name as KeeperStateName]));

/**
 * A WatchedEvent (fields in print order). Servers 3.4 to 3.9 send only the values of EventType and KeeperState;
 * another number would get the name `event(<n>)` / `state(<n>)`, outside the name types as the number is outside its type.
 */
export function watchedEvent(type: number, state: number, path: string | null, zxid: bigint | undefined): WatchedEvent {
  return {
    type: type as EventType,
    typeName: typeNames.get(type) ?? (`event(${type})` as EventTypeName),
    state: state as KeeperState,
    stateName: stateNames.get(state) ?? (`state(${state})` as KeeperStateName),
    path,
    zxid,
  };
}
