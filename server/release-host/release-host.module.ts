import type { Services } from '../services';
import { pruneLaunchTickets } from './launch-tickets';
import { RELEASE_GRANT_TTL_MS } from './release-grant-cookie';

const PRUNE_EVERY_MS = 5 * 60_000;

export function installReleaseHost(services: Services): void {
  Object.assign(services.features, { release_hosts: true });
  services.housekeeping.every('launch-tickets', PRUNE_EVERY_MS, async () => {
    const now = services.clock.now();
    await pruneLaunchTickets(services.store.db, now);
    // A revoked grant matters only while a cookie naming it could still be unexpired.
    await services.store.db
      .deleteFrom('release_grants')
      .where('revoked_at', '<=', now - RELEASE_GRANT_TTL_MS)
      .execute();
  });
}
