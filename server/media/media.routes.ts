// GET /api/v1/media, GET/PATCH/DELETE /api/v1/media/{id}, GET/HEAD /api/v1/media/{id}/content.
import { CANONICAL_EXTENSION, MediaListQuery, MediaTagPatch, type MediaContentType } from '../../sdk/contract/media';
import { anyBearer, projectBearer } from '../http/auth';
import { problem } from '../problem';
import { mutation, query, reply } from '../http/route';
import { viaTrustedProxy } from '../http/client-ip';
import { offloadToProxy, sendBlobRange } from './blob-delivery';
import { cachedReadyMedia } from './ready-media-cache';
import { noneMatch, parseRange } from './byte-range';
import { MEDIA_EXPORT_EGRESS } from './egress';
import { listReadyMedia, mediaView, readyMedia, retagMedia, tombstoneMedia } from './media';

/** The export is a download of private bytes: never stored by a cache. */
const EXPORT_CACHE_CONTROL = 'private, no-store';

export const listMedia = query({ auth: anyBearer, area: 'content', query: MediaListQuery }, async (ctx) => {
  return reply.ok(await listReadyMedia(ctx.services.store.db, ctx.principal.tenantId, ctx.query));
});

export const getMedia = query({ auth: anyBearer, area: 'content' }, async (ctx) => {
  const row = await readyMedia(ctx.services.store.db, ctx.principal.tenantId, ctx.params.id!);
  return reply.ok(mediaView(row), { revision: row.revision });
});

export const patchMedia = mutation(
  { auth: projectBearer, area: 'content', body: MediaTagPatch, ifMatch: 'optional', idempotency: 'optional' },
  async (ctx, work) => {
    const row = await readyMedia(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(row.revision);
    const updated = await retagMedia(ctx.services, work, row, ctx.body.tag, ctx.now, ctx.requestId);
    return reply.ok(mediaView(updated), { revision: updated.revision });
  },
);

export const deleteMedia = mutation(
  { auth: anyBearer, area: 'content', ifMatch: 'required-in-A', idempotency: 'required-in-A' },
  async (ctx, work) => {
    const row = await readyMedia(work.db, ctx.principal.tenantId, ctx.params.id!);
    ctx.checkRevision(row.revision);
    await tombstoneMedia(ctx.services, work, row, ctx.now, ctx.requestId);
    return reply.noContent();
  },
);

/** GET and HEAD: one byte range of the original bytes, conditional on the strong SHA-256 ETag. */
export const exportMediaContent = query({ auth: projectBearer, area: 'content' }, async (ctx) => {
  const { req, res, services } = ctx;
  const row = await cachedReadyMedia(services.store, ctx.principal.tenantId, ctx.params.id!);
  const etag = `"${row.sha256}"`;
  if (noneMatch(req.headers['if-none-match'], etag)) {
    return { status: 304, headers: { ETag: etag, 'Cache-Control': EXPORT_CACHE_CONTROL } };
  }
  // If-Range naming another representation asks for the whole object instead of the range.
  const ifRange = req.headers['if-range'] as string | undefined; // one value: Node joins repeated ones
  const rangeHeader = ifRange === undefined || ifRange.trim() === etag ? req.headers.range : undefined;
  const range = parseRange(rangeHeader, row.bytes);
  if (range.kind === 'refused') {
    throw problem('invalid_range', range.reason, {
      headers: { 'Content-Range': `bytes */${row.bytes}`, 'Accept-Ranges': 'bytes' },
    });
  }
  const { start, end } = range.kind === 'range' ? range : { start: 0, end: row.bytes - 1 };
  const length = end - start + 1;
  // Set one by one on the response (Express's res.set looks up every value's type).
  res.statusCode = range.kind === 'range' ? 206 : 200;
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Length', length);
  res.setHeader('Content-Type', row.content_type);
  res.setHeader(
    'Content-Disposition',
    `attachment; filename="${row.id}${CANONICAL_EXTENSION[row.content_type as MediaContentType]}"`,
  );
  res.setHeader('ETag', etag);
  res.setHeader('Cache-Control', EXPORT_CACHE_CONTROL);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (range.kind === 'range') res.setHeader('Content-Range', `bytes ${start}-${end}/${row.bytes}`);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const tenantId = ctx.principal.tenantId;
  res.on('finish', () => services.egressLedger.record(tenantId, MEDIA_EXPORT_EGRESS, length, services.clock.now()));
  // Offloaded, the range is recorded as sent once nginx has the answer: Marquee no longer sees the bytes go.
  const key = row.blob_key!;
  const accel = services.config.accelRedirect;
  if (accel !== undefined && offloadToProxy(req, res, services.blobs, key, accel, viaTrustedProxy(ctx))) return;
  // A client that hangs up mid-transfer is not a server error; nothing is recorded for it.
  await sendBlobRange(req, res, services.blobs, key, start, end);
});
