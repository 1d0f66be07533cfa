// Who references content: playlists that screens use make their media and applications "desired",
// so deleting them is refused; media and application changes re-resolve the playlists that use them.
// The runtime plane adds the "active" half (activated manifests) by wrapping this implementation.
import type { ContentReferences } from '../references';
import type { Services } from '../services';
import type { Work } from '../store/store';
import type { PlaylistDependencyKind } from './playlists.tables';
import { playlistReferencesLock, rematerialize } from './playlists';

/**
 * True when a playlist that a (not deleted) screen refers to, in any role, depends on this content.
 * First holds the references lock of every playlist that depends on it, which a new screen
 * reference takes before it reads whether the playlist is showable (checkAssignable). The caller
 * holds the content's own lock, so no playlist starts depending on it meanwhile.
 */
async function desired(work: Work, tenantId: string, kind: PlaylistDependencyKind, ref: string): Promise<boolean> {
  const naming = await work.db
    .selectFrom('playlist_dependencies')
    .select('playlist_id')
    .distinct()
    .where('tenant_id', '=', tenantId)
    .where('kind', '=', kind)
    .where('ref', '=', ref)
    .execute();
  await work.lock(...naming.map((r) => playlistReferencesLock(r.playlist_id)));
  const row = await work.db
    .selectFrom('playlist_dependencies')
    .innerJoin(
      'screen_playlist_references',
      'screen_playlist_references.playlist_id',
      'playlist_dependencies.playlist_id',
    )
    .innerJoin('screens', 'screens.id', 'screen_playlist_references.screen_id')
    .select('playlist_dependencies.playlist_id')
    .where('playlist_dependencies.tenant_id', '=', tenantId)
    .where('playlist_dependencies.kind', '=', kind)
    .where('playlist_dependencies.ref', '=', ref)
    .where('screens.state', '!=', 'deleted')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export function playlistReferences(services: Services): ContentReferences {
  return {
    applicationInUse: (work, tenantId, applicationId) => desired(work, tenantId, 'application', applicationId),
    mediaInUse: (work, tenantId, mediaId) => desired(work, tenantId, 'media', mediaId),
    mediaChanged: async (work, tenantId, change, now) => {
      await rematerialize(services, work, tenantId, { kind: 'media', change }, now);
    },
    applicationChanged: async (work, tenantId, applicationId, now) => {
      await rematerialize(services, work, tenantId, { kind: 'application', applicationId }, now);
    },
  };
}
