import type { Kysely } from 'kysely';
import { column } from '../columns';

// Retention watermarks: what pruning removed per stream scope (the events table is in 0001).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('event_watermarks')
    .addColumn('scope', 'text', (c) => c.primaryKey())
    .addColumn('pruned_through', column.count, (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
