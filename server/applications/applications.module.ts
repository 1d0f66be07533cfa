import type { Services } from '../services';
import { TERMINAL } from '../operations/worker';
import { uploadRunner } from './upload-runner';

/** Staged trees whose upload ended (a crash between its commit and the clean-up) are swept this often. */
const STAGING_SWEEP_MS = 10 * 60_000;

export function installApplications(services: Services): void {
  services.operations.register(uploadRunner(services));
  Object.assign(services.features, { applications: true });
  services.housekeeping.every('application-staging', STAGING_SWEEP_MS, () => sweepStagedTrees(services));
}

/** Removes staging areas that belong to no unfinished upload. */
export async function sweepStagedTrees(services: Services): Promise<void> {
  for (const name of await services.blobs.stagedTrees()) {
    const op = await services.store.db
      .selectFrom('operations')
      .select('state')
      .where('id', '=', name)
      .executeTakeFirst();
    if (!op || TERMINAL.has(op.state)) await services.blobs.discardTree(name);
  }
}
