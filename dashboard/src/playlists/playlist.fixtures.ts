// A playlist as the server answers it, for the editor's tests: three pages of one image each and a soundtrack.
import type { Playlist } from '../../../sdk/contract/playlist';

const page = (id: string, media: string, extra: Record<string, unknown> = {}) => ({
  id,
  canvas: { width: 1920, height: 1080, viewport_fit: 'contain', background: '#000000FF' },
  transition: { type: 'crossfade', duration_ms: 300 },
  advance: { mode: 'duration', after_ms: 8000 },
  placements: [
    {
      id: 'pic',
      content: {
        type: 'image',
        selector: { by: 'id', media_id: media, one_at_a_time: false },
        items: [{ media_id: media, intrinsic_size: { width: 1920, height: 1080 } }],
        alt: 'a picture',
      },
      rect: { x: 0, y: 0, width: 1920, height: 1080 },
      layer: 0,
      content_fit: 'cover',
      controller: false,
    },
  ],
  ...extra,
});

export const answer = {
  id: 'pl_1',
  name: 'Lobby',
  revision: 3,
  pages: [page('morning', 'med_a'), page('noon', 'med_b'), page('evening', 'med_c')],
  audio: { tracks: [{ media_id: 'med_song', duration_ms: 120_000 }] },
} as unknown as Playlist;
