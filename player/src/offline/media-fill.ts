// The service worker's fill of the media cache ahead of playback: every medium a manifest plays
// that the cache lacks, fetched whole, one at a time. A full disk must not cost bandwidth: a medium
// that cannot fit is not downloaded, and the first answer the quota refuses ends the pass.
import { MEDIA_ROUTE, mediaCacheKey } from './media-cache-policy';

export interface MediaToFill {
  mediaId: string;
  url: string;
  /** The medium's size (the manifest's `bytes`), to judge before downloading whether it fits. */
  bytes?: number;
}

export interface MediaFillDeps {
  cache: { match(key: string): Promise<Response | undefined>; put(key: string, response: Response): Promise<void> };
  fetch(url: string): Promise<Response>;
  /** Bytes the origin may still store (navigator.storage.estimate), null when the browser does not say. */
  free(): Promise<number | null>;
  origin: string;
}

/** Media being fetched by a fill: the element's own request for one is not stored a second time. */
export const filling = new Set<string>();

export async function fillMediaCache(items: readonly MediaToFill[], deps: MediaFillDeps): Promise<void> {
  for (const { mediaId, url, bytes } of items) {
    if (!MEDIA_ROUTE.test(new URL(url, deps.origin).pathname)) continue;
    const key = mediaCacheKey(deps.origin, mediaId);
    if (filling.has(mediaId) || (await deps.cache.match(key))) continue;
    const free = await deps.free().catch(() => null);
    if (free !== null && bytes !== undefined && bytes > free) continue;
    filling.add(mediaId);
    try {
      const response = await deps.fetch(url);
      if (response.status === 200 && mayKeep(response)) await deps.cache.put(key, response);
      else await response.body?.cancel();
    } catch (error) {
      // The rest would be downloaded only to be refused as well.
      if (error instanceof DOMException && error.name === 'QuotaExceededError') return;
      // Offline or refused: the element's own request, or the next manifest, tries again.
    } finally {
      filling.delete(mediaId);
    }
  }
}

/**
 * Whether a media answer may be kept. A kiosk agent answers `no-store`: its disk mirror is the
 * screen's copy, within its budget, and a second one in this cache would sit outside it (D-411).
 */
export function mayKeep(response: Response): boolean {
  return !/(^|,)\s*no-store\s*(,|$)/i.test(response.headers.get('cache-control') ?? '');
}
