// The benchmark registry: one entry per file under bench/.
import { archiveUpload } from './archive.bench';
import { controlPlaneThroughput } from './control-plane.bench';
import { creditMeterDebits } from './credit-meter.bench';
import { eventFanOut } from './events.bench';
import { lockstepPlayback } from './lockstep.bench';
import { fleetActions, fleetActionsPostgres } from './fleet.bench';
import { mediaRangedExport } from './media.bench';
import { manifestNotModified } from './manifest.bench';
import { playerPlayback } from './player.bench';
import { playbackIngest } from './playback.bench';
import { remintAtFleetScale } from './remint.bench';
import { kioskAgent } from './kiosk.bench';
import { dashboardBundle } from './dashboard-bundle.bench';
import { dashboardLists } from './dashboard-lists.bench';
import { replicaState } from './replica-state.bench';
import { streamChurn } from './stream-churn.bench';

export const benchmarks: Record<string, () => Promise<void>> = {
  'control-plane': controlPlaneThroughput,
  events: eventFanOut,
  media: mediaRangedExport,
  archive: archiveUpload,
  manifest: manifestNotModified,
  'credit-meter': creditMeterDebits,
  player: playerPlayback,
  lockstep: lockstepPlayback,
  remint: remintAtFleetScale,
  kiosk: kioskAgent,
  fleet: fleetActions,
  'fleet-pg': fleetActionsPostgres,
  playback: playbackIngest,
  'dashboard-bundle': dashboardBundle,
  'dashboard-lists': dashboardLists,
  'stream-churn': streamChurn,
  'replica-state': replicaState,
};
