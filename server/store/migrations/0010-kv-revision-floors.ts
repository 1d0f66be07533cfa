import type { Kysely } from 'kysely';
import { column } from '../columns';

// Review 3, finding E: KV revisions must never repeat for a key once its tombstone is pruned. Each
// application keeps the highest revision its pruned tombstones reached; a key written with no row
// at all starts above it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('kv_revision_floors')
    .addColumn('application_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('revision', column.count, (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
