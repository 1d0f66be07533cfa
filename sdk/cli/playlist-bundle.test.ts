import { describe, expect, it } from 'vitest';
import type { Playlist } from '../contract/playlist';
import { mediaIdsOf, withMediaIds, writeDocumentOf } from './playlist-bundle';

const read = {
  id: 'pl_1',
  name: 'Loop',
  revision: 3,
  pages: [
    {
      id: 'one',
      canvas: { width: 1920, height: 1080, viewport_fit: 'contain', background: '#000000FF' },
      transition: { type: 'crossfade', duration_ms: 200 },
      advance: { mode: 'media_end', max_ms: 12000 },
      placements: [
        {
          id: 'clip',
          content: {
            type: 'video',
            selector: { by: 'ids', media_ids: ['med_a', 'med_b'], one_at_a_time: true },
            items: [
              { media_id: 'med_a', intrinsic_size: { width: 1, height: 1 } },
              { media_id: 'med_b', intrinsic_size: { width: 1, height: 1 } },
            ],
            muted: true,
            loop: false,
          },
          rect: { x: 0, y: 0, width: 1920, height: 1080 },
          layer: 0,
          content_fit: 'contain',
          controller: false,
        },
        {
          id: 'pic',
          content: {
            type: 'image',
            selector: { by: 'tag', tag: 'lobby', one_at_a_time: true },
            items: [{ media_id: 'med_c', intrinsic_size: { width: 1, height: 1 } }],
            dwell_ms: 5000,
          },
          rect: { x: 0, y: 0, width: 10, height: 10 },
          layer: 1,
          content_fit: 'cover',
          controller: false,
        },
      ],
    },
  ],
  audio: { tracks: [{ media_id: 'med_d', duration_ms: 1000 }] },
} as unknown as Playlist;

describe('playlist bundles', () => {
  it('collects every media the playlist shows: resolved items and the soundtrack', () => {
    expect(mediaIdsOf(read)).toEqual(['med_a', 'med_b', 'med_c', 'med_d']);
  });

  it('writes the document the server takes back: no response-only member, no computed deadline', () => {
    const written = writeDocumentOf(read);
    expect(written).toEqual({
      name: 'Loop',
      pages: [
        {
          id: 'one',
          canvas: read.pages[0]!.canvas,
          transition: read.pages[0]!.transition,
          advance: { mode: 'media_end' },
          placements: [
            {
              id: 'clip',
              content: {
                type: 'video',
                selector: { by: 'ids', media_ids: ['med_a', 'med_b'], one_at_a_time: true },
                muted: true,
                loop: false,
              },
              rect: { x: 0, y: 0, width: 1920, height: 1080 },
              layer: 0,
              content_fit: 'contain',
            },
            {
              id: 'pic',
              content: { type: 'image', selector: { by: 'tag', tag: 'lobby', one_at_a_time: true }, dwell_ms: 5000 },
              rect: { x: 0, y: 0, width: 10, height: 10 },
              layer: 1,
              content_fit: 'cover',
            },
          ],
        },
      ],
      audio: { tracks: [{ media_id: 'med_d' }] },
    });
  });

  it('rewrites media ids of id selectors and tracks, leaving tag selectors alone', () => {
    const map = new Map([
      ['med_a', 'med_x'],
      ['med_d', 'med_y'],
    ]);
    const rewritten = withMediaIds(writeDocumentOf(read), map);
    const clip = rewritten.pages[0]!.placements[0]!.content as { selector: { media_ids: string[] } };
    expect(clip.selector.media_ids).toEqual(['med_x', 'med_b']);
    expect(rewritten.audio?.tracks).toEqual([{ media_id: 'med_y' }]);
    expect(writeDocumentOf(read).audio?.tracks).toEqual([{ media_id: 'med_d' }]); // the input is not changed
  });
});
