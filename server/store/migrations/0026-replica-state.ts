import type { Kysely } from 'kysely';
import { column } from '../columns';

// Issue 21, replicas: rate windows and screen presence in the database, so replicas sharing a
// PostgreSQL store count one budget and see one presence. Created on SQLite too (the same schema
// on both engines), where the single process keeps them in memory instead.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_windows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('window_start', column.millis, (c) => c.notNull())
    .addColumn('used', column.count, (c) => c.notNull())
    .addColumn('ends_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_windows_ends_at').on('rate_windows').column('ends_at').execute();
  await db.schema
    .createTable('screen_presence')
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('streams', column.bounded, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('screen_presence_pk', ['screen_id', 'holder'])
    .execute();
  await db.schema.createIndex('screen_presence_expires_at').on('screen_presence').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
