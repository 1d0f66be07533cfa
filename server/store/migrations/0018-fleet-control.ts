import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { column } from '../columns';

// Issue 16, fleet control: what a screen shows beyond its assignment (a playlist schedule and a
// takeover, resolved into effective_playlist_id by manifests/), each screen's next boundary (one
// timer for the earliest), its display state, and the screen list a fleet action pinned under its
// Idempotency-Key with each screen's finished answer.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('screens').addColumn('effective_playlist_id', 'text').execute();
  await sql`UPDATE screens SET effective_playlist_id = playlist_id`.execute(db);

  await db.schema
    .createTable('screen_schedules')
    .addColumn('screen_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('entries', 'text', (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('screen_takeovers')
    .addColumn('screen_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('playlist_id', 'text', (c) => c.notNull())
    .addColumn('until', column.millis, (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('started_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('screen_boundaries')
    .addColumn('screen_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('due_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('screen_boundaries_due').on('screen_boundaries').column('due_at').execute();

  await db.schema
    .createTable('screen_displays')
    .addColumn('screen_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('power', 'text')
    .addColumn('schedule', 'text')
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('fleet_actions')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('screen_ids', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('fleet_actions_pk', ['tenant_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('fleet_actions_created').on('fleet_actions').column('created_at').execute();

  await db.schema
    .createTable('fleet_action_results')
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('result', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('fleet_action_results_pk', ['tenant_id', 'idempotency_key', 'screen_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
