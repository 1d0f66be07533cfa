// Start-up wiring of people and access: advertised features, and the housekeeping of ended
// dashboard sessions, signups, ceremonies, sign-in resets and agent connections.
import { expireConnections } from '../agents/agent-connections';
import type { Services } from '../services';
import { pruneDashboardRows } from './dashboard-sessions';

const HOUSEKEEPING_EVERY_MS = 60_000;
/** Ended sign-in resets are kept a day for support, then removed. */
const ENDED_RESET_GRACE_MS = 24 * 3600_000;

export function installPeople(services: Services): void {
  Object.assign(services.features, {
    members: true,
    invitations: true,
    sign_in_resets: true,
    passkeys: true,
    agent_connections: true,
    billing: true,
  });
  services.housekeeping.every('dashboard-records', HOUSEKEEPING_EVERY_MS, async () => {
    const now = services.clock.now();
    await pruneDashboardRows(services.store.db, now);
    await services.store.db
      .deleteFrom('sign_in_resets')
      .where('expires_at', '<', now - ENDED_RESET_GRACE_MS)
      .execute();
  });
  services.housekeeping.every('agent-connections', HOUSEKEEPING_EVERY_MS, async () => {
    await expireConnections(services.store, services.clock.now());
  });
}
