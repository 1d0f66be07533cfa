// Pieces of the playlist documents the playback specs assign (control-plane wire shapes).

export const fullRect = { x: 0, y: 0, width: 1920, height: 1080 };

export const canvas = (background: unknown) => ({ width: 1920, height: 1080, viewport_fit: 'contain', background });

/** A full-canvas image placement of one media item. */
export const image = (id: string, mediaId: string, extra: Record<string, unknown> = {}) => ({
  id,
  content: { type: 'image', selector: { by: 'id', media_id: mediaId }, alt: id },
  rect: fullRect,
  layer: 0,
  content_fit: 'cover',
  ...extra,
});

/** A page of one full-canvas image, shown for `afterMs`. */
export const imagePage = (id: string, mediaId: string, afterMs: number, extra: Record<string, unknown> = {}) => ({
  id,
  canvas: canvas('#000000FF'),
  transition: { type: 'crossfade', duration_ms: 300 },
  advance: { mode: 'duration', after_ms: afterMs },
  placements: [image(id, mediaId)],
  ...extra,
});
