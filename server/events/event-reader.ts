// Reading the durable log for one stream scope: pages after a position, the head, and the cursor
// rules (invalid, future, pre-retention) that every list and stream applies.
import type { Selectable } from 'kysely';
import type { EventDetails, EventType } from '../../sdk/contract/event-types';
import type { EventRecord, ResyncReason } from '../../sdk/contract/events';
import { isoTime } from '../clock';
import type { Db } from '../store/store';
import type { EventCursors, StreamScope } from './cursors';
import { scopeKey } from './cursors';
import type { EventTable } from './events.tables';

export type EventRow = Selectable<EventTable>;

/** The rows of a scope after `after` (and at most `upTo`), oldest first. */
export async function readAfter(
  db: Db,
  scope: StreamScope,
  after: number,
  limit: number,
  upTo?: number,
): Promise<EventRow[]> {
  let q = db.selectFrom('events').selectAll().where('position', '>', after);
  q =
    scope.kind === 'tenant'
      ? q.where('tenant_id', '=', scope.tenantId)
      : q.where('screen_id', '=', scope.screenId).where('tenant_id', '=', scope.tenantId);
  if (upTo !== undefined) q = q.where('position', '<=', upTo);
  return q.orderBy('position').limit(limit).execute();
}

/** Highest position retention pruned from this scope (0 when nothing was). */
export async function prunedThrough(db: Db, scope: StreamScope): Promise<number> {
  const row = await db
    .selectFrom('event_watermarks')
    .select('pruned_through')
    .where('scope', '=', scopeKey(scope))
    .executeTakeFirst();
  return row?.pruned_through ?? 0;
}

/** The scope's head position: its newest event, or what retention pruned when that is all gone. */
export async function headPosition(db: Db, scope: StreamScope): Promise<number> {
  let q = db.selectFrom('events').select('position');
  q = scope.kind === 'tenant' ? q.where('tenant_id', '=', scope.tenantId) : q.where('screen_id', '=', scope.screenId);
  const newest = await q.orderBy('position', 'desc').limit(1).executeTakeFirst();
  return Math.max(newest?.position ?? 0, await prunedThrough(db, scope));
}

export type CursorCheck = { ok: true; position: number } | { ok: false; reason: ResyncReason; head: number };

/**
 * Where a client's cursor lets it resume. Invalid: malformed, forged, or another scope's. Future:
 * past this scope's head (the log was restored from an older copy). Expired: retention pruned an
 * event of this scope after it, so resuming would silently skip that event.
 */
export async function checkCursor(
  db: Db,
  cursors: EventCursors,
  scope: StreamScope,
  cursor: string,
): Promise<CursorCheck> {
  const position = cursors.decode(scope, cursor);
  const head = await headPosition(db, scope);
  if (position === undefined) return { ok: false, reason: 'invalid', head };
  if (position > head) return { ok: false, reason: 'future', head };
  if (position < (await prunedThrough(db, scope))) return { ok: false, reason: 'expired', head };
  return { ok: true, position };
}

/** The wire record of a row in a scope (the cursor depends on the stream it is read from). */
export function eventRecord(cursors: EventCursors, scope: StreamScope, row: EventRow): EventRecord {
  const record: EventRecord = {
    cursor: cursors.encode(scope, row.position),
    sequence: row.position,
    type: row.type,
    severity: row.severity,
    message: row.message,
    at: isoTime(row.at),
  };
  if (row.request_id !== null) record.request_id = row.request_id;
  if (row.operation_id !== null) record.operation_id = row.operation_id;
  if (row.resource_type !== null && row.resource_id !== null)
    record.resource = { type: row.resource_type, id: row.resource_id };
  if (row.details !== null) record.details = JSON.parse(row.details) as Record<string, unknown>;
  if (row.actor_id !== null && row.actor_name !== null)
    record.actor = { user_id: row.actor_id, display_name: row.actor_name };
  return record;
}

/**
 * The details of a row of this type, typed by the catalog (the log checked them when they were
 * written), or undefined when the row is of another type.
 */
export function detailsOf<T extends EventType>(row: EventRow, type: T): EventDetails<T> | undefined {
  if (row.type !== type) return undefined;
  return (row.details === null ? undefined : JSON.parse(row.details)) as EventDetails<T>;
}

export const RESYNC_MESSAGES: Record<ResyncReason, string> = {
  invalid: 'the cursor is not a cursor of this stream',
  future: 'the cursor is ahead of this stream',
  expired: 'events after the cursor were pruned by retention',
};
