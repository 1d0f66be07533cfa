// Media rows as the API shows them, the lookups every media route shares, and list paging.
import type { Media, MediaContentType, MediaKind } from '../../sdk/contract/media';
import { isoTime } from '../clock';
import { problem } from '../problem';
import type { Db, Tx } from '../store/store';
import type { MediaTable } from './media.tables';

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

export function encodeCursor(row: Pick<MediaTable, 'created_at' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      value[1].length <= 100
    ) {
      return { createdAt: value[0] as number, id: value[1] };
    }
  } catch {
    // fall through to the problem
  }
  throw problem('invalid_request', 'cursor: not a cursor this server issued', {
    errors: [{ field: 'cursor', code: 'invalid', detail: 'pass next_cursor unchanged' }],
  });
}
