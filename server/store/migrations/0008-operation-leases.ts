import type { Kysely } from 'kysely';

// Operation leases name their holder: the worker identity that claimed a running operation (or
// receives a `receiving` upload's body), so a starting worker reclaims only its own or expired work.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('operations').addColumn('lease_owner', 'text').execute();
  await db.schema.createIndex('operations_leases').on('operations').columns(['state', 'lease_expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('operations_leases').execute();
  await db.schema.alterTable('operations').dropColumn('lease_owner').execute();
}
