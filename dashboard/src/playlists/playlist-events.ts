// Whether the live event log says a playlist changed past the revision the page holds (an agent or
// the CLI applied a change, perhaps the one downloaded here). Pure.
import type { EventRecord } from '../../../sdk/contract/events';

export type PlaylistNews = { kind: 'updated'; revision: number } | { kind: 'deleted' } | null;

/** The newest news of `playlistId` past `revision` in `events` (newest first), or null. */
export function playlistNews(events: readonly EventRecord[], playlistId: string, revision: number): PlaylistNews {
  for (const event of events) {
    if (event.resource?.type !== 'playlist' || event.resource.id !== playlistId) continue;
    if (event.type === 'playlist.deleted') return { kind: 'deleted' };
    const later = event.details?.revision;
    if (event.type === 'playlist.updated' && typeof later === 'number' && later > revision)
      return { kind: 'updated', revision: later };
  }
  return null;
}
