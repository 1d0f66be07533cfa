// The live preview's manifest: the draft as the player's engine reads it (the runtime shape a screen
// gets), with every media `src` the dashboard's own content route for that media (same origin,
// authorized by the session cookie). Web pages and applications are left out: the dashboard's
// content policy frames nothing, and an application launch needs a screen's runtime session. A
// page left with nothing to show is kept, and the engine passes over it as it passes over a page
// whose media failed. Pure.
import {
  CANVAS_CONTRACT_VERSION,
  MANIFEST_SCHEMA_VERSION,
  type RuntimeManifest,
  type RuntimePage,
  type RuntimePlacement,
} from '../../../sdk/contract/manifest';
import type { Media } from '../../../sdk/contract/media';
import type { PlaylistMediaItem } from '../../../sdk/contract/playlist';
import { mediaContentPath } from './media-path';
import { itemKey, type PlaylistDraft } from './playlist-draft';

/** A media_end page whose server deadline is not known (a draft): the engine's backstop. */
export const PREVIEW_MEDIA_END_MAX_MS = 60_000;

const NO_HASH = '0'.repeat(64);

type ImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif';
type VideoType = 'video/mp4' | 'video/webm';

function runtimeItem(item: PlaylistMediaItem, media: Media | undefined, fallbackType: string) {
  return {
    mediaId: item.media_id,
    src: mediaContentPath(item.media_id),
    intrinsicSize: item.intrinsic_size,
    sha256: media?.sha256 ?? NO_HASH,
    bytes: media?.bytes ?? 1,
    contentType: media?.content_type ?? fallbackType,
  };
}

export interface PreviewInput {
  draft: PlaylistDraft;
  /** What each placement resolved to (`resolvedItems` of the playlist). */
  items: ReadonlyMap<string, PlaylistMediaItem[]>;
  media: ReadonlyMap<string, Media>;
  playlistId: string;
  playlistRevision: number;
  /** Names the manifest: a new one for every change, so the engine builds the draft afresh. */
  revision: number;
  timezone: string;
  now: Date;
}

export function previewManifest(input: PreviewInput): RuntimeManifest {
  const { draft, items, media } = input;
  const pages = draft.pages.map((page): RuntimePage => {
    const placements: RuntimePlacement[] = [];
    for (const p of page.placements) {
      const c = p.content;
      if (c.type !== 'image' && c.type !== 'video') continue;
      const resolved = items.get(itemKey(page.id, p.id)) ?? [];
      if (resolved.length === 0) continue;
      const base = { id: p.id, rect: p.rect, layer: p.layer, ...(p.enter ? { enter: p.enter } : {}) };
      const contentFit = p.content_fit;
      const oneAtATime = c.selector.one_at_a_time ?? false;
      if (c.type === 'image')
        placements.push({
          ...base,
          contentFit,
          content: {
            type: 'image',
            items: resolved.map((i) => {
              const item = runtimeItem(i, media.get(i.media_id), 'image/png');
              return { ...item, contentType: item.contentType as ImageType };
            }),
            oneAtATime,
            grantId: 'preview',
            ...(c.alt !== undefined ? { alt: c.alt } : {}),
            ...(c.dwell_ms !== undefined ? { dwellMs: c.dwell_ms } : {}),
          },
        });
      else
        placements.push({
          ...base,
          contentFit,
          content: {
            type: 'video',
            items: resolved.map((i) => {
              const item = runtimeItem(i, media.get(i.media_id), 'video/mp4');
              return { ...item, contentType: item.contentType as VideoType };
            }),
            oneAtATime,
            muted: true,
            loop: c.loop ?? false,
            grantId: 'preview',
          },
        });
    }
    const advance = page.advance;
    return {
      contractVersion: CANVAS_CONTRACT_VERSION,
      id: page.id,
      canvas: {
        width: page.canvas.width,
        height: page.canvas.height,
        viewportFit: page.canvas.viewport_fit ?? 'contain',
        background: page.canvas.background,
      },
      transition: { type: page.transition.type, durationMs: page.transition.duration_ms },
      advance:
        advance.mode === 'duration'
          ? { mode: 'duration', afterMs: advance.after_ms }
          : { mode: advance.mode, maxMs: advance.max_ms ?? PREVIEW_MEDIA_END_MAX_MS },
      ...(page.visibility ? { visibility: page.visibility } : {}),
      placements,
    };
  });
  const tracks = (draft.audio?.tracks ?? []).flatMap((t) => {
    const m = media.get(t.media_id);
    if (!m) return [];
    return [
      {
        mediaId: t.media_id,
        src: mediaContentPath(t.media_id),
        sha256: m.sha256,
        bytes: m.bytes,
        contentType: m.content_type as 'audio/mpeg',
        durationMs: m.duration_ms ?? 1,
      },
    ];
  });
  return {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    manifestRevision: `man_preview${input.revision}`,
    grantId: 'preview',
    contentGeneration: 0,
    screenId: 'preview',
    screenLabel: 'Preview',
    playlistId: input.playlistId,
    playlistRevision: input.playlistRevision,
    generatedAt: input.now.toISOString(),
    timezone: input.timezone,
    pages,
    ...(tracks.length > 0 ? { soundtrack: { grantId: 'preview', tracks } } : {}),
  };
}

/** Whether the preview can show anything of `page` (an image or video that resolved to media). */
export function previewable(page: RuntimePage): boolean {
  return page.placements.length > 0;
}
