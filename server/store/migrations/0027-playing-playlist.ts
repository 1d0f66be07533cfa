import { type Kysely, sql } from 'kysely';

// A screen's now_playing names the playlist of the manifest its player activated, kept with the
// activation (before, the screen's current assignment was shown beside the activated revision, so
// a player still on an older manifest was said to play the new playlist). Rows activated before
// this migration take it from their manifest's stored document.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('screen_runtime_state').addColumn('playlist_id', 'text').execute();
  const rows = await sql<{ screen_id: string; document: string }>`
    SELECT s.screen_id, m.document
    FROM screen_runtime_state s
    JOIN runtime_manifests m
      ON m.screen_id = s.screen_id AND m.manifest_revision = s.active_manifest_revision`.execute(db);
  for (const row of rows.rows) {
    const playlistId = playlistOf(row.document);
    if (playlistId === null) continue;
    await sql`UPDATE screen_runtime_state SET playlist_id = ${playlistId} WHERE screen_id = ${row.screen_id}`.execute(
      db,
    );
  }
}

function playlistOf(document: string): string | null {
  try {
    const id = (JSON.parse(document) as { playlistId?: unknown }).playlistId;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}

export async function down(): Promise<void> {
  throw new Error('Marquee migrations are forward-only');
}
