// Minted manifests: minting a screen's current revision (once; the document is immutable after),
// reading stored revisions, and deciding which revisions still grant content to the screen's
// player: the newest, any superseded within a grace period, and the one the player activated.
import { parseRuntimeManifest } from '../../sdk/contract/manifest';
import {
  PACKAGE_PENDING_RETRY_AFTER_S,
  packageBuilds,
  storedPackages,
  type ReleaseRef,
} from '../applications/release-package';
import { problem } from '../problem';
import { releaseOriginOf } from '../release-host/host-label';
import { resolveEffectivePlaylist } from '../screens/effective-playlist';
import type { ScreenTable } from '../screens/screens.tables';
import type { Services } from '../services';
import { json, type Db, type Tx } from '../store/store';
import {
  composeManifest,
  playlistNeeds,
  renderManifest,
  type ComposeInputs,
  type MediaFacts,
  type ReleaseFacts,
  type ServedPlaylist,
  type StoredManifest,
} from './manifest-compose';
import { manifestRevisionOf } from './manifest-ids';
import type { ManifestContentKind } from './runtime.tables';

/** A superseded revision keeps its grants this long: players fetch, preload and switch meanwhile. */
export const SUPERSEDED_MANIFEST_GRACE_MS = 10 * 60_000;
/** Parsed stored documents kept in memory (they never change, so the cache is never stale). */
const PARSED_CACHE_ENTRIES = 1000;

export interface ManifestRecord {
  screenId: string;
  revision: number;
  stored: StoredManifest;
  hasCapabilities: boolean;
  supersededAt: number | null;
}

const parsedByServices = new WeakMap<Services, Map<string, StoredManifest>>();

function parsedDocument(services: Services, screenId: string, revision: number, document: string): StoredManifest {
  let cache = parsedByServices.get(services);
  if (!cache) parsedByServices.set(services, (cache = new Map()));
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

type LoadedInputs = Omit<ComposeInputs, 'packages' | 'revision' | 'now'> & { releases: Map<string, ReleaseFacts> };

/** Everything composition needs, read in one place (the caller decides the transaction). */
async function loadInputs(db: Db | Tx, screen: ScreenTable, now: number): Promise<LoadedInputs> {
  const base = {
    screen: {
      id: screen.id,
      label: screen.label,
      timezone: screen.timezone,
      state: screen.state,
      syncGroup: screen.sync_group,
      wallRegion: screen.wall_region,
    },
  };
  const effective = resolveEffectivePlaylist(screen, { now });
  if (screen.state === 'archived' || effective.playlistId === null)
    return { ...base, playlist: null, media: new Map(), releases: new Map() };
  const row = await db
    .selectFrom('playlists')
    .select(['id', 'revision', 'document', 'updated_at'])
    .where('id', '=', effective.playlistId)
    .where('tenant_id', '=', screen.tenant_id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return { ...base, playlist: null, media: new Map(), releases: new Map() };
  const doc = json.read<Omit<ServedPlaylist, 'id' | 'revision'>>(row.document)!;
  const playlist: ServedPlaylist = {
    id: row.id,
    revision: row.revision,
    updatedAt: row.updated_at,
    pages: doc.pages,
    ...(doc.audio ? { audio: doc.audio } : {}),
  };
  const needs = playlistNeeds(playlist);

  const media = new Map<string, MediaFacts>();
  if (needs.mediaIds.size > 0) {
    const rows = await db
      .selectFrom('media')
      .select(['id', 'kind', 'content_type', 'bytes', 'sha256', 'codecs', 'duration_ms'])
      .where('tenant_id', '=', screen.tenant_id)
      .where('state', '=', 'ready')
      .where('id', 'in', [...needs.mediaIds])
      .execute();
    for (const m of rows) media.set(m.id, m);
  }
  const releases = new Map<string, ReleaseFacts>();
  if (needs.releaseIds.size > 0) {
    const rows = await db
      .selectFrom('releases')
      .innerJoin('applications', 'applications.id', 'releases.application_id')
      .select(['releases.id', 'releases.application_id', 'releases.host_label'])
      .where('releases.tenant_id', '=', screen.tenant_id)
      .where('releases.id', 'in', [...needs.releaseIds])
      .where('releases.state', '=', 'ready')
      .where('releases.deleted_at', 'is', null)
      .where('applications.deleted_at', 'is', null)
      .execute();
    for (const r of rows) releases.set(r.id, r);
  }
  return { ...base, playlist, media, releases };
}

/**
 * The screen's current manifest, minted now when this revision has none yet: composed and stored in
 * one transaction that reads everything, so it is exactly the content of that revision. Nothing
 * slow runs here: release packages are built by a background queue once their release is
 * published. A release without a stored package yet is asked of that queue and the manifest is
 * manifest_degraded until it is there, rather than minted without the application.
 */
export async function currentManifest(services: Services, screenId: string): Promise<ManifestRecord> {
  const { store } = services;
  const now = services.clock.now();
  const current = async (db: Db | Tx) => {
    const screen = await db.selectFrom('screens').selectAll().where('id', '=', screenId).executeTakeFirst();
    if (!screen || screen.state === 'deleted')
      throw problem('unauthorized', 'the runtime session is expired or revoked; create a new runtime session');
    return { screen, found: await findManifest(services, db, screen.id, screen.manifest_revision) };
  };
  // Minted already (the usual case): no transaction.
  const known = await current(store.db);
  if (known.found) return known.found;
  const minted = await store.transaction(async (work): Promise<ManifestRecord | { unpackaged: ReleaseRef[] }> => {
    const { screen, found } = await current(work.db);
    if (found) return found;
    const inputs = await loadInputs(work.db, screen, now);
    const packages = await storedPackages(work.db, [...inputs.releases.keys()]);
    const unpackaged = [...inputs.releases.keys()]
      .filter((id) => !packages.has(id))
      .map((id) => ({ id, tenant_id: screen.tenant_id }));
    if (unpackaged.length > 0) return { unpackaged };
    const composition = composeManifest({ ...inputs, revision: screen.manifest_revision, packages, now });
    checkRenderable(services, screen, composition.stored);
    const inserted = await work.db
      .insertInto('runtime_manifests')
      .values({
        screen_id: screen.id,
        manifest_revision: screen.manifest_revision,
        tenant_id: screen.tenant_id,
        document: json.write(composition.stored),
        has_capabilities: composition.hasCapabilities ? 1 : 0,
        created_at: now,
        superseded_at: null,
      })
      // Another server of the same store may have minted it meanwhile: its document stands.
      .onConflict((oc) => oc.columns(['screen_id', 'manifest_revision']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
      return (await findManifest(services, work.db, screen.id, screen.manifest_revision))!;
    if (composition.content.length > 0) {
      await work.db
        .insertInto('runtime_manifest_content')
        .values(
          composition.content.map((c) => ({
            screen_id: screen.id,
            manifest_revision: screen.manifest_revision,
            tenant_id: screen.tenant_id,
            kind: c.kind,
            ref: c.ref,
          })),
        )
        .execute();
    }
    await work.db
      .updateTable('runtime_manifests')
      .set({ superseded_at: now })
      .where('screen_id', '=', screen.id)
      .where('manifest_revision', '<', screen.manifest_revision)
      .where('superseded_at', 'is', null)
      .execute();
    return {
      screenId: screen.id,
      revision: screen.manifest_revision,
      stored: composition.stored,
      hasCapabilities: composition.hasCapabilities,
      supersededAt: null,
    };
  });
  if ('unpackaged' in minted) {
    const builds = packageBuilds(services);
    for (const release of minted.unpackaged) builds.request(release);
    // A package on its way is a matter of seconds; one whose build failed is not retried before a pause.
    const building = minted.unpackaged.every((release) => builds.pending(release.id));
    throw problem(
      'manifest_degraded',
      'an application package of this manifest is not built yet; retry later',
      building ? { retryAfter: PACKAGE_PENDING_RETRY_AFTER_S } : {},
    );
  }
  return minted;
}

/** A composed document must render to a manifest the player accepts; anything else is a server bug. */
function checkRenderable(services: Services, screen: ScreenTable, stored: StoredManifest): void {
  const sample = renderManifest(stored, {
    screenId: screen.id,
    revision: screen.manifest_revision,
    generation: screen.content_access_generation,
    releaseOrigin: (label) => releaseOriginOf(services.config, label),
    capability: () => ({ handle: 'x'.repeat(64), expiresAt: 0 }),
  });
  const parsed = parseRuntimeManifest(sample, services.config.playOrigin);
  if (!parsed.ok) {
    services.logger.error(
      { screen_id: screen.id, issues: parsed.issues.slice(0, 5) },
      'minted manifest failed its own contract',
    );
    throw problem('manifest_degraded', 'the manifest could not be composed; retry later');
  }
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
): Promise<ManifestRecord> {
  if (caller.screenState === 'archived')
    throw problem('forbidden', 'the screen is archived: its glass is dark and it has no content grants');
  const revision = manifestRevisionOf(caller.screenId, revisionId);
  const record = revision === undefined ? undefined : await findManifest(services, db, caller.screenId, revision);
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
