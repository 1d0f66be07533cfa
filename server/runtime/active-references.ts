// The "active" half of content references: media and applications stay in use while a screen's
// player has activated a manifest that shows them (its active grant), besides the "desired" rules
// of the playlists feature, which this wraps. Archived and deleted screens hold no active grant.
import type { ContentReferences } from '../references';
import type { Db, Tx } from '../store/store';
import type { ManifestContentKind } from './runtime.tables';

async function activelyShown(db: Db | Tx, tenantId: string, kind: ManifestContentKind, ref: string): Promise<boolean> {
  const row = await db
    .selectFrom('screen_runtime_state')
    .innerJoin('runtime_manifest_content', (join) =>
      join
        .onRef('runtime_manifest_content.screen_id', '=', 'screen_runtime_state.screen_id')
        .onRef('runtime_manifest_content.manifest_revision', '=', 'screen_runtime_state.active_manifest_revision'),
    )
    .innerJoin('screens', 'screens.id', 'screen_runtime_state.screen_id')
    .select('screen_runtime_state.screen_id')
    .where('screen_runtime_state.tenant_id', '=', tenantId)
    .where('runtime_manifest_content.kind', '=', kind)
    .where('runtime_manifest_content.ref', '=', ref)
    .where('screens.state', 'in', ['pairing_pending', 'active'])
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export function withActiveGrants(desired: ContentReferences): ContentReferences {
  return {
    applicationInUse: async (work, tenantId, applicationId) =>
      (await desired.applicationInUse(work, tenantId, applicationId)) ||
      activelyShown(work.db, tenantId, 'application', applicationId),
    mediaInUse: async (work, tenantId, mediaId) =>
      (await desired.mediaInUse(work, tenantId, mediaId)) || activelyShown(work.db, tenantId, 'media', mediaId),
    mediaChanged: (work, tenantId, change, now) => desired.mediaChanged(work, tenantId, change, now),
    applicationChanged: (work, tenantId, applicationId, now) =>
      desired.applicationChanged(work, tenantId, applicationId, now),
  };
}
