// A playlist's pages in words, for the playlist page: what each placement shows and how a page
// advances. Pure.
import type { Advance, Placement, Playlist } from '../../../sdk/contract/playlist';
import { duration } from '../app/format';

export function placementSummary(placement: Placement): string {
  const content = placement.content;
  switch (content.type) {
    case 'image':
      return content.items.length === 1 ? 'Image' : `Images (${content.items.length}, in turn)`;
    case 'video':
      return content.items.length === 1 ? 'Video' : `Videos (${content.items.length}, in turn)`;
    case 'iframe':
      return `Web page: ${content.title}`;
    case 'application':
      return 'Application';
  }
}

export function advanceSummary(advance: Advance): string {
  switch (advance.mode) {
    case 'duration':
      return `${duration(advance.after_ms)} on glass`;
    case 'media_end':
      return `until its media end (at most ${duration(advance.max_ms)})`;
    case 'application':
      return `until the application moves on (at most ${duration(advance.max_ms)})`;
  }
}

/** Every media id the playlist shows (resolved selectors and soundtrack). */
export function mediaIdsOf(playlist: Playlist): Set<string> {
  const ids = new Set<string>();
  for (const page of playlist.pages)
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video')
        for (const item of content.items) ids.add(item.media_id);
    }
  for (const track of playlist.audio?.tracks ?? []) ids.add(track.media_id);
  return ids;
}

/** The playlists that show a media: the ones a delete must explain. */
export function playlistsUsing(playlists: readonly Playlist[], mediaId: string): Playlist[] {
  return playlists.filter((p) => mediaIdsOf(p).has(mediaId));
}
