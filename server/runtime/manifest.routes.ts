// GET /runtime/v1/manifest: the screen's current manifest with this session's placement
// capabilities, and 304 when the player already holds it. The validator names the manifest
// revision, the content-access generation, the session, and (when the manifest carries
// capabilities) the minute the capabilities were issued in, so a 304 never leaves a player holding
// handles with less than four minutes to live.
import { sha256Hex } from '../keys';
import { query, type Reply } from '../http/route';
import { runtimeCookie, type RuntimePrincipal } from '../pairing/pairing.auth';
import { releaseOriginOf } from '../release-host/host-label';
import { renderManifest } from '../manifests/manifest-compose';
import { MANIFEST_FEATURE_UPCOMING, MANIFEST_FEATURES_HEADER } from '../../sdk/contract/manifest';
import { currentManifest } from '../manifests/minting';
import { PLACEMENT_CAPABILITY_TTL_MS, sealPlacementCapability } from './placement-capability';

/** Capabilities are reissued at least this often: a 304 is answered only within the minute they were issued in. */
export const CAPABILITY_REFRESH_WINDOW_MS = 60_000;
const NO_STORE = 'private, no-store'; // capability handles never belong in an HTTP cache

/** The session's part of the tag (a digest, so the tag does not carry the session id), remembered per session. */
const SESSION_TAGS = 10_000;
const sessionTags = new Map<string, string>();
function sessionTag(sessionId: string): string {
  let tag = sessionTags.get(sessionId);
  if (tag === undefined) {
    if (sessionTags.size >= SESSION_TAGS) sessionTags.clear();
    sessionTags.set(sessionId, (tag = sha256Hex(sessionId).slice(0, 10)));
  }
  return tag;
}

function entityTag(
  principal: RuntimePrincipal,
  revision: number,
  capabilityWindow: number | undefined,
  upcoming: boolean,
): string {
  const session = sessionTag(principal.runtimeSessionId);
  const base = `m${revision}.g${principal.contentAccessGeneration}.s${session}${upcoming ? '.u' : ''}`;
  return `"${capabilityWindow === undefined ? base : `${base}.c${capabilityWindow}`}"`;
}

/** The client's tag when it names what it would get now; manifests without capabilities carry no window. */
function unchanged(header: string, principal: RuntimePrincipal, window: number, upcoming: boolean): string | undefined {
  const plain = entityTag(principal, principal.manifestRevision, undefined, upcoming);
  const windowed = entityTag(principal, principal.manifestRevision, window, upcoming);
  for (const raw of header.split(',')) {
    const tag = raw.trim();
    if (tag === plain || tag === windowed) return tag;
  }
  return undefined;
}

export const getManifest = query({ auth: runtimeCookie }, async (ctx): Promise<Reply> => {
  const principal = ctx.principal;
  const window = Math.floor(ctx.now / CAPABILITY_REFRESH_WINDOW_MS);
  // Optional members only for a client that names them (the tag differs, so a 304 never mixes them).
  const features = String(ctx.req.headers[MANIFEST_FEATURES_HEADER.toLowerCase()] ?? '').split(',');
  const upcoming = features.some((f) => f.trim() === MANIFEST_FEATURE_UPCOMING);
  const ifNoneMatch = ctx.req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const tag = unchanged(ifNoneMatch, principal, window, upcoming);
    if (tag !== undefined) return { status: 304, headers: { ETag: tag, 'Cache-Control': NO_STORE } };
  }

  const { services } = ctx;
  const record = await currentManifest(services, principal.screenId);
  const expiresAt = ctx.now + PLACEMENT_CAPABILITY_TTL_MS;
  const stored = upcoming ? record.stored : { ...record.stored, upcoming: undefined };
  const manifest = renderManifest(stored, {
    screenId: principal.screenId,
    revision: record.revision,
    generation: principal.contentAccessGeneration,
    releaseOrigin: (label) => releaseOriginOf(services.config, label),
    capability: (placement) => ({
      handle: sealPlacementCapability(services.keys, {
        runtimeSessionId: principal.runtimeSessionId,
        tenantId: principal.tenantId,
        screenId: principal.screenId,
        applicationId: placement.applicationId,
        releaseId: placement.releaseId,
        pageId: placement.pageId,
        placementId: placement.placementId,
        manifestRevision: record.revision,
        contentGeneration: principal.contentAccessGeneration,
        // spec: anonymous sessions read; paired sessions (the paired-device profile) also write.
        operations: principal.paired ? 'read-write' : 'read',
        expiresAt,
      }),
      expiresAt,
    }),
  });
  const etag = entityTag(principal, record.revision, record.hasCapabilities ? window : undefined, upcoming);
  return { status: 200, body: manifest, headers: { ETag: etag, 'Cache-Control': NO_STORE } };
});
