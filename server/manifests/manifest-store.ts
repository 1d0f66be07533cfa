// Minted manifests: reading a screen's current revision (minted on first use by minting.ts; the
// document is immutable after) and stored revisions, and deciding which revisions still grant
// content to the screen's player: the newest, any superseded within a grace period, and the one the
// player activated.
import { serverCache } from '../caches';
import { problem } from '../problem';
import type { Services } from '../services';
import { json, type Db, type Tx } from '../store/store';
import { watchedCache } from '../store/watched-cache';
import type { StoredManifest } from './manifest-compose';
import { manifestRevisionOf } from './manifest-ids';
import type { ManifestRecord } from './manifest-minter';
import type { ManifestContentKind } from '../runtime/runtime.tables';

/** A superseded revision keeps its grants this long: players fetch, preload and switch meanwhile. */
export const SUPERSEDED_MANIFEST_GRACE_MS = 10 * 60_000;
/** Parsed stored documents kept in memory (they never change, so the cache is never stale). */
const PARSED_CACHE_ENTRIES = 1000;

const parsedManifests = serverCache('parsed-manifests', () => new Map<string, StoredManifest>());

function parsedDocument(services: Services, screenId: string, revision: number, document: string): StoredManifest {
  const cache = parsedManifests(services);
  const key = `${screenId}\u0000${revision}`;
  let stored = cache.get(key);
  if (!stored) {
    if (cache.size >= PARSED_CACHE_ENTRIES) cache.clear();
    stored = json.read<StoredManifest>(document)!;
    cache.set(key, stored);
  }
  return stored;
}

export async function findManifest(
  services: Services,
  db: Db | Tx,
  screenId: string,
  revision: number,
): Promise<ManifestRecord | undefined> {
  const row = await db
    .selectFrom('runtime_manifests')
    .select(['document', 'has_capabilities', 'superseded_at'])
    .where('screen_id', '=', screenId)
    .where('manifest_revision', '=', revision)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    screenId,
    revision,
    stored: parsedDocument(services, screenId, revision, row.document),
    hasCapabilities: row.has_capabilities === 1,
    supersededAt: row.superseded_at,
  };
}

/** Stored revisions found, for at most this long; emptied by any update or delete of the rows (D-372). */
const RECORD_CACHE_MS = 5_000;
const MAX_CACHED_RECORDS = 10_000;

export const manifestRecordCache = watchedCache<ManifestRecord | undefined>('manifest-records', {
  ttlMs: RECORD_CACHE_MS,
  maxEntries: MAX_CACHED_RECORDS,
  watches: [{ table: 'runtime_manifests' }],
});

/** The stored revision a `man_…` id names for this screen (undefined: malformed, another screen's, or none). */
export function findByRevisionId(
  services: Services,
  db: Db | Tx,
  screenId: string,
  revisionId: string,
): Promise<ManifestRecord | undefined> {
  const revision = manifestRevisionOf(screenId, revisionId);
  return revision === undefined ? Promise.resolve(undefined) : findManifest(services, db, screenId, revision);
}

/**
 * findByRevisionId outside any transaction, from a short-lived cache by the id's text (so neither
 * the id's digest nor the row is computed again): the byte routes ask for the same revision on
 * every range. A revision's row changes only when it is superseded (an update this process sees
 * at once, another replica's once relayed, D-386) or pruned.
 */
export function cachedManifest(
  services: Services,
  _db: Db | Tx,
  screenId: string,
  revisionId: string,
): Promise<ManifestRecord | undefined> {
  return manifestRecordCache(services.store).get(
    `${screenId}\u0000${revisionId}`,
    () => findByRevisionId(services, services.store.db, screenId, revisionId),
    (record) => record !== undefined,
  );
}

export interface RuntimeCaller {
  tenantId: string;
  screenId: string;
  screenState: string;
}

/**
 * The stored revision `revisionId` names when it still grants content to this screen's player:
 * the newest, one superseded less than the grace period ago, or the one the player activated.
 * Archived screens have no grants. Unknown revisions are not_found; lapsed ones forbidden.
 */
export async function grantedManifest(
  services: Services,
  db: Db | Tx,
  caller: RuntimeCaller,
  revisionId: string,
  now: number,
  find: typeof findByRevisionId = findByRevisionId,
): Promise<ManifestRecord> {
  if (caller.screenState === 'archived')
    throw problem('forbidden', 'the screen is archived: its glass is dark and it has no content grants');
  const record = await find(services, db, caller.screenId, revisionId);
  if (!record) throw problem('not_found', 'this screen has no such manifest revision');
  if (record.supersededAt !== null && record.supersededAt <= now - SUPERSEDED_MANIFEST_GRACE_MS) {
    const state = await db
      .selectFrom('screen_runtime_state')
      .select('active_manifest_revision')
      .where('screen_id', '=', caller.screenId)
      .executeTakeFirst();
    if (state?.active_manifest_revision !== record.revision) {
      throw problem('forbidden', 'this manifest revision no longer grants content; fetch the current manifest');
    }
  }
  return record;
}

/** Whether a minted revision refers to this content. */
export async function inManifest(
  db: Db | Tx,
  screenId: string,
  revision: number,
  kind: ManifestContentKind,
  ref: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('runtime_manifest_content')
    .select('ref')
    .where('screen_id', '=', screenId)
    .where('manifest_revision', '=', revision)
    .where('kind', '=', kind)
    .where('ref', '=', ref)
    .executeTakeFirst();
  return row !== undefined;
}
