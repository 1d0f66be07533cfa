// Durable events: a page of the list, or the live stream followed with cursor resume and resync.
import type { EventList, EventListQuery, EventRecord } from '../contract/events';
import {
  followEventStream,
  type EventStream,
  type EventStreamOptions,
  type StreamMessage,
} from '../sse/event-stream-client';
import type { ClientTransport } from './transport';

export interface FollowOptions extends Omit<EventStreamOptions, 'url' | 'headers' | 'fetch' | 'cursorIn' | 'onEvent'> {
  /** Each event in order; the cursor moves past it once this returns (or its promise resolves). */
  onEvent: (event: StreamMessage<EventRecord>) => void | Promise<void>;
}

export function eventRoutes(t: ClientTransport) {
  return {
    /**
     * Oldest retained first; pass `next_cursor` back as `after`. A cursor that cannot be resumed is
     * a 400 invalid_request whose `errors[0].code` is `resync_required` and whose document carries
     * `head_cursor`.
     */
    list: (query: EventListQuery = {}) =>
      t.request<EventList>({ method: 'GET', path: '/api/v1/events', query: { ...query } }),
    /**
     * Replays the events after `cursor` (all retained ones without it), then follows live. It
     * reconnects with backoff at the last cursor handled; on `stream.resync_required` it calls
     * `onResync` (refetch what you track there) and resumes at the head cursor. Stop it with
     * `close()` or the signal; `done` rejects on a refusal no retry can fix (401, 403 …).
     */
    follow: (options: FollowOptions): EventStream =>
      followEventStream({
        ...options,
        url: `${t.baseUrl}/api/v1/events/stream`,
        headers: () => t.credentialHeaders(),
        fetch: t.fetch,
        onEvent: options.onEvent as EventStreamOptions['onEvent'],
      }),
  };
}
