// Start-up wiring of the runtime plane: advertised features, and the housekeeping of old
// manifests, orphaned packages and key/value tombstones. (Its active content references are
// composed in modules.ts; screen presence is services.presence.)
import { pruneKv } from '../kv/kv';
import type { Services } from '../services';
import { SUPERSEDED_MANIFEST_GRACE_MS } from '../manifests/manifest-store';

/** Superseded manifests nobody shows are kept a day past their grace (support, late reports), then pruned. */
const MANIFEST_RETENTION_MS = 24 * 3600_000 + SUPERSEDED_MANIFEST_GRACE_MS;
const PRUNE_BATCH = 500;
const HOUSEKEEPING_EVERY_MS = 10 * 60_000;

export function installRuntime(services: Services): void {
  Object.assign(services.features, {
    runtime_manifest: true,
    runtime_reports: true,
    protected_media: true,
    application_packages: true,
    runtime_kv: true,
    owner_kv: true,
  });
  services.housekeeping.every('runtime-manifests', HOUSEKEEPING_EVERY_MS, () =>
    pruneManifests(services, services.clock.now()),
  );
  services.housekeeping.every('kv-entries', HOUSEKEEPING_EVERY_MS, () => pruneKv(services, services.clock.now()));
}

/** Drops superseded manifests past retention that are not active, manifests of deleted screens, and packages of deleted releases. */
export async function pruneManifests(services: Services, now: number): Promise<void> {
  const { db } = services.store;
  const stale = await db
    .selectFrom('runtime_manifests')
    .innerJoin('screens', 'screens.id', 'runtime_manifests.screen_id')
    .leftJoin('screen_runtime_state', 'screen_runtime_state.screen_id', 'runtime_manifests.screen_id')
    .select(['runtime_manifests.screen_id', 'runtime_manifests.manifest_revision'])
    .where((eb) =>
      eb.or([
        eb('screens.state', '=', 'deleted'),
        eb.and([
          eb('runtime_manifests.superseded_at', '<', now - MANIFEST_RETENTION_MS),
          eb.or([
            eb('screen_runtime_state.active_manifest_revision', 'is', null),
            eb('screen_runtime_state.active_manifest_revision', '!=', eb.ref('runtime_manifests.manifest_revision')),
          ]),
        ]),
      ]),
    )
    .limit(PRUNE_BATCH)
    .execute();
  for (const m of stale) {
    await services.store.transaction(async ({ db: tx }) => {
      await tx
        .deleteFrom('runtime_manifest_content')
        .where('screen_id', '=', m.screen_id)
        .where('manifest_revision', '=', m.manifest_revision)
        .execute();
      await tx
        .deleteFrom('runtime_manifests')
        .where('screen_id', '=', m.screen_id)
        .where('manifest_revision', '=', m.manifest_revision)
        .execute();
    });
  }
  await db
    .deleteFrom('release_packages')
    .where('release_id', 'in', db.selectFrom('releases').select('id').where('deleted_at', 'is not', null))
    .execute();
}
