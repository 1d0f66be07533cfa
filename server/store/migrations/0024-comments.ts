import type { Kysely } from 'kysely';

// Issue 17, comments: an agent's opaque JSON notes on a screen, a playlist and each playlist page
// (by page id), stored beside the rows they annotate and never part of a revision or a manifest.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('screens').addColumn('comments', 'text').execute();
  await db.schema.alterTable('playlists').addColumn('comments', 'text').execute();
  await db.schema.alterTable('playlists').addColumn('page_comments', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
