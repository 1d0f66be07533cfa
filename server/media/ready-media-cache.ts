// Ready media as the byte routes read them (the export, /content/v1): only what delivery needs,
// kept for at most READY_MEDIA_CACHE_MS: a 64 KiB range is answered in a fraction of a
// millisecond, and its media row was a query of its own. An update that sets one of the columns
// held here (state, bytes, digest, type, blob key, owner) or a delete of a media row empties the
// cache as the statement runs (a WatchedCache over Store.watchWrites), so a deleted media is
// not_found at once here; a retag or any other column's update keeps it. Another replica's
// deletion arrives relayed over the notifier (D-386), within a second, and within the lifetime at
// the latest (its bytes are removed only after that deletion commits, and a descriptor already
// open still reads them, D-336).
import { problem } from '../problem';
import type { Store } from '../store/store';
import { watchedCache } from '../store/watched-cache';
import type { MediaTable } from './media.tables';

export const READY_MEDIA_CACHE_MS = 5_000;
const MAX_CACHED_MEDIA = 10_000;

/** What the byte routes read of a ready media. */
export type ReadyMediaBytes = Pick<MediaTable, 'id' | 'content_type' | 'bytes' | 'sha256' | 'blob_key'>;

/** The columns held (besides those the lookup filters on: tenant and state). */
const HELD = ['id', 'content_type', 'bytes', 'sha256', 'blob_key'] as const;

export const readyMediaCache = watchedCache<ReadyMediaBytes | undefined>('ready-media', {
  ttlMs: READY_MEDIA_CACHE_MS,
  maxEntries: MAX_CACHED_MEDIA,
  watches: [{ table: 'media', columns: [...HELD, 'tenant_id', 'state'] }],
});

/** A ready media of the tenant (not_found otherwise), from the cache when fresh. */
export async function cachedReadyMedia(store: Store, tenantId: string, id: string): Promise<ReadyMediaBytes> {
  const key = `${tenantId}\u0000${id}`;
  // Nothing is cached for an unknown media: it may become ready any moment.
  const row = await readyMediaCache(store).get(
    key,
    () =>
      store.db
        .selectFrom('media')
        .select(HELD)
        .where('id', '=', id)
        .where('tenant_id', '=', tenantId)
        .where('state', '=', 'ready')
        .executeTakeFirst(),
    (found) => found !== undefined,
  );
  if (!row) throw problem('not_found', 'media not found');
  return row;
}
