// Lockstep fields of a screen (issue 15): its sync group and, on a video wall, the region of the
// canvas it shows. A region belongs to a group's composition, so it needs a group; leaving the
// group leaves the wall too. Both change what the player must show (the manifest carries them).
import type { ScreenPatch, WallRegion } from '../../sdk/contract/screens';
import { invalidField } from '../problem';
import { json } from '../store/store';
import type { ScreenChange } from './screens';
import type { ScreenTable } from './screens.tables';

/** The stored form of a region: its four numbers in a fixed order, so equal regions compare equal. */
function storedRegion(region: WallRegion | null): string | null {
  return region === null ? null : json.write({ x: region.x, y: region.y, width: region.width, height: region.height });
}

/** Adds to `change` the lockstep fields of `patch` that differ from the screen. */
export function lockstepChanges(
  patch: ScreenPatch,
  before: ScreenTable,
  change: ScreenChange & { set: NonNullable<ScreenChange['set']> },
): void {
  const group = patch.sync_group === undefined ? before.sync_group : patch.sync_group;
  let region = patch.wall_region === undefined ? before.wall_region : storedRegion(patch.wall_region);
  if (patch.sync_group === null && patch.wall_region === undefined) region = null;
  if (region !== null && group === null)
    throw invalidField('wall_region', 'needs a sync_group: a wall region is a part of its group’s composition');
  if (group !== before.sync_group) {
    change.set.sync_group = group;
    change.changes.push('sync_group');
  }
  if (region !== before.wall_region) {
    change.set.wall_region = region;
    change.changes.push('wall_region');
  }
}
