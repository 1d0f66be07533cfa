// Test helpers: screens written directly, active and assigned one playlist, so tests and benchmarks
// of fleet-sized work are not held to the 50-screen quota of the API.
import { newId } from '../keys';
import type { ScreenTable } from '../screens/screens.tables';
import type { Services } from '../services';

export async function insertScreensShowing(
  services: Services,
  tenantId: string,
  playlistId: string,
  count: number,
): Promise<string[]> {
  const now = services.clock.now();
  const rows: ScreenTable[] = Array.from({ length: count }, (_, i) => ({
    id: newId('scr'),
    tenant_id: tenantId,
    public_id: newId('pub'),
    label: `Screen ${i}`,
    revision: 1,
    manifest_revision: 1,
    content_access_generation: 1,
    state: 'active',
    playlist_id: playlistId,
    effective_playlist_id: playlistId,
    timezone: null,
    sync_group: null,
    wall_region: null,
    native_identity: 0,
    paired_at: now,
    created_at: now,
    updated_at: now,
    archived_at: null,
    deleted_at: null,
    last_online_at: null,
    recovery_pending: null,
  }));
  const { db } = services.store;
  for (let start = 0; start < rows.length; start += 500) {
    const chunk = rows.slice(start, start + 500);
    await db.insertInto('screens').values(chunk).execute();
    await db
      .insertInto('screen_playlist_references')
      .values(
        chunk.map((r) => ({
          screen_id: r.id,
          tenant_id: tenantId,
          playlist_id: playlistId,
          role: 'assignment' as const,
          entry_id: '',
        })),
      )
      .execute();
  }
  return rows.map((r) => r.id);
}
