// Start-up wiring of screenshots and screen health: the sweeps that record screenshot timeouts
// and announce presence changes (screen.online / screen.offline) without anyone asking.
import type { Services } from '../services';
import { PRESENCE_SWEEP_MS, sweepPresence, type PresenceDrift } from './screen-health';
import { dropDeletedScreenshots, expireScreenshots } from './screenshots';

/** A timed-out request's screen.screenshot_failed comes at most this late when nobody polls. */
const SCREENSHOT_SWEEP_MS = 5_000;
/** A deleted screen's last image is dropped within this (deletes are rare). */
const DELETED_SWEEP_MS = 10 * 60_000;

export function installScreenHealth(services: Services): void {
  Object.assign(services.features, { screen_screenshots: true, screen_health: true, screen_observation: true });
  const drift: PresenceDrift = new Map();
  services.housekeeping.every('screen-presence', PRESENCE_SWEEP_MS, () =>
    sweepPresence(services, drift, services.clock.now()),
  );
  services.housekeeping.every('screen-screenshots', SCREENSHOT_SWEEP_MS, () =>
    expireScreenshots(services, services.clock.now()),
  );
  services.housekeeping.every('deleted-screen-screenshots', DELETED_SWEEP_MS, () => dropDeletedScreenshots(services));
}
