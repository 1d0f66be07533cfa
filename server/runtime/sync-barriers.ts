// The runtime plane's side of lockstep barriers (issue 15): which group a screen plays in, the last
// barrier its stream carried, and a new barrier written to every member's stream. The routes are in
// sync.routes.ts; the rules (lead time, quiet time) are explained there.
import type { SyncBarrierView } from '../../sdk/contract/runtime';
import type { EventLog } from '../events/event-log';
import type { Db, Tx, Work } from '../store/store';

/** The screen's sync group and state (the screen exists: its credential was just checked). */
export async function screenSyncGroup(
  db: Db | Tx,
  screenId: string,
): Promise<{ sync_group: string | null; state: string }> {
  return db.selectFrom('screens').select(['sync_group', 'state']).where('id', '=', screenId).executeTakeFirstOrThrow();
}

/** The newest barrier the screen's stream carried since `since`, if any. */
export async function lastBarrier(db: Db | Tx, screenId: string, since: number): Promise<SyncBarrierView | undefined> {
  const row = await db
    .selectFrom('events')
    .select('details')
    .where('screen_id', '=', screenId)
    .where('type', '=', 'screen.sync_barrier')
    .where('at', '>', since)
    .orderBy('position', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row?.details) return undefined;
  const details = JSON.parse(row.details) as SyncBarrierView;
  return { timeline: details.timeline, page_index: details.page_index, at: details.at };
}

/**
 * Holds the group's barrier lock for the rest of the transaction: of members advancing at once,
 * one writes the barrier and the others read it (where transactions run side by side).
 */
export function lockGroupBarrier(work: Work, tenantId: string, group: string): Promise<void> {
  return work.lock(`sync-barrier:${tenantId}:${group}`);
}

/** Writes the barrier as a durable `screen.sync_barrier` on every active member's stream. */
export async function announceBarrier(
  events: EventLog,
  work: Work,
  input: { tenantId: string; group: string; barrier: SyncBarrierView; requestId: string },
  now: number,
): Promise<void> {
  const { tenantId, group, barrier } = input;
  const members = await work.db
    .selectFrom('screens')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('sync_group', '=', group)
    .where('state', '=', 'active')
    .execute();
  await events.appendMany(
    work,
    members.map((m) => ({
      tenantId,
      screenId: m.id,
      type: 'screen.sync_barrier' as const,
      message: `sync group ${group}: page ${barrier.page_index} at ${barrier.at}`,
      resource: { type: 'screen', id: m.id },
      details: { group, ...barrier },
      requestId: input.requestId,
    })),
    now,
  );
}
