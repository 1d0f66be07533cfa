// The page side of the media cache: records which media the activated manifest references and
// evicts what nothing referenced for the grace period. The service worker fills the cache.
import type { RuntimeManifest } from '../../../sdk/contract/manifest';
import { MEDIA_CACHE, mediaIdOfCacheKey, mediaToEvict } from './media-cache-policy';
import { referencedMedia, type PlayerDatabase } from './player-database';

export async function recordAndEvict(db: PlayerDatabase, manifests: RuntimeManifest[], now: number): Promise<string[]> {
  const referenced = new Set<string>();
  for (const manifest of manifests) for (const id of referencedMedia(manifest)) referenced.add(id);
  await db.touchMedia(referenced, now);
  if (typeof caches === 'undefined') return [];
  const cache = await caches.open(MEDIA_CACHE);
  const keys = await cache.keys();
  const cached = keys.map((k) => mediaIdOfCacheKey(k.url)).filter((id): id is string => id !== null);
  const known = await db.mediaReferences();
  // Cached before any record (an older player): start their clock now.
  const unrecorded = cached.filter((id) => !known.has(id));
  if (unrecorded.length > 0) await db.touchMedia(unrecorded, now);
  const evict = mediaToEvict(cached, referenced, known, now);
  for (const key of keys) {
    const id = mediaIdOfCacheKey(key.url);
    if (id !== null && evict.includes(id)) await cache.delete(key);
  }
  await db.forgetMedia(evict);
  return evict;
}

/**
 * The device no longer plays the screen whose media it holds (it must pair again, its screen is
 * gone, or it now plays another screen): drop the cached media and their references at once
 * rather than after the eviction grace, so a device handed on keeps nothing of its last owner.
 */
export async function forgetAllMedia(db: PlayerDatabase | null): Promise<void> {
  await db?.forgetAllMedia().catch(() => undefined);
  if (typeof caches !== 'undefined') await caches.delete(MEDIA_CACHE).catch(() => undefined);
}
