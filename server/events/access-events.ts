// Appends the events of people and access (sdk/contract/access-events.ts), each checked against its
// entry's details schema before it is written, as the typed event log will do for every type. When
// the catalog takes these entries, each call here becomes a plain `services.events.append`.
import { ACCESS_EVENT_TYPES, type AccessEventDetails, type AccessEventType } from '../../sdk/contract/access-events';
import type { Work } from '../store/store';
import type { EventLog } from './event-log';

export type AccessEvent = {
  [T in AccessEventType]: {
    type: T;
    tenantId: string;
    message: string;
    resource?: { type: string; id: string };
    requestId?: string;
  } & (undefined extends AccessEventDetails<T> ? { details?: undefined } : { details: AccessEventDetails<T> });
}[AccessEventType];

export async function appendAccessEvent(
  services: { events: EventLog },
  work: Work,
  event: AccessEvent,
  now: number,
): Promise<number> {
  const parsed = ACCESS_EVENT_TYPES[event.type].details.safeParse(event.details);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `details.${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`event ${event.type} does not match its contract: ${issues}`);
  }
  return services.events.append(
    work,
    {
      tenantId: event.tenantId,
      type: event.type,
      message: event.message,
      resource: event.resource,
      details: event.details as Record<string, unknown> | undefined,
      requestId: event.requestId,
    },
    now,
  );
}
