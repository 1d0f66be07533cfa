// Durable events: the record shape of EventList and of every SSE data line, the list query, and the
// stream-control event types. Shared by the server, the player, the CLI and integrators. The types
// the server emits and their details are in event-types.ts.
import { z } from 'zod';
import type { STREAM_RESYNC_REQUIRED } from './stream-control';

export { STREAM_CURSOR, STREAM_RESYNC_REQUIRED } from './stream-control';

/** The server's answer when `limit` is absent. */
export const EVENT_LIST_DEFAULT_LIMIT = 100;
/** Largest page a list answers (the reference contract caps its other lists at 200 items). */
export const EVENT_LIST_MAX_LIMIT = 200;

export type EventSeverity = 'info' | 'warning' | 'error';

/** One durable event (reference contract: Event; open object). */
export interface EventRecord {
  /** Opaque; resume after this event with `after=<cursor>` or `Last-Event-ID`. */
  cursor: string;
  /** Increases with every event of the stream; not contiguous. */
  sequence: number;
  type: string;
  severity: EventSeverity;
  message: string;
  /** RFC 3339 time of the change. */
  at: string;
  request_id?: string;
  operation_id?: string;
  resource?: { type: string; id: string };
  details?: Record<string, unknown>;
  /** The signed-in person whose dashboard request caused the change; absent for agents, players, workers. */
  actor?: EventActor;
}

/** Reference contract EventActor: descriptive attribution only, never authorization. */
export interface EventActor {
  user_id: string;
  /** The name the person chose; not verified. */
  display_name: string;
}

export interface EventList {
  items: EventRecord[];
  /** Cursor to pass as `after` for the next page; the head cursor when `items` is empty. */
  next_cursor: string;
}

/** Why a stream sent `stream.resync_required` (the `details.reason` of that frame). */
export type ResyncReason = 'invalid' | 'future' | 'expired';

/** Data of a `stream.resync_required` frame: an EventRecord whose cursor is the current head. */
export interface ResyncRequired extends EventRecord {
  type: typeof STREAM_RESYNC_REQUIRED;
  details: { reason: ResyncReason };
}

/** Query of GET /api/v1/events. An empty `after` means "from the oldest retained event". */
export const EventListQuery = z.strictObject({
  after: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(EVENT_LIST_MAX_LIMIT).optional(),
});
export type EventListQuery = z.infer<typeof EventListQuery>;

/** Query of the event streams; `after` beats the Last-Event-ID header. */
export const EventStreamQuery = z.strictObject({
  after: z.string().optional(),
});
export type EventStreamQuery = z.infer<typeof EventStreamQuery>;
