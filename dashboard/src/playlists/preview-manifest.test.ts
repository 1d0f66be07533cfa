// The live preview's manifest: the draft in the runtime shape, in the draft's order, with media
// from the dashboard's own content route.
import { describe, expect, it } from 'vitest';
import { RuntimeManifest } from '../../../sdk/contract/manifest';
import type { Media } from '../../../sdk/contract/media';
import type { Playlist } from '../../../sdk/contract/playlist';
import { draftOf, movedTo, resolvedItems } from './playlist-draft';
import { answer } from './playlist.fixtures';
import { previewManifest, previewable } from './preview-manifest';

const media = (id: string, content_type: string, extra: Partial<Media> = {}) =>
  [id, { id, content_type, sha256: 'a'.repeat(64), bytes: 1000, kind: 'image', ...extra } as unknown as Media] as const;

const library = new Map([
  media('med_a', 'image/jpeg'),
  media('med_b', 'image/png'),
  media('med_c', 'image/png'),
  media('med_song', 'audio/mpeg', { kind: 'audio', duration_ms: 120_000 }),
]);

const build = (playlist: Playlist, draft = draftOf(playlist)) =>
  previewManifest({
    draft,
    items: resolvedItems(playlist),
    media: library,
    playlistId: playlist.id,
    playlistRevision: playlist.revision,
    revision: 7,
    timezone: 'Europe/Paris',
    now: new Date('2026-11-27T12:00:00Z'),
  });

describe('previewManifest', () => {
  it('is a manifest the runtime contract accepts, media served by the dashboard', () => {
    const manifest = build(answer);
    const parsed = RuntimeManifest.safeParse(manifest);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const first = manifest.pages[0]!.placements[0]!;
    expect(first.content.type === 'image' && first.content.items[0]).toMatchObject({
      mediaId: 'med_a',
      src: '/dashboard/v1/media/med_a/content',
      contentType: 'image/jpeg',
    });
    expect(manifest.soundtrack?.tracks.map((t) => t.src)).toEqual(['/dashboard/v1/media/med_song/content']);
    expect(manifest.manifestRevision).toBe('man_preview7');
  });

  it('plays the pages in the draft’s order, each with its own media', () => {
    const draft = draftOf(answer);
    const manifest = build(answer, { ...draft, pages: movedTo(draft.pages, 2, 0) });
    expect(manifest.pages.map((p) => p.id)).toEqual(['evening', 'morning', 'noon']);
    const first = manifest.pages[0]!.placements[0]!;
    expect(first.content.type === 'image' && first.content.items[0]!.mediaId).toBe('med_c');
    expect(manifest.pages[0]!.advance).toEqual({ mode: 'duration', afterMs: 8000 });
  });

  it('leaves out web pages, so a page of only a web page has nothing to preview', () => {
    const withFrame = {
      ...answer,
      pages: [
        ...answer.pages,
        {
          ...answer.pages[0]!,
          id: 'news',
          placements: [
            {
              id: 'site',
              content: { type: 'iframe', src: 'https://example.com/', title: 'News' },
              rect: { x: 0, y: 0, width: 1920, height: 1080 },
              layer: 0,
              content_fit: 'fill',
              controller: false,
            },
          ],
        },
      ],
    } as Playlist;
    const manifest = build(withFrame);
    expect(manifest.pages.map((p) => previewable(p))).toEqual([true, true, true, false]);
  });
});
