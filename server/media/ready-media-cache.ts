// Ready media rows as the byte routes read them (the export, /content/v1), kept for at most
// READY_MEDIA_CACHE_MS: a 64 KiB range is answered in a fraction of a millisecond, and its media
// row was a query of its own. Any update or delete of a media row by this process empties the
// cache as the statement runs (Store.watchWrites), so a deleted media is not_found at once here;
// another replica's deletion is seen within the lifetime (its bytes are removed only after that
// deletion commits, and a descriptor already open still reads them, D-336).
import { serverCache } from '../caches';
import type { Store } from '../store/store';
import type { MediaTable } from './media.tables';
import { readyMedia } from './media';

export const READY_MEDIA_CACHE_MS = 5_000;
const MAX_CACHED_MEDIA = 10_000;

class ReadyMediaCache {
  private readonly rows = new Map<string, { row: MediaTable; until: number }>();
  private generation = 0;

  constructor(private readonly store: Store) {
    store.watchWrites('media', undefined, () => {
      this.generation++;
      this.rows.clear();
    });
  }

  async find(tenantId: string, id: string): Promise<MediaTable> {
    const key = `${tenantId}\u0000${id}`;
    const now = performance.now();
    const hit = this.rows.get(key);
    if (hit && hit.until > now) return hit.row;
    const generation = this.generation;
    // Throws not_found (nothing is cached for it).
    const row = await readyMedia(this.store.db, tenantId, id);
    if (generation === this.generation) {
      this.rows.delete(key);
      if (this.rows.size >= MAX_CACHED_MEDIA) this.rows.delete(this.rows.keys().next().value!);
      this.rows.set(key, { row, until: now + READY_MEDIA_CACHE_MS });
    }
    return row;
  }
}

const cacheOf = serverCache('ready-media', (store: Store) => new ReadyMediaCache(store));

/** A ready media of the tenant, as readyMedia answers it (not_found otherwise), from the cache when fresh. */
export function cachedReadyMedia(store: Store, tenantId: string, id: string): Promise<MediaTable> {
  return cacheOf(store).find(tenantId, id);
}
