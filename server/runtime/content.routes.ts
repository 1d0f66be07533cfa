// Protected content on the runtime origin: GET (and HEAD) /content/v1/manifests/{rev}/media/{id}
// for media a granted manifest of this screen shows, and …/releases/{id}/package for the normalized
// package of a release it shows (the kiosk's offline mirror). One byte range, Fetch Metadata,
// egress budgets (the whole response reserved up front), and completed bytes in the egress ledger.
import { CANONICAL_EXTENSION, type MediaContentType } from '../../sdk/contract/media';
import { WEBAPP_PACKAGE_CONTENT_TYPE } from '../../sdk/contract/manifest';
import { ProblemError, problem } from '../problem';
import { query, type AnyContext, type Authenticator, type Principal, type RequestContext } from '../http/route';
import { deliverablePackage } from '../applications/release-package';
import { noneMatch, parseRange } from '../media/byte-range';
import { offloadToProxy, sendBlobRange } from '../media/blob-delivery';
import { viaTrustedProxy } from '../http/client-ip';
import { cachedReadyMedia } from '../media/ready-media-cache';
import { cachedRuntimeCookie, deviceCookie, pairedRuntimeCookie } from '../pairing/pairing.auth';
import { isNativeRequest } from '../pairing/native.auth';
import { DEVICE_COOKIE, readCookie } from '../pairing/pairing-cookies';
import { fetchMetadataOf } from '../release-host/fetch-metadata';
import { screenStateOf } from '../screens/screens';
import { contentFetchConflict } from './content-fetch-metadata';
import type { ByteBudget, EgressReservation } from './egress-budgets';
import { cachedManifest, grantedManifest, inManifest } from '../manifests/manifest-store';
import type { Store } from '../store/store';
import { watchedCache } from '../store/watched-cache';

/** spec: runtime delivery records completed bytes as egress, like the media export does. */
export const RUNTIME_MEDIA_EGRESS = 'runtime_media_delivery';
export const RUNTIME_PACKAGE_EGRESS = 'runtime_package_delivery';
/** Requests per client per minute: a player seeking through video makes many small range requests. */
const CONTENT_REQUESTS_PER_CLIENT_PER_MINUTE = 1200;
/** Bytes of one URL never change (the URL names the manifest revision and the content). */
const IMMUTABLE_PRIVATE = 'private, max-age=31536000, immutable';

/** Who fetches protected content: a runtime session, or (packages) the paired device itself. */
export interface ContentPrincipal extends Principal {
  realm: 'runtime' | 'device';
  tenantId: string;
  screenId: string;
  screenState: string;
  /** The client the per-client budgets count: the runtime session or the device credential. */
  clientId: string;
}

const runtimeContent: Authenticator<ContentPrincipal> = {
  realm: 'runtime',
  async authenticate(ctx) {
    const p = await cachedRuntimeCookie.authenticate(ctx);
    return {
      realm: 'runtime',
      scope: p.scope,
      tenantId: p.tenantId,
      screenId: p.screenId,
      screenState: p.screenState,
      clientId: p.runtimeSessionId,
    };
  },
};

/**
 * Packages: the paired-device cookie (what a kiosk's mirror holds), or else a paired runtime
 * session. Anonymous (public-id) sessions never get package bytes.
 */
const pairedContent: Authenticator<ContentPrincipal> = {
  realm: 'device',
  async authenticate(ctx) {
    if (readCookie(ctx.req, DEVICE_COOKIE) !== undefined) {
      const d = await deviceCookie.authenticate(ctx);
      const screenState = await screenStateOf(ctx.services.store.db, d.screenId);
      return {
        realm: 'device',
        scope: d.scope,
        tenantId: d.tenantId,
        screenId: d.screenId,
        screenState,
        clientId: d.deviceId,
      };
    }
    const p = await pairedRuntimeCookie.authenticate(ctx);
    return {
      realm: 'runtime',
      scope: p.scope,
      tenantId: p.tenantId,
      screenId: p.screenId,
      screenState: p.screenState,
      clientId: p.runtimeSessionId,
    };
  },
};

type ContentContext = RequestContext<undefined, Record<string, never>, ContentPrincipal>;

const clientBudget = (ctx: ContentContext) => [
  {
    name: 'runtime-content-client',
    limit: CONTENT_REQUESTS_PER_CLIENT_PER_MINUTE,
    windowSeconds: 60,
    key: ctx.principal.clientId,
  },
];

function byteBudgets(ctx: ContentContext): ByteBudget[] {
  const limits = ctx.services.tuning.egressLimits;
  const p = ctx.principal;
  return [
    { name: 'runtime-egress-client', limitBytes: limits.clientBytesPerMinute, windowSeconds: 60, key: p.clientId },
    { name: 'runtime-egress-screen', limitBytes: limits.screenBytesPerMinute, windowSeconds: 60, key: p.screenId },
    { name: 'runtime-egress-account', limitBytes: limits.accountBytesPerMinute, windowSeconds: 60, key: p.tenantId },
  ];
}

/** Reserves the whole response before its first byte, so concurrent requests cannot overrun a budget together. */
async function reserveEgress(ctx: ContentContext, bytes: number): Promise<EgressReservation> {
  try {
    return await ctx.services.egress.reserve(byteBudgets(ctx), bytes, ctx.now);
  } catch (error) {
    // spec: byte-budget denials carry no RateLimit headers (the request budget's admission added them).
    delete ctx.answerHeaders['RateLimit-Policy'];
    delete ctx.answerHeaders.RateLimit;
    throw error;
  }
}

function checkFetchMetadata(ctx: AnyContext): void {
  // A native player is no browser: whatever its HTTP stack sends as Fetch Metadata describes nothing.
  if (isNativeRequest(ctx)) return;
  const conflict = contentFetchConflict(fetchMetadataOf(ctx.req.headers));
  if (conflict) throw problem('forbidden', `contradictory Fetch Metadata: ${conflict}`);
}

interface Delivery {
  blobKey: string;
  bytes: number;
  contentType: string;
  etag: string;
  disposition: string;
  extraHeaders: Record<string, string>;
  egressKind: string;
}

/**
 * What a 304 and a 2xx share: the entity tag, caching and the route's own headers, set one by one
 * (Express's res.set looks up every value's type).
 */
function setRepresentationHeaders(res: ContentContext['res'], d: Delivery): void {
  res.setHeader('ETag', d.etag);
  res.setHeader('Cache-Control', IMMUTABLE_PRIVATE);
  for (const name in d.extraHeaders) res.setHeader(name, d.extraHeaders[name]!);
}

/** One byte range of an immutable blob, conditional on its strong ETag, within the egress budgets. */
async function deliver(ctx: ContentContext, d: Delivery): Promise<void> {
  const { req, res, services } = ctx;
  if (noneMatch(req.headers['if-none-match'], d.etag)) {
    res.statusCode = 304;
    setRepresentationHeaders(res, d);
    res.end();
    return;
  }
  const ifRange = req.headers['if-range'] as string | undefined; // one value: Node joins repeated ones
  const range = parseRange(ifRange === undefined || ifRange.trim() === d.etag ? req.headers.range : undefined, d.bytes);
  if (range.kind === 'refused') {
    throw problem('invalid_range', range.reason, {
      headers: { 'Content-Range': `bytes */${d.bytes}`, 'Accept-Ranges': 'bytes' },
    });
  }
  const { start, end } = range.kind === 'range' ? range : { start: 0, end: d.bytes - 1 };
  const length = end - start + 1;
  const reservation = await reserveEgress(ctx, req.method === 'HEAD' ? 0 : length);
  // A client gone while the budgets were asked: its 'close' has passed, nothing will be sent.
  if (res.destroyed) return void services.egress.settle(reservation, 0);
  let sent = 0;
  // What did not go out (a client that hung up) is given back; a completed answer is in the ledger.
  const tenantId = ctx.principal.tenantId;
  const recorded = req.method !== 'HEAD';
  res.on('close', () => {
    void services.egress.settle(reservation, sent);
    if (recorded && res.writableFinished)
      services.egressLedger.record(tenantId, d.egressKind, length, services.clock.now());
  });

  res.statusCode = range.kind === 'range' ? 206 : 200;
  setRepresentationHeaders(res, d);
  res.setHeader('Accept-Ranges', 'bytes');
  res.setHeader('Content-Length', length);
  res.setHeader('Content-Type', d.contentType);
  res.setHeader('Content-Disposition', d.disposition);
  if (range.kind === 'range') res.setHeader('Content-Range', `bytes ${start}-${end}/${d.bytes}`);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  // Offloaded to nginx, the whole range counts as sent: Marquee no longer sees the bytes go.
  const accel = services.config.accelRedirect;
  if (accel !== undefined && offloadToProxy(req, res, services.blobs, d.blobKey, accel, viaTrustedProxy(ctx))) {
    sent = length;
    return;
  }
  await sendBlobRange(req, res, services.blobs, d.blobKey, start, end, (bytes) => {
    sent += bytes;
  });
}

/** A not_found lookup as no content (the route answers its own not_found, the same for every reason). */
function notFoundAsNone(error: unknown): undefined {
  if (error instanceof ProblemError && error.code === 'not_found') return undefined;
  throw error;
}

/** Headers of every protected content answer besides its own Vary. */
const CONTENT_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Referrer-Policy': 'no-referrer',
};

const MEDIA_HEADERS = { ...CONTENT_HEADERS, Vary: 'Cookie' };
const PACKAGE_HEADERS = { ...CONTENT_HEADERS, Vary: 'Cookie, Authorization' };

/** Grants found, kept at most this long: what a minted revision names never changes (D-337). */
const GRANT_CACHE_MS = 5_000;
const MAX_CACHED_GRANTS = 10_000;

/** `inManifest` answers that were yes, by screen, revision, kind and id; emptied by any write of the rows. */
export const namedContentCache = watchedCache<boolean>('named-content', {
  ttlMs: GRANT_CACHE_MS,
  maxEntries: MAX_CACHED_GRANTS,
  watches: [{ table: 'runtime_manifest_content' }],
});

/** Whether the minted revision names this content (a yes is kept; a no is read again next time). */
function isNamed(store: Store, screenId: string, revision: number, kind: 'media' | 'release', id: string) {
  return namedContentCache(store).get(
    `${screenId}\u0000${revision}\u0000${kind}\u0000${id}`,
    () => inManifest(store.db, screenId, revision, kind, id),
    (named) => named,
  );
}

/**
 * One route for content a manifest names: the revision must still grant content to this screen,
 * name this content, and `find` must know it (else not_found, the same for every reason); then
 * its bytes are delivered.
 */
function grantedContent(
  kind: 'media' | 'release',
  param: string,
  find: (ctx: ContentContext, id: string) => Promise<Delivery | undefined>,
) {
  return async (ctx: ContentContext) => {
    checkFetchMetadata(ctx);
    const { services, principal } = ctx;
    const db = services.store.db;
    // Outside a transaction, the revision may come from the short-lived cache (D-372).
    const revision = ctx.params.manifest_revision!;
    const manifest = await grantedManifest(services, db, principal, revision, ctx.now, cachedManifest);
    const id = ctx.params[param]!;
    const delivery = (await isNamed(services.store, principal.screenId, manifest.revision, kind, id))
      ? await find(ctx, id)
      : undefined;
    if (!delivery) throw problem('not_found', `this manifest shows no such ${kind}`);
    await deliver(ctx, delivery);
  };
}

export const getManifestMedia = query(
  { auth: runtimeContent, rateLimits: clientBudget },
  grantedContent('media', 'media_id', async (ctx, mediaId) => {
    const media = await cachedReadyMedia(ctx.services.store, ctx.principal.tenantId, mediaId).catch(notFoundAsNone);
    if (!media?.blob_key) return undefined;
    return {
      blobKey: media.blob_key,
      bytes: media.bytes,
      contentType: media.content_type,
      etag: `"${media.sha256}"`,
      disposition: `inline; filename="${media.id}${CANONICAL_EXTENSION[media.content_type as MediaContentType] ?? ''}"`,
      extraHeaders: MEDIA_HEADERS,
      egressKind: RUNTIME_MEDIA_EGRESS,
    };
  }),
);

/** The release's stored package (built at publication; a minted manifest never names a release without one). */
export const getManifestPackage = query(
  { auth: pairedContent, rateLimits: clientBudget },
  grantedContent('release', 'release_id', async (ctx, releaseId) => {
    const pkg = await deliverablePackage(ctx.services.store.db, ctx.principal.tenantId, releaseId);
    if (!pkg) return undefined;
    return {
      blobKey: pkg.blob_key,
      bytes: pkg.bytes,
      contentType: WEBAPP_PACKAGE_CONTENT_TYPE,
      etag: `"${pkg.sha256}"`,
      disposition: `attachment; filename="${pkg.id}.tar.gz"`,
      extraHeaders: PACKAGE_HEADERS,
      egressKind: RUNTIME_PACKAGE_EGRESS,
    };
  }),
);
