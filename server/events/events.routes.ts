// GET /api/v1/events (a page of durable events) and GET /api/v1/events/stream (replay, then follow).
import { EVENT_LIST_DEFAULT_LIMIT, EventListQuery, EventStreamQuery, type EventList } from '../../sdk/contract/events';
import { anyBearer } from '../http/auth';
import { problem } from '../problem';
import { eventStream, query, reply } from '../http/route';
import { EventCursors, type StreamScope } from './cursors';
import { checkCursor, eventRecord, headPosition, readAfter, RESYNC_MESSAGES } from './event-reader';
import { serveTenantEventStream } from './event-stream';

export const listEvents = query({ auth: anyBearer, area: 'reports', query: EventListQuery }, async (ctx) => {
  const { db } = ctx.services.store;
  const cursors = new EventCursors(ctx.services.keys);
  const scope: StreamScope = { kind: 'tenant', tenantId: ctx.principal.tenantId };
  let after = 0; // no cursor: from the oldest retained event
  if (ctx.query.after) {
    const check = await checkCursor(db, cursors, scope, ctx.query.after);
    if (!check.ok) {
      // The list's form of stream.resync_required: a problem that still hands over the head cursor.
      const detail = `${RESYNC_MESSAGES[check.reason]}; refetch authoritative state and resume at head_cursor`;
      throw problem('invalid_request', `after: ${detail}`, {
        errors: [{ field: 'after', code: 'resync_required', detail }],
        extensions: { head_cursor: cursors.encode(scope, check.head), resync_reason: check.reason },
      });
    }
    after = check.position;
  }
  const rows = await readAfter(db, scope, after, ctx.query.limit ?? EVENT_LIST_DEFAULT_LIMIT);
  const items = rows.map((row) => eventRecord(cursors, scope, row));
  const body: EventList = {
    items,
    next_cursor: items.at(-1)?.cursor ?? cursors.encode(scope, Math.max(after, await headPosition(db, scope))),
  };
  return reply.ok(body);
});

export const streamEvents = eventStream({ auth: anyBearer, area: 'reports', query: EventStreamQuery }, async (ctx) => {
  const lastEventId = ctx.req.headers['last-event-id'];
  await serveTenantEventStream(ctx.services, ctx.res, {
    tenantId: ctx.principal.tenantId,
    after: ctx.query.after,
    lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined,
    credentialId: ctx.principal.credentialId,
    stillAuthorized: () => ctx.stillAuthenticated(),
  });
});
