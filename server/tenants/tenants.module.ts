import type { Services } from '../services';
import { ISSUANCE_WINDOW_MS } from './tenants';

const CREDENTIAL_ROUTES = ['POST /api/v1/accounts', 'POST /api/v1/enrollments'];

export function installTenants(services: Services): void {
  Object.assign(services.features, { accounts: true, enrollments: true, projects: true, credits: true });
  // A recorded enrollment answer holds the encrypted one-time credential; once its delivery window
  // closed it is never replayed again, so the envelope is erased.
  services.housekeeping.every('credential-envelopes', 60_000, async () => {
    await services.store.db
      .updateTable('idempotency_records')
      .set({ body: null })
      .where('route', 'in', CREDENTIAL_ROUTES)
      .where('created_at', '<', services.clock.now() - ISSUANCE_WINDOW_MS)
      .where('body', 'is not', null)
      .execute();
  });
}
