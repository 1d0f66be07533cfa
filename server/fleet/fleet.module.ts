// Start-up wiring of fleet control: advertised features and the retention of pinned fleet actions.
import type { Services } from '../services';
import { pruneFleetRecords } from './fleet-actions';

const HOUSEKEEPING_EVERY_MS = 10 * 60_000;

export function installFleet(services: Services): void {
  Object.assign(services.features, {
    screen_actions: true,
    screen_playlist_schedules: true,
    screen_takeovers: true,
    screen_toasts: true,
    screen_display: true,
    screen_reboot: true,
  });
  services.housekeeping.every('fleet-actions', HOUSEKEEPING_EVERY_MS, () =>
    pruneFleetRecords(services.store.db, services.clock.now()),
  );
}
