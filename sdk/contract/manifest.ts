// The runtime manifest (schemaVersion 2, camelCase, closed objects) that a player fetches from
// GET /runtime/v1/manifest, its validator, and the URL binding rule: every media `src` and package
// `url` must be the exact manifest-bound route on the manifest's own origin, or the whole manifest
// is rejected before anything is fetched.
import { IANAZone } from 'luxon';
import { z } from 'zod';
import {
  AdvanceMs,
  CanvasBackground,
  Layer,
  MEDIA_CONTENT_FITS,
  PageId,
  PlacementEnter,
  SELECTOR_MAX_ITEMS,
  TRANSITION_TYPES,
  TransitionDurationMs,
  VIEWPORT_FITS,
} from './canvas';
import { LIMITS, MEDIA_MAX_BYTES, PROTOCOL_VERSION } from './limits';
import { ScreenSyncGroup, WallRegion } from './screens';
import { Visibility } from './visibility';

export const MANIFEST_SCHEMA_VERSION = 2;
export const CANVAS_CONTRACT_VERSION = 'marquee.canvas/v1';
export const WEBAPP_PACKAGE_VERSION = 'marquee.webapp-package/v1';
export const WEBAPP_PACKAGE_CONTENT_TYPE = 'application/vnd.marquee.webapp-package+tar+gzip';
/** Normalized package ceiling: the expanded limit plus tar overhead (reference capabilities). */
export const APPLICATION_PACKAGE_MAX_BYTES = 272_629_760;
/** Placement capability handles are opaque, at least 32 characters, and never enter a frame. */
export const CAPABILITY_HANDLE_MIN_LENGTH = 32;
/** Our addition: at most this many tracks in one soundtrack (the selector ceiling, for symmetry). */
export const SOUNDTRACK_MAX_TRACKS = 32;
export const SOUNDTRACK_CONTENT_TYPES = ['audio/mpeg'] as const;

const prefixedId = (prefix: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]{1,120}$`), `must be ${prefix}_ followed by letters, digits, _ or -`);

export const ManifestRevision = prefixedId('man');
export const MediaId = prefixedId('med');
export const ReleaseId = prefixedId('rel');
export const ApplicationId = prefixedId('app');
const OpaqueId = z.string().regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1 to 128 letters, digits, ., _ or -');
const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, 'must be 64 lowercase hex characters');
const Instant = z.iso.datetime({ offset: true });
const Positive = z.number().positive();
const Size = z.strictObject({ width: Positive, height: Positive });
/** RFC 6381 codec list as the server derives it; absence does not mean unsupported. */
const Codecs = z
  .string()
  .max(128)
  .regex(/^[A-Za-z0-9]{3,9}(\.[A-Za-z0-9]{1,10}){0,5}(,[A-Za-z0-9]{3,9}(\.[A-Za-z0-9]{1,10}){0,5})*$/);

export const RuntimeImageItem = z.strictObject({
  mediaId: MediaId,
  src: z.string(),
  intrinsicSize: Size,
  sha256: Sha256,
  bytes: z.number().int().min(1).max(MEDIA_MAX_BYTES),
  contentType: z.enum(['image/png', 'image/jpeg', 'image/webp', 'image/gif']),
});
export const RuntimeVideoItem = z.strictObject({
  mediaId: MediaId,
  src: z.string(),
  intrinsicSize: Size,
  sha256: Sha256,
  bytes: z.number().int().min(1).max(MEDIA_MAX_BYTES),
  contentType: z.enum(['video/mp4', 'video/webm']),
  codecs: Codecs.optional(),
});

export const RuntimeImageContent = z.strictObject({
  type: z.literal('image'),
  items: z.array(RuntimeImageItem).min(1).max(SELECTOR_MAX_ITEMS),
  oneAtATime: z.boolean(),
  grantId: OpaqueId,
  alt: z.string().max(300).optional(),
  dwellMs: AdvanceMs.optional(),
});
export const RuntimeVideoContent = z.strictObject({
  type: z.literal('video'),
  items: z.array(RuntimeVideoItem).min(1).max(SELECTOR_MAX_ITEMS),
  oneAtATime: z.boolean(),
  muted: z.boolean(),
  loop: z.boolean(),
  grantId: OpaqueId,
});
export const RuntimeIframeContent = z.strictObject({
  type: z.literal('iframe'),
  src: z.string().regex(/^https:\/\//, 'must be an https:// URL'),
  title: z.string().min(1).max(200),
});
export const RuntimeApplicationPackage = z.strictObject({
  version: z.literal(WEBAPP_PACKAGE_VERSION),
  url: z.string(),
  bytes: z.number().int().min(1).max(APPLICATION_PACKAGE_MAX_BYTES),
  sha256: Sha256,
  entrypoint: z.literal('index.html'),
  contentType: z.literal(WEBAPP_PACKAGE_CONTENT_TYPE),
});
/** An http(s) origin with nothing after the authority: where the release is served. */
const ReleaseOrigin = z.string().refine((s) => {
  try {
    const url = new URL(s);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === s;
  } catch {
    return false;
  }
}, 'must be an http(s) origin such as https://<label>.release.example.com');
export const RuntimeApplicationContent = z.strictObject({
  type: z.literal('application'),
  applicationId: ApplicationId,
  releaseId: ReleaseId,
  /** The launch route (POST) on the runtime origin; bound like media URLs. */
  launchUrl: z.string(),
  /** The release host origin the frame is loaded from and the bridge talks to. */
  origin: ReleaseOrigin,
  protocol: z.literal(PROTOCOL_VERSION),
  grantId: OpaqueId,
  package: RuntimeApplicationPackage,
});

const Rect = z.strictObject({ x: z.number(), y: z.number(), width: Positive, height: Positive });
const placementBase = { id: PageId, rect: Rect, layer: Layer, enter: PlacementEnter.optional() };

export const RuntimeApplicationPlacement = z.strictObject({
  ...placementBase,
  content: RuntimeApplicationContent,
  contentFit: z.literal('fill'),
  controller: z.boolean().optional(),
  /** Parent-only: sent as Marquee-Placement-Capability on runtime KV calls; never given to the frame. */
  capabilityHandle: z.string().min(CAPABILITY_HANDLE_MIN_LENGTH).max(4096),
  capabilityExpiresAt: Instant,
});
export const RuntimeImagePlacement = z.strictObject({
  ...placementBase,
  content: RuntimeImageContent,
  contentFit: z.enum(MEDIA_CONTENT_FITS),
});
export const RuntimeVideoPlacement = z.strictObject({
  ...placementBase,
  content: RuntimeVideoContent,
  contentFit: z.enum(MEDIA_CONTENT_FITS),
});
export const RuntimeIframePlacement = z.strictObject({
  ...placementBase,
  content: RuntimeIframeContent,
  contentFit: z.literal('fill'),
});
export const RuntimePlacement = z.union([
  RuntimeApplicationPlacement,
  RuntimeImagePlacement,
  RuntimeVideoPlacement,
  RuntimeIframePlacement,
]);

export const RuntimeAdvance = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('duration'), afterMs: AdvanceMs }),
  /** maxMs is the backstop when the controlling application never calls page.advance. */
  z.strictObject({ mode: z.literal('application'), maxMs: AdvanceMs }),
  /** maxMs is server-computed from the resolved media lengths. */
  z.strictObject({ mode: z.literal('media_end'), maxMs: AdvanceMs }),
]);

export const RuntimePage = z
  .strictObject({
    contractVersion: z.literal(CANVAS_CONTRACT_VERSION),
    id: PageId,
    canvas: z.strictObject({
      width: Positive,
      height: Positive,
      viewportFit: z.enum(VIEWPORT_FITS),
      background: CanvasBackground,
    }),
    transition: z.strictObject({ type: z.enum(TRANSITION_TYPES), durationMs: TransitionDurationMs }),
    advance: RuntimeAdvance,
    /** Carried verbatim in its write shape; evaluated by the player in the manifest timezone. */
    visibility: Visibility.optional(),
    /** Ours: the page is an adslot (its house fallback shows until bookings exist); proof of play counts impressions by it. */
    slot: z.strictObject({ key: PageId }).optional(),
    placements: z.array(RuntimePlacement).min(1).max(LIMITS.playlist_max_items_per_page),
  })
  .superRefine((page, ctx) => {
    const seen = new Set<string>();
    page.placements.forEach((p, i) => {
      if (seen.has(p.id))
        ctx.addIssue({
          code: 'custom',
          path: ['placements', i, 'id'],
          message: `placement id "${p.id}" is not unique on the page`,
        });
      seen.add(p.id);
    });
  });

/**
 * Our addition (the reference contract has no audio): the playlist's soundtrack, resolved like
 * media items. Tracks play in order and loop; a page change never restarts them.
 */
export const RuntimeSoundtrackTrack = z.strictObject({
  mediaId: MediaId,
  src: z.string(),
  sha256: Sha256,
  bytes: z.number().int().min(1).max(MEDIA_MAX_BYTES),
  contentType: z.enum(SOUNDTRACK_CONTENT_TYPES),
  durationMs: z.number().int().min(1),
});
export const RuntimeSoundtrack = z.strictObject({
  grantId: OpaqueId,
  tracks: z.array(RuntimeSoundtrackTrack).min(1).max(SOUNDTRACK_MAX_TRACKS),
});

/**
 * Our addition: the screen plays in lockstep with the other screens of its sync group that show
 * the same playlist. Every member computes its page at an instant from the pages, this epoch and
 * the synchronized clock (sdk/lockstep/timeline.ts), with no messages per page.
 */
export const RuntimeSync = z.strictObject({
  group: ScreenSyncGroup,
  /** When the group's timeline begins, on its first page: the same for every member of the playlist revision. */
  epoch: Instant,
  /** A video wall's screen shows only this part of every page's canvas, scaled to its viewport. */
  wallRegion: WallRegion.optional(),
});
export type RuntimeSync = z.infer<typeof RuntimeSync>;

/**
 * Our addition: what the screen shows from its next boundary (`at`, equal to `nextBoundaryAt`), so
 * a player cut off from the server at that instant still switches on time. The server composes it
 * from the resolution at `at`; its media are granted under this manifest's revision (their `src`
 * are this revision's routes) and cached with the rest. Application placements are never here:
 * their capabilities and launches need the server. Played by the player as a derived loop until
 * the reminted revision arrives (docs/decisions.md, "Offline switch at a boundary").
 */
/**
 * A client names the optional manifest members it understands in this request header; the server
 * leaves out those it does not name, so an older player (closed objects) keeps accepting manifests.
 */
export const MANIFEST_FEATURES_HEADER = 'Marquee-Manifest-Features';
export const MANIFEST_FEATURE_UPCOMING = 'upcoming';

export const RuntimeUpcoming = z.strictObject({
  at: Instant,
  playlistId: z.string().min(1).max(128),
  playlistRevision: z.number().int().min(0),
  pages: z.array(RuntimePage).min(1).max(LIMITS.playlist_max_pages),
});
export type RuntimeUpcoming = z.infer<typeof RuntimeUpcoming>;

export const RuntimeManifest = z
  .strictObject({
    schemaVersion: z.literal(MANIFEST_SCHEMA_VERSION),
    manifestRevision: ManifestRevision,
    grantId: OpaqueId,
    contentGeneration: z.number().int().min(0),
    screenId: z.string().min(1).max(128),
    screenLabel: z.string().min(1).max(120),
    playlistId: z.string().min(1).max(128).optional(),
    playlistRevision: z.number().int().min(0),
    generatedAt: Instant,
    timezone: z
      .string()
      .min(1)
      .max(64)
      .refine((zone) => IANAZone.isValidZone(zone), 'must be a known IANA time zone')
      .optional(),
    /** Empty while no playlist is assigned: the player shows its idle state. */
    pages: z.array(RuntimePage).max(LIMITS.playlist_max_pages),
    soundtrack: RuntimeSoundtrack.optional(),
    /** Our addition: the screen is archived; show dark glass (no pages, no content grants). */
    darkened: z.literal(true).optional(),
    sync: RuntimeSync.optional(),
    /**
     * Our addition: the next instant the server's playlist schedule (or a takeover's end) may switch
     * what the screen shows; the player fetches its manifest again then, even if its stream is down.
     */
    nextBoundaryAt: Instant.optional(),
    upcoming: RuntimeUpcoming.optional(),
    /**
     * Our addition: the pages are a takeover's. A change into or out of a takeover cuts in as soon
     * as the new first page is ready, instead of waiting for the page on glass to end.
     */
    takeover: z.literal(true).optional(),
  })
  .superRefine((m, ctx) => {
    const checkPages = (pages: readonly RuntimePage[], at: (string | number)[]) => {
      const seen = new Set<string>();
      pages.forEach((page, i) => {
        if (seen.has(page.id))
          ctx.addIssue({ code: 'custom', path: [...at, i, 'id'], message: `page id "${page.id}" is not unique` });
        seen.add(page.id);
        if (m.darkened) ctx.addIssue({ code: 'custom', path: [...at, i], message: 'a darkened manifest has no pages' });
        if (page.visibility && m.timezone === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: [...at, i, 'visibility'],
            message: 'a page with visibility needs the manifest timezone',
          });
        }
      });
    };
    checkPages(m.pages, ['pages']);
    if (!m.upcoming) return;
    checkPages(m.upcoming.pages, ['upcoming', 'pages']);
    if (m.nextBoundaryAt === undefined || Date.parse(m.upcoming.at) !== Date.parse(m.nextBoundaryAt))
      ctx.addIssue({ code: 'custom', path: ['upcoming', 'at'], message: 'must equal nextBoundaryAt' });
    m.upcoming.pages.forEach((page, i) =>
      page.placements.forEach((p, j) => {
        if (p.content.type === 'application')
          ctx.addIssue({
            code: 'custom',
            path: ['upcoming', 'pages', i, 'placements', j],
            message: 'upcoming pages carry no application placements',
          });
      }),
    );
  });

export type RuntimeManifest = z.infer<typeof RuntimeManifest>;
export type RuntimePage = z.infer<typeof RuntimePage>;
export type RuntimePlacement = z.infer<typeof RuntimePlacement>;
export type RuntimeApplicationPlacement = z.infer<typeof RuntimeApplicationPlacement>;
export type RuntimeImagePlacement = z.infer<typeof RuntimeImagePlacement>;
export type RuntimeVideoPlacement = z.infer<typeof RuntimeVideoPlacement>;
export type RuntimeIframePlacement = z.infer<typeof RuntimeIframePlacement>;
export type RuntimeApplicationContent = z.infer<typeof RuntimeApplicationContent>;
export type RuntimeImageContent = z.infer<typeof RuntimeImageContent>;
export type RuntimeVideoContent = z.infer<typeof RuntimeVideoContent>;
export type RuntimeIframeContent = z.infer<typeof RuntimeIframeContent>;
export type RuntimeAdvance = z.infer<typeof RuntimeAdvance>;
export type RuntimeSoundtrack = z.infer<typeof RuntimeSoundtrack>;
export type RuntimeSoundtrackTrack = z.infer<typeof RuntimeSoundtrackTrack>;

// ---- Placements by content type ----
// TypeScript narrows a union only by a member of the object itself, and a placement's discriminant
// is `content.type`. These lift it, so `switch`/`if` narrow the whole placement without casts; they
// work for any placement union of that shape (the server's stored placements too).

type WithContent = { content: { type: string } };
export type PlacementKind = RuntimePlacement['content']['type'];
/** The members of a placement union whose content is of kind K. */
export type PlacementOf<P extends WithContent, K extends P['content']['type']> = Extract<P, { content: { type: K } }>;
/** A placement beside its content type: `switch (k.kind)` narrows `k.placement`. */
export type KindedPlacement<P extends WithContent> = P extends WithContent
  ? { kind: P['content']['type']; placement: P }
  : never;

export function kindOfPlacement<P extends WithContent>(placement: P): KindedPlacement<P> {
  return { kind: placement.content.type, placement } as KindedPlacement<P>;
}

export function isPlacementOf<P extends WithContent, K extends P['content']['type']>(
  placement: P,
  kind: K,
): placement is PlacementOf<P, K> {
  return placement.content.type === kind;
}

/** The placement as kind K, or a TypeError: for code (and tests) that knows what a page holds. */
export function placementOf<P extends WithContent, K extends P['content']['type']>(
  placement: P,
  kind: K,
): PlacementOf<P, K> {
  if (!isPlacementOf(placement, kind)) throw new TypeError(`placement shows ${placement.content.type}, not ${kind}`);
  return placement;
}

/** The pages whose content a manifest grants: its own and its upcoming ones (to cache and mirror). */
export function grantedPages(manifest: RuntimeManifest): RuntimePage[] {
  return manifest.upcoming ? [...manifest.pages, ...manifest.upcoming.pages] : manifest.pages;
}

// ---- URL binding ----

export const mediaRoute = (manifestRevision: string, mediaId: string) =>
  `/content/v1/manifests/${manifestRevision}/media/${mediaId}`;
export const packageRoute = (manifestRevision: string, releaseId: string) =>
  `/content/v1/manifests/${manifestRevision}/releases/${releaseId}/package`;
export const launchRoute = (manifestRevision: string, releaseId: string) =>
  `/runtime/v1/manifests/${manifestRevision}/releases/${releaseId}/launch`;

const ABSOLUTE_HTTP = /^https?:\/\/[^/?#\\]*(\/.*)?$/i;
const HAS_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Why `raw` is not exactly `expectedPath` on `runtimeOrigin`, or null when it is. `raw` may be
 * absolute or root-relative; it must resolve to the same scheme, host and port (default ports
 * normalized), carry no user info, query or fragment, and its path must be the expected route
 * byte for byte (no dot segments, no re-encoding, no backslashes).
 */
export function boundUrlViolation(raw: string, runtimeOrigin: string, expectedPath: string): string | null {
  if (raw.includes('?') || raw.includes('#')) return 'must carry no query or fragment';
  let resolved: URL;
  let origin: string;
  try {
    origin = new URL(runtimeOrigin).origin;
    resolved = new URL(raw, origin);
  } catch {
    return 'is not a URL';
  }
  if (resolved.username !== '' || resolved.password !== '' || raw.includes('@')) return 'must carry no user info';
  if (resolved.origin !== origin) return `must resolve to the manifest origin ${origin}`;
  let rawPath: string;
  if (HAS_SCHEME.test(raw)) {
    const match = ABSOLUTE_HTTP.exec(raw);
    if (!match) return 'must be an http(s) URL or a root-relative path';
    rawPath = match[1] ?? '';
  } else if (raw.startsWith('/') && !raw.startsWith('//') && !raw.startsWith('/\\')) {
    rawPath = raw;
  } else {
    return 'must be absolute or root-relative';
  }
  if (rawPath !== expectedPath || resolved.pathname !== expectedPath)
    return `must be exactly the bound route ${expectedPath}`;
  return null;
}

export interface ManifestIssue {
  /** JSON path such as `pages.0.placements.1.content.items.0.src`. */
  path: string;
  message: string;
}

/** Every URL in the manifest that breaks the binding rule (empty when all are bound). */
export function manifestUrlViolations(manifest: RuntimeManifest, runtimeOrigin: string): ManifestIssue[] {
  const issues: ManifestIssue[] = [];
  const rev = manifest.manifestRevision;
  const check = (path: string, raw: string, expected: string) => {
    const violation = boundUrlViolation(raw, runtimeOrigin, expected);
    if (violation) issues.push({ path, message: violation });
  };
  const pages = [
    ...manifest.pages.map((page, p) => ({ page, path: `pages.${p}` })),
    ...(manifest.upcoming?.pages ?? []).map((page, p) => ({ page, path: `upcoming.pages.${p}` })),
  ];
  pages.forEach(({ page, path }) => {
    page.placements.forEach((placement, i) => {
      const at = `${path}.placements.${i}.content`;
      const content = placement.content;
      if (content.type === 'image' || content.type === 'video') {
        content.items.forEach((item, j) => check(`${at}.items.${j}.src`, item.src, mediaRoute(rev, item.mediaId)));
      } else if (content.type === 'application') {
        check(`${at}.package.url`, content.package.url, packageRoute(rev, content.releaseId));
        check(`${at}.launchUrl`, content.launchUrl, launchRoute(rev, content.releaseId));
        if (new URL(content.origin).origin === safeOrigin(runtimeOrigin)) {
          issues.push({ path: `${at}.origin`, message: 'an application must never be served from the player origin' });
        }
      }
    });
  });
  manifest.soundtrack?.tracks.forEach((track, j) =>
    check(`soundtrack.tracks.${j}.src`, track.src, mediaRoute(rev, track.mediaId)),
  );
  return issues;
}

function safeOrigin(origin: string): string | undefined {
  try {
    return new URL(origin).origin;
  } catch {
    return undefined;
  }
}

export type ManifestParseResult = { ok: true; manifest: RuntimeManifest } | { ok: false; issues: ManifestIssue[] };

/**
 * Validates a fetched manifest as a whole: shape first, then the URL binding against the origin
 * the manifest was fetched from. Any issue rejects the manifest; keep the last known good one.
 */
export function parseRuntimeManifest(input: unknown, runtimeOrigin: string): ManifestParseResult {
  if (safeOrigin(runtimeOrigin) === undefined)
    return { ok: false, issues: [{ path: '', message: `runtime origin "${runtimeOrigin}" is not a URL` }] };
  const parsed = RuntimeManifest.safeParse(input);
  if (!parsed.success) return { ok: false, issues: flattenIssues(parsed.error.issues) };
  const violations = manifestUrlViolations(parsed.data, runtimeOrigin);
  if (violations.length > 0) return { ok: false, issues: violations };
  return { ok: true, manifest: parsed.data };
}

/** Zod issues as path + message; a failed union reports the member whose `type` matched. */
export function flattenIssues(issues: readonly z.core.$ZodIssue[], prefix: (string | number)[] = []): ManifestIssue[] {
  const out: ManifestIssue[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path.map((k) => (typeof k === 'symbol' ? String(k) : k))];
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const discriminatorMiss = (branch: readonly z.core.$ZodIssue[]) =>
        branch.some((i) => i.code === 'invalid_value' && i.path.at(-1) === 'type');
      const candidates = issue.errors.filter((branch) => !discriminatorMiss(branch));
      const best = (candidates.length > 0 ? candidates : issue.errors).reduce((a, b) => (b.length < a.length ? b : a));
      out.push(...flattenIssues(best, path));
    } else {
      out.push({ path: path.join('.'), message: issue.message });
    }
  }
  return out;
}

/**
 * Identity of a soundtrack for playback continuity: equal keys mean the audio pipeline keeps
 * playing across a manifest update. Grant and URLs change with every revision; bytes do not.
 */
export function soundtrackKey(soundtrack: RuntimeSoundtrack | undefined): string {
  return soundtrack ? soundtrack.tracks.map((t) => `${t.mediaId}:${t.sha256}`).join(',') : '';
}
