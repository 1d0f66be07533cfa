import { sql, type Kysely } from 'kysely';
import { column, identityColumn } from '../columns';
import type { Engine } from '../driver';

// Kysely's schema builder and ../columns keep migrations dialect-neutral; times are 64-bit milliseconds.
export async function up(db: Kysely<unknown>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('tenants')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('independent_advertiser', column.flag, (c) => c.notNull().defaultTo(0))
    .addColumn('screens_enabled', column.flag, (c) => c.notNull().defaultTo(1))
    .addColumn('capabilities_revision', column.count, (c) => c.notNull().defaultTo(1))
    .addColumn('revision', column.count, (c) => c.notNull())
    .addColumn('used_bytes', column.count, (c) => c.notNull().defaultTo(0))
    .addColumn('reserved_bytes', column.count, (c) => c.notNull().defaultTo(0))
    .addColumn('content_limit_bytes', column.count, (c) => c.notNull())
    .addColumn('screen_count', column.count, (c) => c.notNull().defaultTo(0))
    .addColumn('screen_limit', column.count, (c) => c.notNull())
    .addColumn('credit_millis', column.millis, (c) => c.notNull())
    .addColumn('credit_grant_month', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text')
    .addColumn('intent', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();
  // Model A: one account per address. Model P contact addresses are unverified and may repeat.
  await db.schema
    .createIndex('tenants_account_email')
    .unique()
    .on('tenants')
    .column('email')
    .where(sql.ref('generation'), '=', 'A')
    .execute();
  await db.schema.createIndex('tenants_client').on('tenants').columns(['client_id', 'created_at']).execute();

  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('areas', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('issuance_id', 'text', (c) => c.notNull().unique())
    .addColumn('issuance_expires_at', column.millis, (c) => c.notNull())
    .addColumn('issuance_acked_at', column.millis)
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('revoked_at', column.millis)
    .execute();
  await db.schema.createIndex('credentials_tenant').on('credentials').column('tenant_id').execute();

  await db.schema
    .createTable('credit_ledger')
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('millis', column.millis, (c) => c.notNull())
    .addColumn('count', column.count, (c) => c.notNull())
    .addPrimaryKeyConstraint('credit_ledger_pk', ['tenant_id', 'day', 'kind'])
    .execute();

  await db.schema
    .createTable('idempotency_records')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('route', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status', column.bounded, (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('body', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_records_pk', ['scope', 'route', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_records_expiry').on('idempotency_records').column('expires_at').execute();

  await db.schema
    .createTable('operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('fence', column.count, (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', column.count, (c) => c.notNull().defaultTo(0))
    .addColumn('lease_expires_at', column.millis)
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('request_id', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('updated_at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operations_claimable').on('operations').columns(['state', 'created_at']).execute();
  await db.schema.createIndex('operations_tenant').on('operations').columns(['tenant_id', 'created_at']).execute();

  await db.schema
    .createTable('events')
    .$call(identityColumn('position', engine))
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('screen_id', 'text')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('severity', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('resource_type', 'text')
    .addColumn('resource_id', 'text')
    .addColumn('details', 'text')
    .addColumn('runtime', column.flag, (c) => c.notNull().defaultTo(0))
    .addColumn('request_id', 'text')
    .addColumn('operation_id', 'text')
    .addColumn('at', column.millis, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_tenant_position').on('events').columns(['tenant_id', 'position']).execute();
  await db.schema.createIndex('events_screen_position').on('events').columns(['screen_id', 'position']).execute();
  await db.schema.createIndex('events_at').on('events').column('at').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
