// The write document of a playlist as the server answered it: what `PUT /api/v1/playlists/{id}`
// would take back. Response-only members (revisions, resolved items, a media_end page's computed
// deadline, track lengths) are left out, as the server would refuse them. Pure; shared by the CLI's
// export and the dashboard's editor.
import type { PageWrite, Placement, PlacementWrite, Playlist, PlaylistWrite } from './playlist';

function placementWrite(p: Placement): PlacementWrite {
  const c = p.content;
  const content: PlacementWrite['content'] =
    c.type === 'image'
      ? {
          type: 'image',
          selector: c.selector,
          ...(c.alt !== undefined ? { alt: c.alt } : {}),
          ...(c.dwell_ms !== undefined ? { dwell_ms: c.dwell_ms } : {}),
        }
      : c.type === 'video'
        ? { type: 'video', selector: c.selector, muted: true, loop: c.loop }
        : c.type === 'iframe'
          ? { type: 'iframe', src: c.src, title: c.title }
          : { type: 'application', release_id: c.release_id, application_id: c.application_id };
  return {
    id: p.id,
    content,
    rect: p.rect,
    layer: p.layer,
    content_fit: p.content_fit,
    // `controller` is an application placement's member only (elsewhere it is response-only).
    ...(c.type === 'application' ? { controller: p.controller } : {}),
    ...(p.enter ? { enter: p.enter } : {}),
  };
}

/** The write document of a playlist as read (an empty soundtrack is left out: `audio` needs a track). */
export function writeDocumentOf(playlist: Playlist): PlaylistWrite {
  return {
    name: playlist.name,
    pages: playlist.pages.map(
      (page): PageWrite => ({
        id: page.id,
        canvas: page.canvas,
        transition: page.transition,
        // A media_end page's max_ms in an answer is the server's deadline from its media's lengths,
        // not the author's: written back it would become a hint that outlives those media.
        advance: page.advance.mode === 'media_end' ? { mode: 'media_end' } : page.advance,
        ...(page.visibility ? { visibility: page.visibility } : {}),
        placements: page.placements.map(placementWrite),
      }),
    ),
    ...(playlist.audio && playlist.audio.tracks.length > 0
      ? { audio: { tracks: playlist.audio.tracks.map((t) => ({ media_id: t.media_id })) } }
      : {}),
  };
}
