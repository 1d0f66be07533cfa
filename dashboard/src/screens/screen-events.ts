// Which screen an event is about, and whether it takes the screen off the default list. Pure: the
// screens store refetches the screens these name (the server's Screen stays the one truth).
import type { EventRecord } from '../../../sdk/contract/events';

/** The id of the screen whose row this event may change (pairing, updates, its player's reports). */
export function screenIdOf(event: Pick<EventRecord, 'resource'>): string | undefined {
  return event.resource?.type === 'screen' ? event.resource.id : undefined;
}

/** The event removes the screen from the default list. */
export function removesScreen(event: Pick<EventRecord, 'type'>): boolean {
  return event.type === 'screen.deleted' || event.type === 'screen.archived';
}
