// Retention: events older than the configured window are pruned in short batches, and each stream
// scope remembers the newest position pruned from it so that a cursor before it resyncs.
import { greatest } from '../store/portable-sql';
import type { Store, Tx } from '../store/store';

/** Retention is counted in days; an hourly pass keeps the table within an hour of the window. */
export const RETENTION_EVERY_MS = 60 * 60_000;
/** Rows deleted per transaction, so a pass never holds the writer for long. */
const PRUNE_BATCH_ROWS = 5000;
const DAY_MS = 86_400_000;

/** Deletes events older than `retentionDays` before `now`; returns how many were pruned. */
export async function pruneEvents(store: Store, now: number, retentionDays: number): Promise<number> {
  const cutoff = now - retentionDays * DAY_MS;
  let pruned = 0;
  for (;;) {
    const count = await store.transaction(({ db }) => pruneBatch(db, cutoff));
    pruned += count;
    if (count < PRUNE_BATCH_ROWS) return pruned;
  }
}

async function pruneBatch(db: Tx, cutoff: number): Promise<number> {
  const batch = await db
    .selectFrom('events')
    .select('position')
    .where('at', '<', cutoff)
    .orderBy('position')
    .limit(PRUNE_BATCH_ROWS)
    .execute();
  const last = batch.at(-1)?.position;
  if (last === undefined) return 0;
  const doomed = db.selectFrom('events').where('at', '<', cutoff).where('position', '<=', last);
  const tenants = await doomed
    .select(['tenant_id as id', (eb) => eb.fn.max('position').as('through')])
    .groupBy('tenant_id')
    .execute();
  const screens = await doomed
    .select(['screen_id as id', (eb) => eb.fn.max('position').as('through')])
    .where('screen_id', 'is not', null)
    .groupBy('screen_id')
    .execute();
  const marks = [
    ...tenants.map((t) => ({ scope: `tenant:${t.id}`, pruned_through: Number(t.through) })),
    ...screens.map((s) => ({ scope: `screen:${s.id}`, pruned_through: Number(s.through) })),
  ];
  await db
    .insertInto('event_watermarks')
    .values(marks)
    .onConflict((oc) =>
      oc.column('scope').doUpdateSet({
        pruned_through: (eb) => greatest(eb.ref('excluded.pruned_through'), eb.ref('event_watermarks.pruned_through')),
      }),
    )
    .execute();
  const deleted = await db
    .deleteFrom('events')
    .where('at', '<', cutoff)
    .where('position', '<=', last)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
