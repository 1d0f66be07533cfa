// Which cached media to evict: those no manifest on this screen has referenced for a grace period
// (a playlist switched away and back soon keeps its media), never one the manifest on glass or the
// one being prepared references.

/** Media unreferenced for this long are evicted (a day: yesterday's playlist may come back). */
export const MEDIA_EVICTION_GRACE_MS = 24 * 3600_000;

export const MEDIA_CACHE = 'marquee-media-v1';
/** Cache entries are keyed by media id (media bytes never change under an id), not by the manifest URL. */
export const MEDIA_CACHE_PREFIX = '/__marquee/media/';
export const MEDIA_ROUTE = /^\/content\/v1\/manifests\/[A-Za-z0-9_-]+\/media\/(med_[A-Za-z0-9_-]+)$/;

export function mediaCacheKey(origin: string, mediaId: string): string {
  return `${origin}${MEDIA_CACHE_PREFIX}${mediaId}`;
}

export function mediaIdOfCacheKey(url: string): string | null {
  const path = new URL(url).pathname;
  return path.startsWith(MEDIA_CACHE_PREFIX) ? path.slice(MEDIA_CACHE_PREFIX.length) : null;
}

/**
 * The cached media ids to evict at `now`. `lastReferenced` maps a media id to the last time a
 * manifest referenced it; an id never recorded is treated as referenced now (it was cached by a
 * manifest this policy has not heard of yet) and is left for the next round.
 */
export function mediaToEvict(
  cached: readonly string[],
  referenced: ReadonlySet<string>,
  lastReferenced: ReadonlyMap<string, number>,
  now: number,
  graceMs = MEDIA_EVICTION_GRACE_MS,
): string[] {
  return cached.filter((id) => {
    if (referenced.has(id)) return false;
    const last = lastReferenced.get(id);
    return last !== undefined && now - last >= graceMs;
  });
}
