// Media rows as the API shows them, the lookups every media route shares, list paging, and the
// changes of a ready media (its tag, its deletion).
import {
  MEDIA_LIST_DEFAULT_LIMIT,
  type Media,
  type MediaContentType,
  type MediaKind,
  type MediaList,
  type MediaListQuery,
} from '../../sdk/contract/media';
import { isoTime } from '../clock';
import { problem } from '../problem';
import { contentReferencesLock, mediaSelectionLock } from '../references';
import type { Services } from '../services';
import { expectUpdated, type Db, type Tx, type Work } from '../store/store';
import { releaseUsedBytes } from '../tenants/tenants';
import type { MediaTable } from './media.tables';
import { newestFirstPage } from '../keyset-cursor';

export const MEDIA_UPLOAD_KIND = 'media.upload';
export const MEDIA_GENERATION_KIND = 'media.generation';

/** Object key of a media's bytes: the signed PUT writes there and nothing rewrites it. */
export function objectKeyOf(mediaId: string): string {
  return `media/${mediaId}`;
}

export function mediaView(row: MediaTable): Media {
  const view: Media = {
    id: row.id,
    filename: row.filename,
    kind: row.kind as MediaKind,
    content_type: row.content_type as MediaContentType,
    operation_id: row.operation_id,
    sha256: row.sha256,
    bytes: row.bytes,
    revision: row.revision,
    state: 'ready',
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
  if (row.source_filename !== null) view.source_filename = row.source_filename;
  if (row.width !== null) view.width = row.width;
  if (row.height !== null) view.height = row.height;
  if (row.duration_ms !== null) view.duration_ms = row.duration_ms;
  if (row.codecs !== null) view.codecs = row.codecs;
  if (row.tag !== null) view.tag = row.tag;
  return view;
}

/** A ready media of the tenant; pending, failed, deleted and other tenants' media are not_found. */
export async function readyMedia(db: Db | Tx, tenantId: string, id: string): Promise<MediaTable> {
  const row = await db
    .selectFrom('media')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('state', '=', 'ready')
    .executeTakeFirst();
  if (!row) throw problem('not_found', 'media not found');
  return row;
}

// ---- Paging: newest first by (created_at, id); the cursor is the last row's position.

/** The tenant's ready media, newest first, filtered by tag and kind, one page after the cursor. */
export async function listReadyMedia(db: Db, tenantId: string, query: MediaListQuery): Promise<MediaList> {
  const limit = query.limit ?? MEDIA_LIST_DEFAULT_LIMIT;
  let q = db.selectFrom('media').selectAll().where('tenant_id', '=', tenantId).where('state', '=', 'ready');
  // spec: with a tag filter, untagged media are omitted (an exact match never matches null).
  if (query.tag !== undefined) q = q.where('tag', '=', query.tag);
  if (query.kind !== undefined) q = q.where('kind', '=', query.kind);
  const { rows: page, next_cursor } = await newestFirstPage(q, query.cursor, limit);
  return {
    items: page.map(mediaView),
    next_cursor,
  };
}

/** Replaces the media's tag (revision + 1); playlists that select by either tag re-resolve in the same transaction. */
export async function retagMedia(
  services: Services,
  work: Work,
  row: MediaTable,
  tag: string | null,
  now: number,
  requestId: string,
): Promise<MediaTable> {
  // Writing the tag it already has changes nothing, so it bumps nothing.
  if (tag === row.tag) return row;
  // A playlist write whose selector read the old tag commits before this re-resolves the playlists
  // selecting by either tag, or reads the new one. Taken before this transaction's first event, as
  // the playlist write takes it before its own (the project's event lock follows it in both).
  await work.lock(mediaSelectionLock(row.tenant_id));
  const updated = { ...row, tag, revision: row.revision + 1, updated_at: now };
  expectUpdated(
    await work.db
      .updateTable('media')
      .set({ tag, revision: updated.revision, updated_at: now })
      .where('id', '=', row.id)
      .where('revision', '=', row.revision)
      .executeTakeFirst(),
    'media',
  );
  await services.events.append(
    work,
    {
      tenantId: row.tenant_id,
      type: 'media.updated',
      message: tag === null ? `media ${row.filename} untagged` : `media ${row.filename} tagged ${tag}`,
      resource: { type: 'media', id: row.id },
      requestId,
      details: { tag, previous_tag: row.tag, revision: updated.revision },
    },
    now,
  );
  await services.references.mediaChanged(work, row.tenant_id, { mediaId: row.id, tags: [row.tag, tag] }, now);
  return updated;
}

/**
 * Tombstones a media no screen shows (desired or active), gives its bytes back to the quota, and
 * removes the bytes once the deletion committed.
 */
export async function tombstoneMedia(
  services: Services,
  work: Work,
  row: MediaTable,
  now: number,
  requestId: string,
): Promise<void> {
  const tenantId = row.tenant_id;
  // A playlist write naming this media (or selecting from all of them) either committed its
  // dependency rows before the look below, or reads the media once it is tombstoned.
  await work.lock(contentReferencesLock('media', row.id), mediaSelectionLock(tenantId));
  if (await services.references.mediaInUse(work, tenantId, row.id)) {
    throw problem(
      'resource_conflict',
      'a playlist that a screen shows (desired or active) references this media; remove it from those playlists first',
    );
  }
  expectUpdated(
    await work.db
      .updateTable('media')
      .set({ state: 'deleted', deleted_at: now, updated_at: now, revision: row.revision + 1 })
      .where('id', '=', row.id)
      .where('revision', '=', row.revision)
      .executeTakeFirst(),
    'media',
  );
  await releaseUsedBytes(work.db, tenantId, row.bytes);
  await services.events.append(
    work,
    {
      tenantId,
      type: 'media.deleted',
      message: `media ${row.filename} deleted`,
      resource: { type: 'media', id: row.id },
      requestId,
      details: { bytes: row.bytes, tag: row.tag },
    },
    now,
  );
  await services.references.mediaChanged(work, tenantId, { mediaId: row.id, tags: [row.tag] }, now);
  // The tombstone stays; the bytes go once the deletion committed.
  const { blobs, logger } = services;
  if (row.blob_key) {
    const key = row.blob_key;
    work.afterCommit(
      () =>
        void blobs
          .delete(key)
          .catch((error) => logger.warn({ err: error, media_id: row.id }, 'media bytes not deleted')),
    );
  }
}
