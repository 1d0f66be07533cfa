// Start-up wiring of native players: the advertised feature, and the housekeeping that retires
// keys whose recovery grace ended (their device credential and sessions go with them) and drops
// spent or lapsed proof challenges.
import type { Services } from '../services';
import { sweepBrowserLinks } from './browser-links';

const HOUSEKEEPING_EVERY_MS = 60_000;

export function installNative(services: Services): void {
  Object.assign(services.features, { native_pairing: true, screen_recovery: true });
  services.housekeeping.every('native-identities', HOUSEKEEPING_EVERY_MS, () =>
    retireKeys(services, services.clock.now()),
  );
  // Browser links share the module: setup codes nobody can use any more, deliveries past their window.
  Object.assign(services.features, { browser_links: true });
  services.housekeeping.every('browser-links', HOUSEKEEPING_EVERY_MS, () =>
    sweepBrowserLinks(services.store.db, services.clock.now()),
  );
}

export async function retireKeys(services: Services, now: number): Promise<void> {
  await services.store.transaction(async ({ db }) => {
    const retired = await db
      .selectFrom('native_identities')
      .select(['kid', 'device_id'])
      .where('retires_at', '<=', now)
      .execute();
    for (const identity of retired) {
      await db
        .updateTable('screen_devices')
        .set({ status: 'revoked', revoked_at: now })
        .where('id', '=', identity.device_id)
        .execute();
      await db
        .updateTable('runtime_sessions')
        .set({ revoked_at: now })
        .where('device_id', '=', identity.device_id)
        .where('revoked_at', 'is', null)
        .execute();
      await db.deleteFrom('native_identities').where('kid', '=', identity.kid).execute();
    }
    await db.deleteFrom('native_identity_challenges').where('expires_at', '<=', now).execute();
  });
}
