// Follows the project's event stream while someone is signed in: each event goes to the log and to
// the screens, checked against the typed catalog. Presence events (screen.online/offline) come a
// minute after the change (D-245's debounce), so the list is also re-read every PRESENCE_POLL_MS
// while the page is visible: one request for the whole grid, which keeps the dot within seconds.
import type { EventRecord } from '../../../sdk/contract/events';
import { isEventType, parseEventRecord } from '../../../sdk/contract/event-types';
import type { DashboardClient } from '../api/dashboard-client';
import type { EventsStore } from './events-store';
import type { ScreensStore } from './screens-store';

/** The reference's presence grace is 3 s; a screen's dot is at most this much behind. */
export const PRESENCE_POLL_MS = 10_000;

/**
 * A frame's data as an event: one of the catalog with the details its type promises, or a type this
 * build does not know (a newer server), kept as a plain record. A known type with broken details is
 * dropped: the catalog is the contract.
 */
export function eventOf(data: unknown): EventRecord | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const record = data as EventRecord;
  if (typeof record.type !== 'string' || typeof record.sequence !== 'number') return undefined;
  if (!isEventType(record.type)) return record;
  return parseEventRecord(record);
}

export function followProject(
  client: DashboardClient,
  stores: { events: EventsStore; screens: ScreensStore },
): () => void {
  const stream = client.events.follow({
    onEvent: (message) => {
      const event = eventOf(message.data);
      if (!event) return;
      stores.events.getState().add(event);
      stores.screens.getState().apply(event);
    },
    onOpen: () => stores.events.getState().setLive(true),
    onRetry: () => stores.events.getState().setLive(false),
    onResync: () => stores.screens.getState().load(),
  });
  stream.done.catch(() => stores.events.getState().setLive(false));
  const poll = setInterval(() => {
    if (document.visibilityState === 'visible') void stores.screens.getState().load();
  }, PRESENCE_POLL_MS);
  return () => {
    clearInterval(poll);
    stream.close();
    stores.events.getState().setLive(false);
  };
}
