import type { Kysely } from 'kysely';

// The dashboard (issue 19): an event a signed-in person caused names them (the reference's
// EventActor: user id and display name, descriptive only). Absent on every other event.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').addColumn('actor_id', 'text').execute();
  await db.schema.alterTable('events').addColumn('actor_name', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
