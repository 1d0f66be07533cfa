import type { Kysely } from 'kysely';
import { column } from '../columns';

// Issue 18, invitations: a project's invitations of people (project members, ad buyers), by email
// or by link. Only the token's hash is stored.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('delivery', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('advertising', 'text')
    .addColumn('created_at', column.millis, (c) => c.notNull())
    .addColumn('expires_at', column.millis, (c) => c.notNull())
    .addColumn('accepted_at', column.millis)
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', column.millis)
    .execute();
  await db.schema
    .createIndex('invitations_tenant')
    .on('invitations')
    .columns(['tenant_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('invitations_address')
    .on('invitations')
    .columns(['tenant_id', 'kind', 'email', 'state'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
