// Proof of play routes: POST /runtime/v1/playback (the paired runtime session, or a native
// player's session), where players upload what went on glass in batches and learn what was
// counted; and GET /api/v1/playback (a project or account bearer, area reports), the daily rows as
// JSON pages or, with `Accept: text/csv` or `format=csv`, one CSV of every matching row.
import { PLAYBACK_BATCH_MAX, PlaybackQuery, PlaybackReportBatch, PLAYBACK_PAGE_MAX } from '../../sdk/contract/playback';
import { anyBearer } from '../http/auth';
import { mutation, query, reply } from '../http/route';
import { pairedRuntimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import { csvHeader, csvLine } from './playback-csv';
import { checkPlaybackFilters, ingestPlayback, listPlayback } from './playback';

/**
 * Uploads per screen a minute: a player uploads about once a minute, and a week's backlog
 * (PLAYBACK_BATCH_MAX a batch) drains at this pace in minutes without crowding other screens.
 */
const UPLOADS_PER_SCREEN_PER_MINUTE = 30;
/** A full batch is about 500 × 400 bytes of JSON. */
const BATCH_BODY_LIMIT = PLAYBACK_BATCH_MAX * 1024;
/** Rows read per query while a CSV streams. */
const CSV_CHUNK = 1000;
const PRIVATE = { 'Cache-Control': 'private, no-store' };

export const postPlayback = mutation(
  {
    auth: pairedRuntimeCookie,
    body: PlaybackReportBatch,
    bodyLimit: BATCH_BODY_LIMIT,
    rateLimits: (ctx) => [
      {
        name: 'runtime-playback',
        limit: UPLOADS_PER_SCREEN_PER_MINUTE,
        windowSeconds: 60,
        key: (ctx.principal as RuntimePrincipal).screenId,
      },
    ],
  },
  async (ctx, work) => {
    const { principal } = ctx;
    const ack = await ingestPlayback(
      ctx.services,
      work,
      { tenantId: principal.tenantId, screenId: principal.screenId, manifestRevision: principal.manifestRevision },
      ctx.body.reports,
      ctx.now,
    );
    return reply.ok(ack, { headers: { 'Cache-Control': 'no-store' } });
  },
);

function wantsCsv(accept: string | undefined, format: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  return /(^|,)\s*text\/csv\s*(;|,|$)/i.test(accept ?? '');
}

export const listPlaybackRoute = query({ auth: anyBearer, area: 'reports', query: PlaybackQuery }, async (ctx) => {
  const { services, principal } = ctx;
  const db = services.store.db;
  await checkPlaybackFilters(db, principal.tenantId, ctx.query);
  if (!wantsCsv(ctx.req.headers.accept, ctx.query.format)) {
    const page = await listPlayback(db, principal.tenantId, ctx.query, ctx.query.limit ?? PLAYBACK_PAGE_MAX);
    return reply.ok({ items: page.items, next_cursor: page.next }, { headers: PRIVATE });
  }
  // Every matching row (the cursor and limit are the JSON pages'), read in chunks as it streams.
  const first = await listPlayback(db, principal.tenantId, { ...ctx.query, cursor: undefined }, CSV_CHUNK);
  const { res } = ctx;
  res.status(200);
  res.set({
    ...ctx.answerHeaders,
    ...PRIVATE,
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': 'attachment; filename="playback.csv"',
    'X-Content-Type-Options': 'nosniff',
  });
  res.write(csvHeader());
  let page = first;
  for (;;) {
    res.write(page.items.map(csvLine).join(''));
    if (page.next === null || res.destroyed) break;
    page = await listPlayback(db, principal.tenantId, { ...ctx.query, cursor: page.next }, CSV_CHUNK);
  }
  res.end();
});
