// The live event log: the newest events first, at most EVENT_LOG_LIMIT of them in memory.
import { createStore } from 'zustand/vanilla';
import type { EventRecord } from '../../../sdk/contract/events';

/** Enough for a day of a busy small project; older ones are in GET /dashboard/v1/events. */
export const EVENT_LOG_LIMIT = 500;

export interface EventsState {
  items: EventRecord[];
  /** The stream is connected (a connection is up; it says nothing of the screens). */
  live: boolean;
  add(event: EventRecord): void;
  setLive(live: boolean): void;
  /** Another project was selected: its log starts empty. */
  clear(): void;
}

export type EventsStore = ReturnType<typeof createEventsStore>;

export function createEventsStore(limit = EVENT_LOG_LIMIT) {
  return createStore<EventsState>()((set, get) => ({
    items: [],
    live: false,
    add(event) {
      const items = get().items;
      // A reconnect may replay an event already held: the sequence says so.
      if (items.length > 0 && items[0]!.sequence >= event.sequence) return;
      set({ items: [event, ...items].slice(0, limit) });
    },
    setLive(live) {
      set({ live });
    },
    clear() {
      set({ items: [], live: false });
    },
  }));
}
