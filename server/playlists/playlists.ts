// Playlists: storing a written document with what its selectors resolved to, the dependency rows
// that answer "who references this content", and re-resolution when media change.
import type { AdslotPageWrite, PageWrite, Playlist, PlaylistV2, PlaylistWriteV2 } from '../../sdk/contract/playlist';
import { problem, type FieldError } from '../problem';
import { newId } from '../keys';
import { contentReferencesLock, mediaSelectionLock, type MediaChange } from '../references';
import type { Services } from '../services';
import { playlistsChanged } from '../manifests/remint';
import { screenReferencesTo } from '../screens/screens';
import { compiledOnce } from '../store/compiled-once';
import { expectUpdated, json, type Db, type Tx, type Work } from '../store/store';
import {
  contentNeeds,
  resolvePlaylist,
  type ContentNeeds,
  type ContentSnapshot,
  type MediaFacts,
  type Resolution,
  type WrittenDocument,
} from './playlist-resolution';
import { commentsMember, keptPageComments, withPageComments } from '../comments/comment-fields';
import type { PlaylistTable } from './playlists.tables';

/** The document as written: v1 documents are v2 documents without adslot pages. */
export type PlaylistDocumentWrite = PlaylistWriteV2;

/** Loads the ready, owned content the documents refer to (and every ready media when a selector is dynamic). */
export async function loadContent(db: Db | Tx, tenantId: string, docs: WrittenDocument[]): Promise<ContentSnapshot> {
  const needs: ContentNeeds = { mediaIds: new Set(), releaseIds: new Set(), dynamic: false };
  for (const doc of docs) {
    const own = contentNeeds(doc);
    own.mediaIds.forEach((id) => needs.mediaIds.add(id));
    own.releaseIds.forEach((id) => needs.releaseIds.add(id));
    needs.dynamic ||= own.dynamic;
  }
  const columns = ['id', 'kind', 'content_type', 'width', 'height', 'duration_ms', 'tag', 'created_at'] as const;
  const readyMedia = db
    .selectFrom('media')
    .select(columns)
    .where('tenant_id', '=', tenantId)
    .where('state', '=', 'ready')
    .where('deleted_at', 'is', null);
  const explicit =
    needs.mediaIds.size > 0
      ? ((await readyMedia.where('id', 'in', [...needs.mediaIds]).execute()) as MediaFacts[])
      : [];
  const ordered = needs.dynamic
    ? ((await readyMedia
        .where('kind', 'in', ['image', 'video'])
        .orderBy('created_at')
        .orderBy('id')
        .execute()) as MediaFacts[])
    : [];
  const media = new Map<string, MediaFacts>();
  for (const m of [...explicit, ...ordered]) media.set(m.id, m);

  const releases = new Map<string, { id: string; application_id: string }>();
  if (needs.releaseIds.size > 0) {
    const rows = await db
      .selectFrom('releases')
      .innerJoin('applications', 'applications.id', 'releases.application_id')
      .select(['releases.id', 'releases.application_id'])
      .where('releases.tenant_id', '=', tenantId)
      .where('applications.tenant_id', '=', tenantId)
      .where('releases.id', 'in', [...needs.releaseIds])
      .where('releases.state', '=', 'ready')
      .where('releases.deleted_at', 'is', null)
      .where('applications.deleted_at', 'is', null)
      .where('applications.state', '!=', 'deleted')
      .execute();
    for (const r of rows) releases.set(r.id, r);
  }
  return { media, ordered, releases };
}

/**
 * Resolves a document a client writes against the content ready now. Holds the references lock of
 * every media and application it names (a selector's: the project's media selection), so a delete
 * of one waits for the dependency rows this transaction writes (and then refuses, or re-resolves
 * the playlist), or this write waits for the delete and finds the item gone.
 */
export async function resolveForWrite(work: Work, tenantId: string, doc: PlaylistDocumentWrite): Promise<Resolution> {
  const written = normalize(doc);
  const needs = contentNeeds(written);
  // A release's application never changes; whether it is still ready is read under the lock.
  const applicationIds =
    needs.releaseIds.size > 0
      ? await work.db
          .selectFrom('releases')
          .select('application_id')
          .distinct()
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', [...needs.releaseIds])
          .execute()
      : [];
  await work.lock(
    ...[...needs.mediaIds].map((id) => contentReferencesLock('media', id)),
    ...applicationIds.map((r) => contentReferencesLock('application', r.application_id)),
    ...(needs.dynamic ? [mediaSelectionLock(tenantId)] : []),
  );
  const resolution = resolvePlaylist(written, await loadContent(work.db, tenantId, [written]));
  const errors = [...resolution.blocking, ...resolution.authoring];
  if (errors.length > 0) throw problem('invalid_request', `${errors[0]!.field}: ${errors[0]!.detail}`, { errors });
  return resolution;
}

/** v2 ordinary pages may say `type: "page"`; the stored document leaves it implied. */
function normalize(doc: PlaylistDocumentWrite): WrittenDocument {
  return {
    pages: doc.pages.map((page) => {
      if (page.type === 'adslot') return page as AdslotPageWrite;
      const { type: _implied, ...ordinary } = page;
      return ordinary as PageWrite;
    }),
    ...(doc.audio ? { audio: doc.audio } : {}),
  };
}

export async function findPlaylist(db: Db | Tx, tenantId: string, id: string): Promise<PlaylistTable> {
  const row = await db
    .selectFrom('playlists')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw problem('not_found', `playlist ${id} not found`);
  return row;
}

/**
 * What an assignment reads of the playlist it names (not its documents): every screen of a fleet
 * assign or takeover reads it, so compiled once.
 */
const assignable = compiledOnce<
  [playlistId: string, tenantId: string],
  Pick<PlaylistTable, 'unavailable' | 'has_visibility'>
>((db, slot) =>
  db
    .selectFrom('playlists')
    .select(['unavailable', 'has_visibility'])
    .where('id', '=', slot(0))
    .where('tenant_id', '=', slot(1))
    .where('deleted_at', 'is', null),
);

/**
 * The lock a new screen reference to the playlist and the playlist's delete hold: the delete reads
 * the references, an assignment reads the playlist, and each writes what the other reads.
 */
export const playlistReferencesLock = (playlistId: string) => `playlist-references:${playlistId}`;

/**
 * What any screen reference (assignment; later schedule entries and takeovers) requires of a
 * playlist: owned, showable (its references still ready), and a screen timezone when it has
 * visibility rules, which are evaluated in that zone. Holds the playlist's references lock, so a
 * delete of the playlist waits for the reference this transaction writes (and then refuses).
 */
export async function checkAssignable(
  work: Work,
  tenantId: string,
  playlistId: string,
  timezone: string | null,
  field: string,
): Promise<void> {
  await work.lock(playlistReferencesLock(playlistId));
  const playlist = (await assignable.run(work.db, playlistId, tenantId)).rows[0];
  if (!playlist) {
    throw problem('not_found', `playlist ${playlistId} not found`, {
      errors: [{ field, code: 'not_found', detail: 'no such playlist in this project' }],
    });
  }
  const unavailable = unavailableReasons(playlist);
  if (unavailable.length > 0) {
    throw problem(
      'invalid_request',
      `${field}: playlist ${playlistId} cannot be shown: ${unavailable[0]!.field}: ${unavailable[0]!.detail}`,
      {
        errors: [
          { field, code: 'unavailable', detail: 'the playlist references content that is no longer ready' },
          ...unavailable,
        ],
      },
    );
  }
  if (playlist.has_visibility && timezone === null) {
    throw problem(
      'invalid_request',
      'timezone: this playlist has page visibility rules; set the screen timezone first (or in the same request)',
      {
        errors: [
          {
            field: 'timezone',
            code: 'required',
            detail: 'required before a playlist with page visibility is assigned',
          },
        ],
      },
    );
  }
}

interface ServedDocument {
  pages: PlaylistV2['pages'];
  audio?: PlaylistV2['audio'];
}

export function playlistView(row: PlaylistTable): PlaylistV2 {
  const doc = json.read<ServedDocument>(row.document)!;
  return {
    id: row.id,
    name: row.name,
    revision: row.revision,
    pages: withPageComments(doc.pages, row.page_comments),
    ...(doc.audio ? { audio: doc.audio } : {}),
    ...commentsMember(row.comments),
  };
}

/** Ids of the pages (ordinary and adslot) of the document as served now. */
export function playlistPageIds(row: PlaylistTable): string[] {
  return json.read<ServedDocument>(row.document)!.pages.map((p) => p.id);
}

/** v1 never shows an ad-bearing document: it refuses it rather than filtering it (spec Versioning 2). */
export function playlistViewV1(row: PlaylistTable): Playlist {
  if (row.ad_bearing) {
    throw problem('version_required', `playlist ${row.id} has adslot pages; read it through /api/v2/playlists`);
  }
  return playlistView(row) as Playlist;
}

export function unavailableReasons(row: Pick<PlaylistTable, 'unavailable'>): FieldError[] {
  return json.read<FieldError[]>(row.unavailable) ?? [];
}

function served(resolution: Resolution): string {
  return json.write({ pages: resolution.pages, ...(resolution.audio ? { audio: resolution.audio } : {}) });
}

async function writeDependencies(
  work: Work,
  playlist: Pick<PlaylistTable, 'id' | 'tenant_id'>,
  resolution: Resolution | undefined,
): Promise<void> {
  await work.db.deleteFrom('playlist_dependencies').where('playlist_id', '=', playlist.id).execute();
  if (!resolution || resolution.dependencies.length === 0) return;
  await work.db
    .insertInto('playlist_dependencies')
    .values(
      resolution.dependencies.map((d) => ({
        playlist_id: playlist.id,
        tenant_id: playlist.tenant_id,
        kind: d.kind,
        ref: d.ref,
      })),
    )
    .execute();
}

export async function insertPlaylist(
  services: Services,
  work: Work,
  input: { tenantId: string; doc: PlaylistDocumentWrite; resolution: Resolution; now: number; requestId?: string },
): Promise<PlaylistTable> {
  const { doc, resolution, now } = input;
  const row: PlaylistTable = {
    id: newId('pl'),
    tenant_id: input.tenantId,
    name: doc.name,
    revision: 1,
    ad_bearing: resolution.adBearing ? 1 : 0,
    has_visibility: resolution.hasVisibility ? 1 : 0,
    write_document: json.write(normalize(doc)),
    document: served(resolution),
    unavailable: json.write([]),
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  await work.db.insertInto('playlists').values(row).execute();
  await writeDependencies(work, row, resolution);
  await services.events.append(
    work,
    {
      tenantId: row.tenant_id,
      type: 'playlist.created',
      message: `playlist "${row.name}" created`,
      resource: { type: 'playlist', id: row.id },
      details: { revision: 1 },
      requestId: input.requestId,
    },
    now,
  );
  return row;
}

/** True when a replacement would store exactly what is stored (and the playlist is showable): it changes nothing. */
export function replacesNothing(before: PlaylistTable, doc: PlaylistDocumentWrite, resolution: Resolution): boolean {
  return (
    before.name === doc.name &&
    before.write_document === json.write(normalize(doc)) &&
    before.document === served(resolution) &&
    unavailableReasons(before).length === 0
  );
}

/** The lock a write of a playlist's page comments holds (comments.ts, and a replace that carries them over). */
export const pageCommentsLock = (playlistId: string) => `page-comments:${playlistId}`;

/** Replaces the whole document: revision + 1, and screens showing it get a new manifest when what they are served changed. */
export async function replacePlaylist(
  services: Services,
  work: Work,
  before: PlaylistTable,
  input: { doc: PlaylistDocumentWrite; resolution: Resolution; now: number; requestId?: string },
): Promise<PlaylistTable> {
  const { doc, resolution, now } = input;
  // Comments do not move the revision, so the compare-and-set below would not see one written since
  // `before` was read: the page comments carried over are read again under their writers' lock.
  await work.lock(pageCommentsLock(before.id));
  const { page_comments } = await work.db
    .selectFrom('playlists')
    .select('page_comments')
    .where('id', '=', before.id)
    .executeTakeFirstOrThrow();
  const after: PlaylistTable = {
    ...before,
    name: doc.name,
    revision: before.revision + 1,
    ad_bearing: resolution.adBearing ? 1 : 0,
    has_visibility: resolution.hasVisibility ? 1 : 0,
    write_document: json.write(normalize(doc)),
    document: served(resolution),
    unavailable: json.write([]),
    // Page comments follow their pages by id; a page that left the document takes its comments along.
    page_comments: keptPageComments(
      page_comments,
      resolution.pages.map((p) => p.id),
    ),
    updated_at: now,
  };
  const updated = await work.db
    .updateTable('playlists')
    .set({
      page_comments: after.page_comments,
      name: after.name,
      revision: after.revision,
      ad_bearing: after.ad_bearing,
      has_visibility: after.has_visibility,
      write_document: after.write_document,
      document: after.document,
      unavailable: after.unavailable,
      updated_at: now,
    })
    .where('id', '=', before.id)
    .where('revision', '=', before.revision)
    .executeTakeFirst();
  expectUpdated(updated, 'playlist');
  await writeDependencies(work, after, resolution);
  await services.events.append(
    work,
    {
      tenantId: after.tenant_id,
      type: 'playlist.updated',
      message: `playlist "${after.name}" updated`,
      resource: { type: 'playlist', id: after.id },
      details: { revision: after.revision },
      requestId: input.requestId,
    },
    now,
  );
  // Only a change of what screens are served (pages, soundtrack) is a new manifest: a rename or a
  // rewrite that resolves to the same document keeps the manifests on glass (no refetch, no swap).
  if (after.document !== before.document) {
    await playlistsChanged(
      services.events,
      work,
      after.tenant_id,
      [after.id],
      'playlist_updated',
      now,
      input.requestId,
    );
  }
  return after;
}

export async function tombstonePlaylist(
  services: Services,
  work: Work,
  before: PlaylistTable,
  now: number,
  requestId?: string,
): Promise<void> {
  expectUpdated(
    await work.db
      .updateTable('playlists')
      .set({ deleted_at: now, revision: before.revision + 1, updated_at: now })
      .where('id', '=', before.id)
      .where('revision', '=', before.revision)
      .executeTakeFirst(),
    'playlist',
  );
  await writeDependencies(work, before, undefined);
  await services.events.append(
    work,
    {
      tenantId: before.tenant_id,
      type: 'playlist.deleted',
      message: `playlist "${before.name}" deleted`,
      resource: { type: 'playlist', id: before.id },
      details: { revision: before.revision + 1 },
      requestId,
    },
    now,
  );
}

/** Why stored playlists re-resolve: a media or an application of the tenant changed. */
export type ContentChange = { kind: 'media'; change: MediaChange } | { kind: 'application'; applicationId: string };

/**
 * Re-resolves the tenant's playlists a content change can affect, in the caller's transaction:
 * for media, its tag before and after, `all` selectors and documents that name it; for an
 * application, documents that name it or one of its releases. The written documents and their
 * revisions stay; the served items, the dependency rows and the availability change, and screens
 * showing a changed playlist get a new manifest. The content is read once for all of them.
 */
export async function rematerialize(
  services: Services,
  work: Work,
  tenantId: string,
  cause: ContentChange,
  now: number,
): Promise<string[]> {
  const releaseIds =
    cause.kind === 'application'
      ? (
          await work.db
            .selectFrom('releases')
            .select('id')
            .where('application_id', '=', cause.applicationId)
            .where('tenant_id', '=', tenantId)
            .execute()
        ).map((r) => r.id)
      : [];
  const tags = cause.kind === 'media' ? cause.change.tags.filter((t): t is string => t !== null) : [];
  const rows = await work.db
    .selectFrom('playlists')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('playlist_dependencies')
        .select('playlist_id')
        .where('tenant_id', '=', tenantId)
        .where((d) =>
          cause.kind === 'media'
            ? d.or([
                d('kind', '=', 'media_all'),
                d.and([d('kind', '=', 'media'), d('ref', '=', cause.change.mediaId)]),
                ...(tags.length > 0 ? [d.and([d('kind', '=', 'media_tag'), d('ref', 'in', tags)])] : []),
              ])
            : d.or([
                d.and([d('kind', '=', 'application'), d('ref', '=', cause.applicationId)]),
                ...(releaseIds.length > 0 ? [d.and([d('kind', '=', 'release'), d('ref', 'in', releaseIds)])] : []),
              ]),
        ),
    )
    .orderBy('id')
    .execute();
  if (rows.length === 0) return [];
  const written = new Map(rows.map((row) => [row.id, json.read<WrittenDocument>(row.write_document)!]));
  const content = await loadContent(work.db, tenantId, [...written.values()]);
  const what = cause.kind === 'media' ? 'a media change' : 'an application change';
  const about = cause.kind === 'media' ? { media_id: cause.change.mediaId } : { application_id: cause.applicationId };

  const changed: string[] = [];
  const remint: string[] = [];
  for (const row of rows) {
    const resolution = resolvePlaylist(written.get(row.id)!, content);
    const document = served(resolution);
    const unavailable = json.write(resolution.blocking);
    if (document === row.document && unavailable === row.unavailable) continue;
    await work.db.updateTable('playlists').set({ document, unavailable }).where('id', '=', row.id).execute();
    await writeDependencies(work, row, resolution);
    await services.events.append(
      work,
      {
        tenantId,
        type: 'playlist.rematerialized',
        message: `playlist "${row.name}" re-resolved after ${what}`,
        severity: resolution.blocking.length > 0 ? 'warning' : 'info',
        resource: { type: 'playlist', id: row.id },
        details: { revision: row.revision, ...about, available: resolution.blocking.length === 0 },
      },
      now,
    );
    if (document !== row.document) remint.push(row.id);
    changed.push(row.id);
  }
  await playlistsChanged(services.events, work, tenantId, remint, 'playlist_rematerialized', now);
  return changed;
}

/** The tenant's playlists (not deleted), oldest first. */
export async function listPlaylists(db: Db, tenantId: string): Promise<PlaylistTable[]> {
  return db
    .selectFrom('playlists')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * A document with visibility rules needs every screen that refers to it to have a timezone. Holds
 * the playlist's references lock (checkAssignable) when it has such rules.
 */
export async function checkScreenTimezones(
  work: Work,
  playlist: PlaylistTable,
  doc: PlaylistDocumentWrite,
): Promise<void> {
  const withRule = doc.pages.findIndex((p) => p.visibility !== undefined);
  if (withRule < 0) return;
  // An assignment reads whether the playlist has visibility rules under this lock: it commits its
  // reference before the look below, or reads the rules this write stores and asks for a timezone.
  await work.lock(playlistReferencesLock(playlist.id));
  const screenIds = [
    ...new Set((await screenReferencesTo(work.db, playlist.tenant_id, playlist.id)).map((r) => r.screen_id)),
  ];
  if (screenIds.length === 0) return;
  const missing = await work.db
    .selectFrom('screens')
    .select('id')
    .where('id', 'in', screenIds)
    .where('timezone', 'is', null)
    .orderBy('id')
    .execute();
  if (missing.length === 0) return;
  const names = missing.map((s) => s.id).join(', ');
  throw problem(
    'invalid_request',
    `pages.${withRule}.visibility: screens using this playlist have no timezone (${names}); set their timezone first`,
    {
      errors: [
        {
          field: `pages.${withRule}.visibility`,
          code: 'timezone_required',
          detail: `screens without a timezone use this playlist: ${names}`,
        },
      ],
    },
  );
}
