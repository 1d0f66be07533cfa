// The player's IndexedDB (idb): the last manifest it activated (played when the server is down at
// start), when each media id was last referenced (for cache eviction), and the proof-of-play queue.
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import {
  grantedPages,
  isPlacementOf,
  type RuntimeManifest,
  type RuntimePlacement,
} from '../../../sdk/contract/manifest';
import type { ShowingOutcome } from '../../../sdk/contract/playback';
import type { QueuedShowing, ShowingStore } from './playback-queue';

export interface StoredManifest {
  manifest: RuntimeManifest;
  etag: string | null;
  activatedAt: number;
}

interface PlayerSchema extends DBSchema {
  manifests: { key: 'active'; value: StoredManifest };
  'media-references': { key: string; value: { mediaId: string; lastReferencedAt: number } };
  /** `open: 1` only while on glass: the sparse `open` index finds those without a walk. */
  'playback-showings': { key: number; value: QueuedShowing & { open?: 1 }; indexes: { open: number } };
}

const DB_NAME = 'marquee-player';
const DB_VERSION = 2;

export class PlayerDatabase {
  private constructor(private readonly db: IDBPDatabase<PlayerSchema>) {}

  static async open(): Promise<PlayerDatabase> {
    const db = await openDB<PlayerSchema>(DB_NAME, DB_VERSION, {
      upgrade(db, oldVersion) {
        if (oldVersion < 1) {
          db.createObjectStore('manifests');
          db.createObjectStore('media-references', { keyPath: 'mediaId' });
        }
        if (oldVersion < 2) {
          const showings = db.createObjectStore('playback-showings', { keyPath: 'seq', autoIncrement: true });
          showings.createIndex('open', 'open');
        }
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

  /** The proof-of-play queue's store. */
  showings(): ShowingStore {
    const db = this.db;
    const plain = ({ open: _, ...s }: QueuedShowing & { open?: 1 }): QueuedShowing => s;
    return {
      async add(showing) {
        const { seq: _, ...row } = showing;
        return db.add('playback-showings', { ...row, ...(row.endedAt === null ? { open: 1 as const } : {}) });
      },
      async close(seq: number, endedAt: number, outcome: ShowingOutcome) {
        const tx = db.transaction('playback-showings', 'readwrite');
        const row = await tx.store.get(seq);
        if (row) {
          const { open: _, ...closed } = row;
          await tx.store.put({ ...closed, endedAt, outcome });
        }
        await tx.done;
      },
      async oldest(limit) {
        return (await db.getAll('playback-showings', undefined, limit)).map(plain);
      },
      async open() {
        return (await db.getAllFromIndex('playback-showings', 'open')).map(plain);
      },
      async delete(seqs) {
        const tx = db.transaction('playback-showings', 'readwrite');
        for (const seq of seqs) void tx.store.delete(seq);
        await tx.done;
      },
      count: () => db.count('playback-showings'),
      async dropOldest(n) {
        const tx = db.transaction('playback-showings', 'readwrite');
        let dropped = 0;
        for (let cursor = await tx.store.openCursor(); cursor && dropped < n; cursor = await cursor.continue()) {
          await cursor.delete();
          dropped++;
        }
        await tx.done;
        return dropped;
      },
    };
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

/** Every media id a manifest references: page items (its upcoming pages too) and soundtrack tracks. */
export function referencedMedia(manifest: RuntimeManifest): Set<string> {
  const ids = new Set<string>();
  for (const page of grantedPages(manifest)) {
    for (const placement of page.placements) {
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') for (const item of content.items) ids.add(item.mediaId);
    }
  }
  for (const track of manifest.soundtrack?.tracks ?? []) ids.add(track.mediaId);
  return ids;
}
