import type { Services } from '../services';

export function installTenants(services: Services): void {
  Object.assign(services.features, { accounts: true, enrollments: true, projects: true, credits: true });
}
