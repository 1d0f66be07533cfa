// The read-only playlist view's words, and which playlists a media delete must name.
import { describe, expect, it } from 'vitest';
import type { Placement, Playlist } from '../../../sdk/contract/playlist';
import { advanceSummary, placementSummary, playlistsUsing } from './playlist-summary';

const imagePlacement = (...ids: string[]) =>
  ({
    id: 'p',
    content: {
      type: 'image',
      selector: { by: 'tag', tag: 'x' },
      items: ids.map((media_id) => ({ media_id, intrinsic_size: { width: 1, height: 1 } })),
    },
  }) as unknown as Placement;

const playlist = (id: string, placements: Placement[], audio?: string): Playlist =>
  ({
    id,
    name: id,
    revision: 1,
    pages: [{ id: 'p1', placements }],
    ...(audio ? { audio: { tracks: [{ media_id: audio }] } } : {}),
  }) as unknown as Playlist;

describe('playlist summaries', () => {
  it('says what a placement shows', () => {
    expect(placementSummary(imagePlacement('m1'))).toBe('Image');
    expect(placementSummary(imagePlacement('m1', 'm2'))).toBe('Images (2, in turn)');
    expect(
      placementSummary({ content: { type: 'iframe', src: 'https://x', title: 'Ticker' } } as unknown as Placement),
    ).toBe('Web page: Ticker');
  });

  it('says how a page advances', () => {
    expect(advanceSummary({ mode: 'duration', after_ms: 8000 })).toBe('8 s on glass');
    expect(advanceSummary({ mode: 'media_end', max_ms: 90_000 })).toBe('until its media end (at most 1 min 30 s)');
  });
});

describe('playlistsUsing', () => {
  it('names the playlists whose resolved items or soundtrack hold the media', () => {
    const all = [
      playlist('lobby', [imagePlacement('m1', 'm2')]),
      playlist('music', [imagePlacement('m3')], 'm1'),
      playlist('other', [imagePlacement('m3')]),
    ];
    expect(playlistsUsing(all, 'm1').map((p) => p.id)).toEqual(['lobby', 'music']);
    expect(playlistsUsing(all, 'm9')).toEqual([]);
  });
});
