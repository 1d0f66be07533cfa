// Manifest composition, pure: from a screen, its effective playlist (as served, with materialized
// items) and the facts of the content it names, to the immutable stored document and the content
// it grants; and from a stored document to the wire manifest of one generation and session.
import {
  CANVAS_CONTRACT_VERSION,
  launchRoute,
  MANIFEST_SCHEMA_VERSION,
  mediaRoute,
  packageRoute,
  WEBAPP_PACKAGE_CONTENT_TYPE,
  WEBAPP_PACKAGE_VERSION,
  kindOfPlacement,
  type RuntimeAdvance,
  type RuntimeApplicationContent,
  type RuntimeApplicationPlacement,
  type RuntimeIframePlacement,
  type RuntimeImageContent,
  type RuntimeImagePlacement,
  type RuntimeManifest,
  type RuntimePage,
  type RuntimePlacement,
  type RuntimeSoundtrackTrack,
  type RuntimeSync,
  type RuntimeVideoContent,
  type RuntimeVideoPlacement,
} from '../../sdk/contract/manifest';
import { PROTOCOL_VERSION } from '../../sdk/contract/limits';
import {
  isAdslotPage,
  type Advance,
  type AdslotPage,
  type Page,
  type Placement,
  type PlaylistAudio,
} from '../../sdk/contract/playlist';
import { isoTime } from '../clock';
import { manifestGrantId, manifestRevisionId } from './manifest-ids';
import type { ManifestContentKind } from '../runtime/runtime.tables';

// ---- The stored document: the wire manifest minus what depends on generation, session and origin.

type StoredImageContent = Omit<RuntimeImageContent, 'grantId'>;
type StoredVideoContent = Omit<RuntimeVideoContent, 'grantId'>;
type StoredApplicationContent = Omit<RuntimeApplicationContent, 'grantId' | 'origin'> & { hostLabel: string };

export type StoredPlacement =
  | (Omit<RuntimeImagePlacement, 'content'> & { content: StoredImageContent })
  | (Omit<RuntimeVideoPlacement, 'content'> & { content: StoredVideoContent })
  | RuntimeIframePlacement
  | (Omit<RuntimeApplicationPlacement, 'content' | 'capabilityHandle' | 'capabilityExpiresAt'> & {
      content: StoredApplicationContent;
    });

export type StoredPage = Omit<RuntimePage, 'placements'> & { placements: StoredPlacement[] };

export interface StoredManifest {
  screenLabel: string;
  playlistId?: string;
  playlistRevision: number;
  generatedAt: string;
  timezone?: string;
  pages: StoredPage[];
  soundtrack?: { tracks: RuntimeSoundtrackTrack[] };
  darkened?: true;
  sync?: RuntimeSync;
  nextBoundaryAt?: string;
  /** What the screen shows from its next boundary, for a player offline then (RuntimeUpcoming). */
  upcoming?: StoredUpcoming;
  /** The playlist is the screen's takeover (RuntimeManifest.takeover). */
  takeover?: true;
}

export interface StoredUpcoming {
  at: string;
  playlistId: string;
  playlistRevision: number;
  pages: StoredPage[];
}

/**
 * A sync group's timeline starts this long after its playlist revision was written: every member
 * hears of the change (its event stream), fetches the manifest and prepares the first page in
 * that time, so all move onto the new playlist together, on its first page.
 */
export const SYNC_EPOCH_LEAD_MS = 5000;

// ---- Inputs

/** The playlist document as the playlists feature serves it (items materialized). */
export interface ServedPlaylist {
  id: string;
  revision: number;
  /** When this revision was written: a sync group's timeline is anchored on it. */
  updatedAt: number;
  pages: (Page | AdslotPage)[];
  audio?: PlaylistAudio;
}

export interface MediaFacts {
  id: string;
  kind: string;
  content_type: string;
  bytes: number;
  sha256: string;
  codecs: string | null;
  duration_ms: number | null;
}

export interface ReleaseFacts {
  id: string;
  application_id: string;
  host_label: string;
}

export interface PackageFacts {
  bytes: number;
  sha256: string;
}

export interface ComposeInputs {
  screen: {
    id: string;
    label: string;
    timezone: string | null;
    state: string;
    /** Lockstep: the sync group and a video wall's region (JSON), when set. */
    syncGroup?: string | null;
    wallRegion?: string | null;
    nextBoundaryAt?: number | null;
  };
  revision: number;
  /** The effective playlist; null when none applies (unassigned). */
  playlist: ServedPlaylist | null;
  /** The effective playlist is an active takeover's. */
  takeover?: boolean;
  /**
   * The playlist the schedule resolves to at the screen's next boundary, when that differs from
   * `playlist`: its pages go into the manifest as `upcoming` (media, ready and owned, in `media`).
   */
  upcoming?: ServedPlaylist | null;
  /** Ready media of the tenant that the playlist names. */
  media: ReadonlyMap<string, MediaFacts>;
  /** Ready releases (of live applications) that the playlist names. */
  releases: ReadonlyMap<string, ReleaseFacts>;
  /** Built packages of those releases. */
  packages: ReadonlyMap<string, PackageFacts>;
  now: number;
}

export interface ContentRef {
  kind: ManifestContentKind;
  ref: string;
}

export interface Composition {
  stored: StoredManifest;
  content: ContentRef[];
  hasCapabilities: boolean;
}

/** Media ids and release ids a served playlist names (what must be loaded to compose it). */
export function playlistNeeds(playlist: ServedPlaylist): { mediaIds: Set<string>; releaseIds: Set<string> } {
  const mediaIds = new Set<string>();
  const releaseIds = new Set<string>();
  for (const page of playlist.pages) {
    for (const p of isAdslotPage(page) ? page.fallback.placements : page.placements) {
      const c = p.content;
      if (c.type === 'image' || c.type === 'video') c.items.forEach((i) => mediaIds.add(i.media_id));
      if (c.type === 'application') releaseIds.add(c.release_id);
    }
  }
  for (const t of playlist.audio?.tracks ?? []) mediaIds.add(t.media_id);
  return { mediaIds, releaseIds };
}

/**
 * The immutable document of one manifest revision. An archived screen gets a darkened manifest
 * (no pages, no content). Content that is no longer showable is left out rather than failing the
 * whole manifest: an empty selector drops its placement, a page left without placements drops,
 * and an adslot page shows its house fallback (nothing is booked yet).
 */
export function composeManifest(inputs: ComposeInputs): Composition {
  const { screen, playlist } = inputs;
  const base: Pick<StoredManifest, 'screenLabel' | 'generatedAt' | 'timezone' | 'nextBoundaryAt' | 'upcoming'> = {
    screenLabel: screen.label,
    generatedAt: isoTime(inputs.now),
    ...(screen.timezone !== null ? { timezone: screen.timezone } : {}),
  };
  if (screen.state === 'archived') {
    return { stored: { ...base, playlistRevision: 0, pages: [], darkened: true }, content: [], hasCapabilities: false };
  }
  // A schedule boundary or a takeover end: the player fetches its manifest again then.
  if (screen.nextBoundaryAt) base.nextBoundaryAt = isoTime(screen.nextBoundaryAt);

  const manifestRevision = manifestRevisionId(screen.id, inputs.revision);
  const content = new Map<string, ContentRef>();
  const grant = (kind: ManifestContentKind, ref: string) => content.set(`${kind}\u0000${ref}`, { kind, ref });
  let hasCapabilities = false;

  // Upcoming pages leave applications out: their capabilities and launches need the server, and a
  // player that can reach it gets the reminted revision within seconds of the boundary anyway.
  const placement = (p: Placement, applications: boolean): StoredPlacement | null => {
    const common = { id: p.id, rect: p.rect, layer: p.layer, ...(p.enter ? { enter: p.enter } : {}) };
    const c = p.content;
    if (c.type === 'iframe')
      return { ...common, content: { type: 'iframe', src: c.src, title: c.title }, contentFit: 'fill' };
    if (c.type === 'application') {
      if (!applications) return null;
      const release = inputs.releases.get(c.release_id);
      const pkg = inputs.packages.get(c.release_id);
      if (!release || !pkg) return null;
      grant('release', release.id);
      grant('application', release.application_id);
      hasCapabilities = true;
      return {
        ...common,
        content: {
          type: 'application',
          applicationId: release.application_id,
          releaseId: release.id,
          launchUrl: launchRoute(manifestRevision, release.id),
          protocol: PROTOCOL_VERSION,
          package: {
            version: WEBAPP_PACKAGE_VERSION,
            url: packageRoute(manifestRevision, release.id),
            bytes: pkg.bytes,
            sha256: pkg.sha256,
            entrypoint: 'index.html',
            contentType: WEBAPP_PACKAGE_CONTENT_TYPE,
          },
          hostLabel: release.host_label,
        },
        contentFit: 'fill',
        controller: p.controller,
      };
    }
    const items = c.items.flatMap((item) => {
      const media = inputs.media.get(item.media_id);
      if (!media || media.kind !== c.type) return [];
      grant('media', media.id);
      const common = {
        mediaId: media.id,
        src: mediaRoute(manifestRevision, media.id),
        intrinsicSize: { width: item.intrinsic_size.width, height: item.intrinsic_size.height },
        sha256: media.sha256,
        bytes: media.bytes,
      };
      return [
        {
          ...common,
          contentType: media.content_type,
          ...(c.type === 'video' && media.codecs !== null ? { codecs: media.codecs } : {}),
        },
      ];
    });
    if (items.length === 0) return null;
    const fit = p.content_fit;
    const oneAtATime = c.selector.one_at_a_time ?? false;
    if (c.type === 'image') {
      return {
        ...common,
        content: {
          type: 'image',
          items: items as StoredImageContent['items'],
          oneAtATime,
          ...(c.alt !== undefined ? { alt: c.alt } : {}),
          ...(c.dwell_ms !== undefined ? { dwellMs: c.dwell_ms } : {}),
        },
        contentFit: fit,
      };
    }
    return {
      ...common,
      content: { type: 'video', items: items as StoredVideoContent['items'], oneAtATime, muted: c.muted, loop: c.loop },
      contentFit: fit,
    };
  };

  const pagesOf = (playlist: ServedPlaylist, applications: boolean) =>
    playlist.pages.flatMap((page): StoredPage[] => {
      const body = isAdslotPage(page) ? page.fallback : page;
      // Pages with visibility are evaluated in the screen's zone; without one they cannot be (assignment prevents it).
      if (page.visibility && screen.timezone === null) return [];
      const placements = body.placements
        .map((p) => placement(p, applications))
        .filter((p): p is StoredPlacement => p !== null);
      if (placements.length === 0) return [];
      return [
        {
          contractVersion: CANVAS_CONTRACT_VERSION,
          id: page.id,
          canvas: {
            width: body.canvas.width,
            height: body.canvas.height,
            viewportFit: body.canvas.viewport_fit,
            background: body.canvas.background,
          },
          transition: { type: page.transition.type, durationMs: page.transition.duration_ms },
          advance: advanceOf(body.advance),
          ...(page.visibility ? { visibility: page.visibility } : {}),
          ...(isAdslotPage(page) ? { slot: { key: page.slot.key } } : {}),
          placements,
        },
      ];
    });

  const upcoming = inputs.upcoming;
  if (screen.nextBoundaryAt && upcoming && upcoming.id !== playlist?.id) {
    const pages = pagesOf(upcoming, false);
    if (pages.length > 0)
      base.upcoming = {
        at: isoTime(screen.nextBoundaryAt),
        playlistId: upcoming.id,
        playlistRevision: upcoming.revision,
        pages,
      };
  }
  if (playlist === null)
    return {
      stored: { ...base, playlistRevision: 0, pages: [] },
      content: [...content.values()],
      hasCapabilities: false,
    };
  const pages = pagesOf(playlist, true);

  const tracks = (playlist.audio?.tracks ?? []).flatMap((track): RuntimeSoundtrackTrack[] => {
    const media = inputs.media.get(track.media_id);
    if (media?.content_type !== 'audio/mpeg' || media.duration_ms === null || media.duration_ms < 1) return [];
    grant('media', media.id);
    return [
      {
        mediaId: media.id,
        src: mediaRoute(manifestRevision, media.id),
        sha256: media.sha256,
        bytes: media.bytes,
        contentType: 'audio/mpeg',
        durationMs: media.duration_ms,
      },
    ];
  });

  return {
    stored: {
      ...base,
      playlistId: playlist.id,
      playlistRevision: playlist.revision,
      pages,
      ...(tracks.length > 0 ? { soundtrack: { tracks } } : {}),
      ...syncOf(screen, playlist),
      ...(inputs.takeover ? { takeover: true as const } : {}),
    },
    content: [...content.values()],
    hasCapabilities,
  };
}

/**
 * Lockstep: members of one group showing one playlist revision share its epoch (its write time
 * plus the lead), so their timelines are the same without any state of the group's own.
 */
function syncOf(screen: ComposeInputs['screen'], playlist: ServedPlaylist): { sync?: RuntimeSync } {
  if (!screen.syncGroup) return {};
  const region = screen.wallRegion ? (JSON.parse(screen.wallRegion) as RuntimeSync['wallRegion']) : undefined;
  return {
    sync: {
      group: screen.syncGroup,
      epoch: isoTime(playlist.updatedAt + SYNC_EPOCH_LEAD_MS),
      ...(region ? { wallRegion: region } : {}),
    },
  };
}

function advanceOf(advance: Advance): RuntimeAdvance {
  if (advance.mode === 'duration') return { mode: 'duration', afterMs: advance.after_ms };
  return { mode: advance.mode, maxMs: advance.max_ms };
}

// ---- Rendering one generation for one session

/** A placement capability to put on an application placement. */
export interface PlacementGrant {
  handle: string;
  expiresAt: number;
}

export interface RenderInputs {
  screenId: string;
  revision: number;
  generation: number;
  /** The release host origin of a host label. */
  releaseOrigin: (hostLabel: string) => string;
  /** Mints the capability of one application placement of this manifest. */
  capability: (placement: {
    pageId: string;
    placementId: string;
    applicationId: string;
    releaseId: string;
  }) => PlacementGrant;
}

/** The wire manifest: the stored document with its grant, generation, origins and capabilities. */
export function renderManifest(stored: StoredManifest, inputs: RenderInputs): RuntimeManifest {
  const grantId = manifestGrantId(inputs.screenId, inputs.revision, inputs.generation);
  const renderPage = (page: StoredPage): RuntimePage => ({
    ...page,
    placements: page.placements.map((stored): RuntimePlacement => {
      const p = kindOfPlacement(stored);
      switch (p.kind) {
        case 'image':
          return { ...p.placement, content: { ...p.placement.content, grantId } };
        case 'video':
          return { ...p.placement, content: { ...p.placement.content, grantId } };
        case 'iframe':
          return p.placement;
        case 'application': {
          const { hostLabel, ...content } = p.placement.content;
          const granted = inputs.capability({
            pageId: page.id,
            placementId: p.placement.id,
            applicationId: content.applicationId,
            releaseId: content.releaseId,
          });
          return {
            ...p.placement,
            content: { ...content, origin: inputs.releaseOrigin(hostLabel), grantId },
            capabilityHandle: granted.handle,
            capabilityExpiresAt: isoTime(granted.expiresAt),
          };
        }
      }
    }),
  });
  const { soundtrack, pages: _stored, upcoming, ...rest } = stored;
  const pages = stored.pages.map(renderPage);
  return {
    schemaVersion: MANIFEST_SCHEMA_VERSION,
    manifestRevision: manifestRevisionId(inputs.screenId, inputs.revision),
    grantId,
    contentGeneration: inputs.generation,
    screenId: inputs.screenId,
    ...rest,
    pages,
    ...(soundtrack ? { soundtrack: { grantId, tracks: soundtrack.tracks } } : {}),
    ...(upcoming ? { upcoming: { ...upcoming, pages: upcoming.pages.map(renderPage) } } : {}),
  };
}

/** The application placements of a stored manifest with the release each shows. */
export function applicationPlacements(
  stored: StoredManifest,
): { pageId: string; placementId: string; applicationId: string; releaseId: string }[] {
  return stored.pages.flatMap((page) =>
    page.placements.flatMap((p) =>
      p.content.type === 'application'
        ? [
            {
              pageId: page.id,
              placementId: p.id,
              applicationId: p.content.applicationId,
              releaseId: p.content.releaseId,
            },
          ]
        : [],
    ),
  );
}
