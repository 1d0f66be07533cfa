import type { Kysely } from 'kysely';
import { column } from '../columns';

// Recorded answers that carry a one-time credential are erased once their delivery window closed:
// the record names when, so one housekeeping job serves every route that asks for it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_records').addColumn('body_erase_at', column.millis).execute();
  await db.schema
    .createIndex('idempotency_records_body_erasure')
    .on('idempotency_records')
    .column('body_erase_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('idempotency_records_body_erasure').execute();
  await db.schema.alterTable('idempotency_records').dropColumn('body_erase_at').execute();
}
