// Minting: the document of a screen's current manifest revision is composed and stored the first
// time a player asks for it (composition stays out of the write that reminted it; see
// docs/decisions.md, "Manifests owned in one place"). Mints are group-committed: the first fetches
// that arrive together (a fleet's players after one playlist edit) are minted in one transaction,
// reading each playlist and its content once, with one INSERT per table, instead of one
// transaction and its commit per screen (services.minter gathers them: manifest-minter.ts; this
// file is what one batch does). Nothing slow runs inside: release packages are built by
// a background queue, and a release without a stored package makes that screen's manifest
// manifest_degraded until it is there, rather than minting it without the application.
import { parseRuntimeManifest } from '../../sdk/contract/manifest';
import type { ReleaseRef } from '../applications/package-builds';
import { PACKAGE_PENDING_RETRY_AFTER_S, storedPackages } from '../applications/release-package';
import { problem } from '../problem';
import { releaseOriginOf } from '../release-host/host-label';
import type { ScreenTable } from '../screens/screens.tables';
import type { Services } from '../services';
import { json, type Tx, type Work } from '../store/store';
import {
  composeManifest,
  playlistNeeds,
  renderManifest,
  type Composition,
  type MediaFacts,
  type ReleaseFacts,
  type ServedPlaylist,
  type StoredManifest,
} from './manifest-compose';
import type { ManifestRecord, MintOutcome } from './manifest-minter';
import { findManifest } from './manifest-store';
import { playlistAt } from './screen-resolution';

/**
 * Screens one transaction mints at most (services.minter's batch size). A transaction holds the
 * store (SQLite has one writer), so a batch stays short: about a millisecond of composition per screen.
 */
export const MINTS_PER_TRANSACTION = 50;
/** Rows of one INSERT into runtime_manifest_content (5 parameters a row). */
const CONTENT_ROWS_PER_STATEMENT = 1000;

const expired = () =>
  problem('unauthorized', 'the runtime session is expired or revoked; create a new runtime session');

/**
 * The screen's current manifest: read when its revision is minted already (the usual case, no
 * transaction), else minted by services.minter together with the other first fetches.
 */
export async function currentManifest(services: Services, screenId: string): Promise<ManifestRecord> {
  const screen = await services.store.db
    .selectFrom('screens')
    .select(['id', 'state', 'manifest_revision'])
    .where('id', '=', screenId)
    .executeTakeFirst();
  if (!screen || screen.state === 'deleted') throw expired();
  const found = await findManifest(services, services.store.db, screen.id, screen.manifest_revision);
  return found ?? services.minter.mint(screenId);
}

/** What the batch read for composing: playlists by id, and the ready content they name. */
interface BatchContent {
  playlists: Map<string, ServedPlaylist & { tenant_id: string }>;
  media: Map<string, MediaFacts & { tenant_id: string }>;
  releases: Map<string, ReleaseFacts & { tenant_id: string }>;
  packages: Map<string, { bytes: number; sha256: string }>;
  /** Each screen's next schedule boundary (the player refetches then, even with its stream down). */
  boundaries: Map<string, number>;
  /** The playlist a screen shows from its next boundary, when that differs from what it shows now. */
  upcoming: Map<string, string>;
  /** Each screen's takeover (its playlist and end), while one is set. */
  takeovers: Map<string, { playlistId: string; until: number }>;
}

/** The playlists the screens show and the ready content they name, read once for the batch. */
async function loadContent(db: Tx, screens: ScreenTable[]): Promise<BatchContent> {
  const showing = (s: ScreenTable) => (s.state === 'archived' ? null : s.effective_playlist_id);
  const playlistIds = [...new Set(screens.map(showing).filter((id): id is string => id !== null))];
  const content: BatchContent = {
    playlists: new Map(),
    media: new Map(),
    releases: new Map(),
    packages: new Map(),
    boundaries: new Map(),
    upcoming: new Map(),
    takeovers: new Map(),
  };
  const boundaries = await db
    .selectFrom('screen_boundaries')
    .select(['screen_id', 'due_at'])
    .where(
      'screen_id',
      'in',
      screens.map((s) => s.id),
    )
    .execute();
  for (const b of boundaries) content.boundaries.set(b.screen_id, b.due_at);
  const takeovers = await db
    .selectFrom('screen_takeovers')
    .select(['screen_id', 'playlist_id', 'until'])
    .where(
      'screen_id',
      'in',
      screens.map((s) => s.id),
    )
    .execute();
  for (const t of takeovers) content.takeovers.set(t.screen_id, { playlistId: t.playlist_id, until: t.until });
  for (const screen of screens) {
    const at = content.boundaries.get(screen.id);
    if (at === undefined || screen.state === 'archived') continue;
    const next = await playlistAt(db, screen, at);
    if (next !== null && next !== screen.effective_playlist_id) {
      content.upcoming.set(screen.id, next);
      if (!playlistIds.includes(next)) playlistIds.push(next);
    }
  }
  if (playlistIds.length === 0) return content;
  const rows = await db
    .selectFrom('playlists')
    .select(['id', 'tenant_id', 'revision', 'document', 'updated_at'])
    .where('id', 'in', playlistIds)
    .where('deleted_at', 'is', null)
    .execute();
  const mediaIds = new Set<string>();
  const releaseIds = new Set<string>();
  for (const row of rows) {
    const doc = json.read<Omit<ServedPlaylist, 'id' | 'revision' | 'updatedAt'>>(row.document)!;
    const playlist = {
      id: row.id,
      tenant_id: row.tenant_id,
      revision: row.revision,
      updatedAt: row.updated_at,
      pages: doc.pages,
      ...(doc.audio ? { audio: doc.audio } : {}),
    };
    content.playlists.set(row.id, playlist);
    const needs = playlistNeeds(playlist);
    needs.mediaIds.forEach((id) => mediaIds.add(id));
    needs.releaseIds.forEach((id) => releaseIds.add(id));
  }
  if (mediaIds.size > 0) {
    const media = await db
      .selectFrom('media')
      .select(['id', 'tenant_id', 'kind', 'content_type', 'bytes', 'sha256', 'codecs', 'duration_ms'])
      .where('state', '=', 'ready')
      .where('id', 'in', [...mediaIds])
      .execute();
    for (const m of media) content.media.set(m.id, m);
  }
  if (releaseIds.size > 0) {
    const releases = await db
      .selectFrom('releases')
      .innerJoin('applications', 'applications.id', 'releases.application_id')
      .select(['releases.id', 'releases.tenant_id', 'releases.application_id', 'releases.host_label'])
      .where('releases.id', 'in', [...releaseIds])
      .where('releases.state', '=', 'ready')
      .where('releases.deleted_at', 'is', null)
      .where('applications.deleted_at', 'is', null)
      .execute();
    for (const r of releases) content.releases.set(r.id, r);
    content.packages = await storedPackages(db, [...content.releases.keys()]);
  }
  return content;
}

/** Only the screen's own tenant's content counts (ids are global; a forged reference finds nothing). */
function owned<T extends { tenant_id: string }>(map: Map<string, T>, tenantId: string): Map<string, T> {
  return new Map([...map].filter(([, value]) => value.tenant_id === tenantId));
}

type Composed = { screen: ScreenTable; composition: Composition } | { screen: ScreenTable; unpackaged: ReleaseRef[] };

function compose(services: Services, screen: ScreenTable, content: BatchContent, now: number): Composed {
  const base = {
    screen: {
      id: screen.id,
      label: screen.label,
      timezone: screen.timezone,
      state: screen.state,
      syncGroup: screen.sync_group,
      wallRegion: screen.wall_region,
      nextBoundaryAt: content.boundaries.get(screen.id) ?? null,
    },
  };
  const effective = screen.state === 'archived' ? null : screen.effective_playlist_id;
  const playlist = effective === null ? undefined : content.playlists.get(effective);
  const nextId = content.upcoming.get(screen.id);
  const next = nextId === undefined ? undefined : content.playlists.get(nextId);
  const upcoming = next && next.tenant_id === screen.tenant_id ? next : null;
  const none = { media: new Map(), releases: new Map(), packages: new Map() };
  if (!playlist || playlist.tenant_id !== screen.tenant_id) {
    const composition = composeManifest({
      ...base,
      playlist: null,
      upcoming,
      ...(upcoming ? { media: owned(content.media, screen.tenant_id) } : none),
      releases: none.releases,
      packages: none.packages,
      revision: screen.manifest_revision,
      now,
    });
    checkRenderable(services, screen, composition.stored);
    return { screen, composition };
  }
  const needs = playlistNeeds(playlist);
  const releases = owned(content.releases, screen.tenant_id);
  const unpackaged = [...needs.releaseIds]
    .filter((id) => releases.has(id) && !content.packages.has(id))
    .map((id) => ({ id, tenant_id: screen.tenant_id }));
  if (unpackaged.length > 0) return { screen, unpackaged };
  const takeover = content.takeovers.get(screen.id);
  const composition = composeManifest({
    ...base,
    playlist,
    takeover: takeover !== undefined && takeover.playlistId === playlist.id && now < takeover.until,
    upcoming,
    media: owned(content.media, screen.tenant_id),
    releases,
    packages: content.packages,
    revision: screen.manifest_revision,
    now,
  });
  checkRenderable(services, screen, composition.stored);
  return { screen, composition };
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

/** Stores the documents in one INSERT each for documents and content; a revision minted meanwhile (another replica) stands. */
async function store(work: Work, minted: { screen: ScreenTable; composition: Composition }[], now: number) {
  if (minted.length === 0) return new Set<string>();
  const inserted = await work.db
    .insertInto('runtime_manifests')
    .values(
      minted.map(({ screen, composition }) => ({
        screen_id: screen.id,
        manifest_revision: screen.manifest_revision,
        tenant_id: screen.tenant_id,
        document: json.write(composition.stored),
        has_capabilities: composition.hasCapabilities ? 1 : 0,
        created_at: now,
        superseded_at: null,
      })),
    )
    .onConflict((oc) => oc.columns(['screen_id', 'manifest_revision']).doNothing())
    .returning('screen_id')
    .execute();
  const ours = new Set(inserted.map((row) => row.screen_id));
  const content = minted
    .filter(({ screen }) => ours.has(screen.id))
    .flatMap(({ screen, composition }) =>
      composition.content.map((c) => ({
        screen_id: screen.id,
        manifest_revision: screen.manifest_revision,
        tenant_id: screen.tenant_id,
        kind: c.kind,
        ref: c.ref,
      })),
    );
  for (let start = 0; start < content.length; start += CONTENT_ROWS_PER_STATEMENT) {
    await work.db
      .insertInto('runtime_manifest_content')
      .values(content.slice(start, start + CONTENT_ROWS_PER_STATEMENT))
      .execute();
  }
  if (ours.size > 0) {
    // Older revisions of these screens are superseded by the one just minted (each screen's current).
    await work.db
      .updateTable('runtime_manifests')
      .set({ superseded_at: now })
      .where('screen_id', 'in', [...ours])
      .where('superseded_at', 'is', null)
      .where(({ eb, selectFrom }) =>
        eb(
          'manifest_revision',
          '<',
          selectFrom('screens')
            .select('screens.manifest_revision')
            .whereRef('screens.id', '=', 'runtime_manifests.screen_id'),
        ),
      )
      .execute();
  }
  return ours;
}

/**
 * Mints the current revision of each screen that has none yet, in one transaction: one read of the
 * screens, of their stored revisions, of the playlists and of the content, then one INSERT per
 * table. Each screen gets its own outcome (a deleted screen, an unpackaged release or a document
 * that fails its contract fails only that screen).
 */
export async function mintBatch(services: Services, screenIds: string[]): Promise<Map<string, MintOutcome>> {
  const now = services.clock.now();
  const outcomes = new Map<string, MintOutcome>();
  const unpackaged = new Map<string, ReleaseRef[]>();
  await services.store.transaction(async (work) => {
    const screens = await work.db.selectFrom('screens').selectAll().where('id', 'in', screenIds).execute();
    const byId = new Map(screens.map((s) => [s.id, s]));
    const stored = await work.db
      .selectFrom('runtime_manifests')
      .innerJoin('screens', (join) =>
        join
          .onRef('screens.id', '=', 'runtime_manifests.screen_id')
          .onRef('screens.manifest_revision', '=', 'runtime_manifests.manifest_revision'),
      )
      .select('runtime_manifests.screen_id')
      .where('runtime_manifests.screen_id', 'in', screenIds)
      .execute();
    const already = new Set(stored.map((row) => row.screen_id));
    const pending = screens.filter((s) => s.state !== 'deleted' && !already.has(s.id));
    const content = await loadContent(work.db, pending);
    const minted: { screen: ScreenTable; composition: Composition }[] = [];
    for (const screen of pending) {
      try {
        const composed = compose(services, screen, content, now);
        if ('unpackaged' in composed) unpackaged.set(screen.id, composed.unpackaged);
        else minted.push(composed);
      } catch (error) {
        outcomes.set(screen.id, { ok: false, error });
      }
    }
    const ours = await store(work, minted, now);
    for (const { screen, composition } of minted) {
      if (!ours.has(screen.id)) continue; // minted by another replica meanwhile: read below
      outcomes.set(screen.id, {
        ok: true,
        record: {
          screenId: screen.id,
          revision: screen.manifest_revision,
          stored: composition.stored,
          hasCapabilities: composition.hasCapabilities,
          supersededAt: null,
        },
      });
    }
    for (const id of screenIds) {
      if (outcomes.has(id) || unpackaged.has(id)) continue;
      const screen = byId.get(id);
      if (!screen || screen.state === 'deleted') {
        outcomes.set(id, { ok: false, error: expired() });
        continue;
      }
      const record = await findManifest(services, work.db, screen.id, screen.manifest_revision);
      outcomes.set(id, record ? { ok: true, record } : { ok: false, error: expired() });
    }
  });
  const builds = services.packageBuilds;
  for (const [id, releases] of unpackaged) {
    for (const release of releases) builds.request(release);
    // A package on its way is a matter of seconds; one whose build failed is not retried before a pause.
    const building = releases.every((release) => builds.pending(release.id));
    const error = problem(
      'manifest_degraded',
      'an application package of this manifest is not built yet; retry later',
      building ? { retryAfter: PACKAGE_PENDING_RETRY_AFTER_S } : {},
    );
    outcomes.set(id, { ok: false, error });
  }
  return outcomes;
}
