// Start-up wiring of playlists, screens and pairing: advertised features, and the housekeeping of
// expired pairing, runtime-session and provisioning records. (Their content-reference answers are
// composed in modules.ts.)
import type { Services } from '../services';

/** Expired pairing sessions and runtime sessions are kept a day for support, then removed. */
const EXPIRED_RECORD_GRACE_MS = 24 * 3600_000;
const HOUSEKEEPING_EVERY_MS = 60_000;

export function installScreens(services: Services): void {
  Object.assign(services.features, {
    playlists: true,
    playlists_v2: true,
    playlist_audio: true,
    screens: true,
    screen_pairing: true,
    browser_provisioning: true,
    screen_reload: true,
  });
  services.housekeeping.every('pairing-records', HOUSEKEEPING_EVERY_MS, async () => {
    const now = services.clock.now();
    const { db } = services.store;
    await db
      .deleteFrom('pairing_sessions')
      .where('expires_at', '<', now - EXPIRED_RECORD_GRACE_MS)
      .execute();
    await db
      .deleteFrom('runtime_sessions')
      .where('expires_at', '<', now - EXPIRED_RECORD_GRACE_MS)
      .execute();
  });
}
