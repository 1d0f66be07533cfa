// GET /api/v1/media, GET/PATCH/DELETE /api/v1/media/{id}, GET/HEAD /api/v1/media/{id}/content.
import {
  CANONICAL_EXTENSION,
  MEDIA_LIST_DEFAULT_LIMIT,
  MediaListQuery,
  MediaTagPatch,
  type MediaContentType,
  type MediaList,
} from '../../sdk/contract/media';
import { anyBearer, projectBearer } from '../http/auth';
import { problem } from '../problem';
import { mutation, query, reply } from '../http/route';
import { streamToClient } from '../http/streaming';
import { releaseUsedBytes } from '../tenants/tenants';
import { noneMatch, parseRange } from './byte-range';
import { MEDIA_EXPORT_EGRESS, recordEgress } from './egress';
import { decodeCursor, encodeCursor, mediaView, readyMedia } from './media';

export const listMedia = query({ auth: anyBearer, area: 'content', query: MediaListQuery }, async (ctx) => {
  const limit = ctx.query.limit ?? MEDIA_LIST_DEFAULT_LIMIT;
  let q = ctx.services.store.db
    .selectFrom('media')
    .selectAll()
    .where('tenant_id', '=', ctx.principal.tenantId)
    .where('state', '=', 'ready');
  // spec: with a tag filter, untagged media are omitted (an exact match never matches null).
  if (ctx.query.tag !== undefined) q = q.where('tag', '=', ctx.query.tag);
  if (ctx.query.kind !== undefined) q = q.where('kind', '=', ctx.query.kind);
  if (ctx.query.cursor !== undefined) {
    const after = decodeCursor(ctx.query.cursor);
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', after.createdAt),
        eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)]),
      ]),
    );
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const body: MediaList = {
    items: page.map(mediaView),
    next_cursor: rows.length > limit ? encodeCursor(page[page.length - 1]!) : null,
  };
  return reply.ok(body);
});

export const getMedia = query({ auth: anyBearer, area: 'content' }, async (ctx) => {
  const row = await readyMedia(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(mediaView(row), { revision: row.revision });
});

export const patchMedia = mutation(
  { auth: projectBearer, area: 'content', body: MediaTagPatch, ifMatch: 'optional', idempotency: 'optional' },
  async (ctx, work) => {
    const tenantId = ctx.principal.tenantId;
    const row = await readyMedia(work.db, tenantId, ctx.params.id!);
    ctx.checkRevision(row.revision);
    const tag = ctx.body.tag;
    // Writing the tag it already has changes nothing, so it bumps nothing.
    if (tag === row.tag) return reply.ok(mediaView(row), { revision: row.revision });
    const updated = { ...row, tag, revision: row.revision + 1, updated_at: ctx.now };
    await work.db
      .updateTable('media')
      .set({ tag, revision: updated.revision, updated_at: ctx.now })
      .where('id', '=', row.id)
      .execute();
    await ctx.services.events.append(
      work,
      {
        tenantId,
        type: 'media.updated',
        message: tag === null ? `media ${row.filename} untagged` : `media ${row.filename} tagged ${tag}`,
        resource: { type: 'media', id: row.id },
        requestId: ctx.requestId,
        details: { tag, previous_tag: row.tag, revision: updated.revision },
      },
      ctx.now,
    );
    // Playlists that select by either tag re-resolve in this same transaction.
    await ctx.services.references.mediaChanged(work, tenantId, { mediaId: row.id, tags: [row.tag, tag] }, ctx.now);
    return reply.ok(mediaView(updated), { revision: updated.revision });
  },
);

export const deleteMedia = mutation(
  { auth: anyBearer, area: 'content', ifMatch: 'required-in-A', idempotency: 'required-in-A' },
  async (ctx, work) => {
    const tenantId = ctx.principal.tenantId;
    const row = await readyMedia(work.db, tenantId, ctx.params.id!);
    ctx.checkRevision(row.revision);
    if (await ctx.services.references.mediaInUse(work.db, tenantId, row.id)) {
      throw problem(
        'resource_conflict',
        'a playlist that a screen shows (desired or active) references this media; remove it from those playlists first',
      );
    }
    await work.db
      .updateTable('media')
      .set({ state: 'deleted', deleted_at: ctx.now, updated_at: ctx.now, revision: row.revision + 1 })
      .where('id', '=', row.id)
      .execute();
    await releaseUsedBytes(work.db, tenantId, row.bytes);
    await ctx.services.events.append(
      work,
      {
        tenantId,
        type: 'media.deleted',
        message: `media ${row.filename} deleted`,
        resource: { type: 'media', id: row.id },
        requestId: ctx.requestId,
        details: { bytes: row.bytes, tag: row.tag },
      },
      ctx.now,
    );
    await ctx.services.references.mediaChanged(work, tenantId, { mediaId: row.id, tags: [row.tag] }, ctx.now);
    // The tombstone stays; the bytes go once the deletion committed.
    const { blobs, logger } = ctx.services;
    if (row.blob_key) {
      const key = row.blob_key;
      work.afterCommit(
        () =>
          void blobs
            .delete(key)
            .catch((error) => logger.warn({ err: error, media_id: row.id }, 'media bytes not deleted')),
      );
    }
    return reply.noContent();
  },
);

/** GET and HEAD: one byte range of the original bytes, conditional on the strong SHA-256 ETag. */
export const exportMediaContent = query({ auth: projectBearer, area: 'content' }, async (ctx) => {
  const { req, res, services } = ctx;
  const row = await readyMedia(services.store.db, ctx.principal.tenantId, ctx.params.id!);
  const etag = `"${row.sha256}"`;
  const cacheControl = 'private, no-store';
  if (noneMatch(req.headers['if-none-match'], etag)) {
    return { status: 304, headers: { ETag: etag, 'Cache-Control': cacheControl } };
  }
  // If-Range naming another representation asks for the whole object instead of the range.
  const ifRange = req.get('if-range');
  const rangeHeader = ifRange === undefined || ifRange.trim() === etag ? req.headers.range : undefined;
  const range = parseRange(rangeHeader, row.bytes);
  if (range.kind === 'refused') {
    throw problem('invalid_range', range.reason, {
      headers: { 'Content-Range': `bytes */${row.bytes}`, 'Accept-Ranges': 'bytes' },
    });
  }
  const { start, end } = range.kind === 'range' ? range : { start: 0, end: row.bytes - 1 };
  const length = end - start + 1;
  res.status(range.kind === 'range' ? 206 : 200);
  res.set({
    'Accept-Ranges': 'bytes',
    'Content-Length': String(length),
    'Content-Type': row.content_type,
    'Content-Disposition': `attachment; filename="${row.id}${CANONICAL_EXTENSION[row.content_type as MediaContentType]}"`,
    ETag: etag,
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
  });
  if (range.kind === 'range') res.setHeader('Content-Range', `bytes ${start}-${end}/${row.bytes}`);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const tenantId = ctx.principal.tenantId;
  res.once('finish', () => {
    recordEgress(services.store, tenantId, MEDIA_EXPORT_EGRESS, length, services.clock.now()).catch((error) =>
      services.logger.error({ err: error, media_id: row.id }, 'egress not recorded'),
    );
  });
  // A client that hangs up mid-transfer is not a server error; nothing is recorded for it.
  await streamToClient(req, res, services.blobs.read(row.blob_key!, { start, end }));
});
