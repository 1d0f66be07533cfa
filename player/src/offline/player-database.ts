// The player's IndexedDB (idb): the last manifest it activated (played when the server is down at
// start) and when each media id was last referenced (for cache eviction).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { RuntimeManifest } from '../../../sdk/contract/manifest';

export interface StoredManifest {
  manifest: RuntimeManifest;
  etag: string | null;
  activatedAt: number;
}

interface PlayerSchema extends DBSchema {
  manifests: { key: 'active'; value: StoredManifest };
  'media-references': { key: string; value: { mediaId: string; lastReferencedAt: number } };
}

const DB_NAME = 'marquee-player';
const DB_VERSION = 1;

export class PlayerDatabase {
  private constructor(private readonly db: IDBPDatabase<PlayerSchema>) {}

  static async open(): Promise<PlayerDatabase> {
    const db = await openDB<PlayerSchema>(DB_NAME, DB_VERSION, {
      upgrade(db) {
        db.createObjectStore('manifests');
        db.createObjectStore('media-references', { keyPath: 'mediaId' });
      },
    });
    return new PlayerDatabase(db);
  }

  async saveActiveManifest(stored: StoredManifest): Promise<void> {
    await this.db.put('manifests', stored, 'active');
  }

  async loadActiveManifest(): Promise<StoredManifest | undefined> {
    return this.db.get('manifests', 'active');
  }

  async forgetActiveManifest(): Promise<void> {
    await this.db.delete('manifests', 'active');
  }

  async touchMedia(mediaIds: Iterable<string>, at: number): Promise<void> {
    const tx = this.db.transaction('media-references', 'readwrite');
    for (const mediaId of mediaIds) void tx.store.put({ mediaId, lastReferencedAt: at });
    await tx.done;
  }

  async mediaReferences(): Promise<Map<string, number>> {
    const all = await this.db.getAll('media-references');
    return new Map(all.map((r) => [r.mediaId, r.lastReferencedAt]));
  }

  async forgetMedia(mediaIds: Iterable<string>): Promise<void> {
    const tx = this.db.transaction('media-references', 'readwrite');
    for (const mediaId of mediaIds) void tx.store.delete(mediaId);
    await tx.done;
  }
}

/** Every media id a manifest references: page items and soundtrack tracks. */
export function referencedMedia(manifest: RuntimeManifest): Set<string> {
  const ids = new Set<string>();
  for (const page of manifest.pages) {
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') for (const item of content.items) ids.add(item.mediaId);
    }
  }
  for (const track of manifest.soundtrack?.tracks ?? []) ids.add(track.mediaId);
  return ids;
}
