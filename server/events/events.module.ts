import type { Services } from '../services';
import { pruneEvents, RETENTION_EVERY_MS } from './retention';

export function installEvents(services: Services): void {
  Object.assign(services.features, { events: true, event_streams: true });
  services.housekeeping.every('event-retention', RETENTION_EVERY_MS, async () => {
    const pruned = await pruneEvents(services.store, services.clock.now(), services.config.eventRetentionDays);
    if (pruned > 0) services.logger.info({ pruned }, 'pruned events past retention');
  });
}
