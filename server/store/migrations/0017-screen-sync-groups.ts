import type { Kysely } from 'kysely';

// Lockstep (issue 15): a screen's sync group (tag grammar) and, on a video wall, the region of the
// canvas it shows (a JSON rectangle). Both absent by default: a screen plays on its own.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('screens').addColumn('sync_group', 'text').execute();
  await db.schema.alterTable('screens').addColumn('wall_region', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
