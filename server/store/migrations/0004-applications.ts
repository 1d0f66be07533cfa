import type { Kysely } from 'kysely';
import { column } from '../columns';

// Applications: the file index of each release, launch tickets and the grants release hosts honour.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('release_files')
    .addColumn('release_id', 'text', (c) => c.notNull().references('releases.id'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('ordinal', column.bounded, (c) => c.notNull())
    .addColumn('bytes', column.count, (c) => c.notNull())
    .addPrimaryKeyConstraint('release_files_pk', ['release_id', 'path'])
    .execute();
  // Acceptance order within an application (its revision at acceptance): "newest" without relying on clocks.
  await db.schema
    .alterTable('releases')
    .addColumn('accepted_revision', column.count, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('releases_operation').on('releases').column('operation_id').execute();
  await db.schema.createIndex('releases_tenant').on('releases').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('launch_tickets')
    .addColumn('ticket_hash', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('release_id', 'text', (c) => c.notNull().references('releases.id'))
    .addColumn('host_label', 'text', (c) => c.notNull())
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('content_generation', column.count, (c) => c.notNull())
    .addColumn('manifest_revision', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('consumed_at', column.millis)
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('launch_tickets_expiry').on('launch_tickets').column('expires_at').execute();

  await db.schema
    .createTable('release_grants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('screen_id', 'text', (c) => c.notNull())
    .addColumn('content_generation', column.count, (c) => c.notNull())
    .addColumn('manifest_revision', 'text', (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('revoked_at', column.millis)
    .execute();
  await db.schema
    .createIndex('release_grants_screen')
    .on('release_grants')
    .columns(['tenant_id', 'screen_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
