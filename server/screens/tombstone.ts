// A screen leaves for good: quota released, device credentials and runtime sessions revoked, its
// playlist references dropped, and the tombstone (state deleted) with its runtime notice. Owners
// delete from the control plane; a native player's signed identity reset ends here too.
import { revokeDevices, revokeRuntimeSessions } from '../pairing/pairing';
import type { Services } from '../services';
import type { Work } from '../store/store';
import { releaseScreen } from '../tenants/tenants';
import { changeScreen } from './screens';
import type { ScreenTable } from './screens.tables';

export async function tombstoneScreen(
  services: Services,
  work: Work,
  before: ScreenTable,
  how: string,
  now: number,
  requestId?: string,
): Promise<void> {
  if (before.state !== 'archived') await releaseScreen(work.db, before.tenant_id);
  await revokeDevices(work, before.id, now);
  await revokeRuntimeSessions(work, before.id, now);
  // A tombstone refers to nothing: its playlists may be deleted.
  await work.db.deleteFrom('screen_playlist_references').where('screen_id', '=', before.id).execute();
  await changeScreen(
    services.events,
    work,
    before,
    {
      set: { state: 'deleted', deleted_at: now },
      changes: ['state'],
      lifecycle: {
        type: 'screen.deleted',
        message: `screen deleted (${how}); its credentials and grants are revoked`,
        runtime: true,
      },
    },
    now,
    requestId,
  );
}
