// The player's IndexedDB (idb): the last manifest it activated (played when the server is down at
// start) and when each media id was last referenced (for cache eviction).
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { isPlacementOf, type RuntimeManifest, type RuntimePlacement } from '../../../sdk/contract/manifest';

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

  /** Every media reference (the device no longer plays the screen they belong to). */
  async forgetAllMedia(): Promise<void> {
    await this.db.clear('media-references');
  }

  async forgetMedia(mediaIds: Iterable<string>): Promise<void> {
    const tx = this.db.transaction('media-references', 'readwrite');
    for (const mediaId of mediaIds) void tx.store.delete(mediaId);
    await tx.done;
  }
}

/** Stands in for a placement capability in a stored manifest (it passes the schema; the server refuses it). */
export const STORED_CAPABILITY_PLACEHOLDER = 'not-stored-capabilities-stay-in-memory';
const LONG_EXPIRED = new Date(0).toISOString();

/**
 * The manifest as it may be written to disk: placement capabilities are short-lived credentials and
 * stay in memory; a manifest played from disk gets fresh ones with its first fetch. Whether any were
 * removed is returned too (the stored validator must not then turn that fetch into a 304).
 */
export function storableManifest(manifest: RuntimeManifest): { manifest: RuntimeManifest; stripped: boolean } {
  let stripped = false;
  const pages = manifest.pages.map((page) => ({
    ...page,
    placements: page.placements.map((placement): RuntimePlacement => {
      if (!isPlacementOf(placement, 'application')) return placement;
      stripped = true;
      return { ...placement, capabilityHandle: STORED_CAPABILITY_PLACEHOLDER, capabilityExpiresAt: LONG_EXPIRED };
    }),
  }));
  return { manifest: { ...manifest, pages }, stripped };
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
