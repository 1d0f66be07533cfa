// Start-up wiring of proof of play: the flag the CLI's doctor reads, and pruning of counted ids
// once their showings are older than any report the server still accepts.
import type { Services } from '../services';
import { pruneReports } from './playback';

const HOUSEKEEPING_EVERY_MS = 60 * 60_000;

export function installPlayback(services: Services): void {
  Object.assign(services.features, { proof_of_play: true });
  services.housekeeping.every('playback-reports', HOUSEKEEPING_EVERY_MS, async () => {
    await pruneReports(services, services.clock.now());
  });
}
