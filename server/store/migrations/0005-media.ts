import type { Kysely } from 'kysely';
import { column } from '../columns';

// Media uploads (signed PUT, reservation, verification operation), generations, and the egress ledger.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('media_uploads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('media_id', 'text', (c) => c.notNull().unique().references('media.id'))
    .addColumn('operation_id', 'text', (c) => c.notNull().unique())
    .addColumn('object_key', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reserved_bytes', column.count, (c) => c.notNull())
    .addColumn('url_expires_at', column.millis, (c) => c.notNull())
    .addColumn('commit_by', column.millis, (c) => c.notNull())
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('media_uploads_expiry').on('media_uploads').columns(['state', 'commit_by']).execute();

  await db.schema
    .createTable('media_generations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('media_id', 'text')
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('aspect_ratio', 'text', (c) => c.notNull())
    .addColumn('quality', 'text', (c) => c.notNull())
    .addColumn('tag', 'text')
    .addColumn('references', 'text', (c) => c.notNull())
    .addColumn('credits', column.count)
    .addColumn('usd', 'text')
    .addColumn('lease_expires_at', column.millis, (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('media_generations_tenant_state')
    .on('media_generations')
    .columns(['tenant_id', 'state'])
    .execute();

  await db.schema
    .createTable('egress_ledger')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('bytes', column.count, (c) => c.notNull())
    .addColumn('count', column.count, (c) => c.notNull())
    .addPrimaryKeyConstraint('egress_ledger_pk', ['tenant_id', 'day', 'kind'])
    .execute();

  // Listing reads ready media newest first, per tenant.
  await db.schema
    .createIndex('media_tenant_state')
    .on('media')
    .columns(['tenant_id', 'state', 'created_at', 'id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
