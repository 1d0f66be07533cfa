// The playlist document: pages of placements on a canvas, with transitions, advance modes,
// visibility rules, a soundtrack and (v2) adslot pages. Write schemas are closed: an unknown member,
// including a response-only one such as `items`, is refused and named. Rules that need the
// server's content (readiness, ownership, resolved item counts) are checked by the server; every
// rule that needs only the document is here, so clients can check early.
import { z } from 'zod';
import { iframeSrcProblem } from './iframe-src';
import { ADSLOT_MAX_PAGES, CONTROL_CHARACTER, LIMITS, NAME_MAX, TAG_PATTERN } from './limits';
import { Visibility } from './visibility';

export const PLAYLIST_MAX_PAGES = LIMITS.playlist_max_pages; // spec: 100 pages
export const PAGE_MAX_PLACEMENTS = LIMITS.playlist_max_items_per_page; // spec "items per page": 24 placements
export const TRANSITION_MAX_MS = LIMITS.transition_max_duration_ms; // spec: 60,000 ms
export const SELECTOR_MAX_ITEMS = 32; // reference contract: a selector resolves to at most 32 media
export const ADVANCE_MIN_MS = 1000; // reference contract: advance and dwell times 1 s ...
export const ADVANCE_MAX_MS = 86_400_000; // ... to 24 h
export const LAYER_MAX = 1024;
export const GRADIENT_MIN_STOPS = 2;
export const GRADIENT_MAX_STOPS = 8;
export const ALT_MAX = 300;
export const IFRAME_TITLE_MAX = 200;
export const AUDIO_MAX_TRACKS = 32; // our choice: one selector's worth of tracks
export const ADSLOT_PAGE_MAX = ADSLOT_MAX_PAGES; // spec: at most 16 adslot pages per v2 playlist
export const SLOT_DURATION_MIN_MS = 1000;
export const SLOT_DURATION_MAX_MS = 300_000; // our choice: an ad break longer than five minutes is a page, not a slot
export const PAGE_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const MEDIA_ID_PATTERN = /^med_[A-Za-z0-9_-]{1,96}$/;
export const RELEASE_ID_PATTERN = /^rel_[A-Za-z0-9_-]{1,96}$/;
export const APPLICATION_ID_PATTERN = /^app_[A-Za-z0-9_-]{1,96}$/;

const Ms = (min: number, max: number) => z.int().min(min).max(max);
const AdvanceMs = Ms(ADVANCE_MIN_MS, ADVANCE_MAX_MS);
const PositiveNumber = z.number().positive();
const Finite = z.number();

/** Cross-field rules run only on a subtree that parsed cleanly (they read its members freely). */
const wellFormed = { when: (payload: { issues: unknown[] }) => payload.issues.length === 0 };

export const PageId = z
  .string()
  .regex(PAGE_ID_PATTERN, 'must start with a letter and use letters, digits, _ or - (at most 64)');
export const MediaId = z.string().regex(MEDIA_ID_PATTERN, 'must be a media id (med_…)');

export const PlaylistName = z
  .string()
  .min(1)
  .max(NAME_MAX)
  .refine((s) => s.trim().length > 0, 'must not be blank')
  .refine((s) => !CONTROL_CHARACTER.test(s), 'must not contain control characters');

// ---- Canvas

/** Canonical uppercase sRGB `#RRGGBBAA`. */
export const CanvasColor = z.string().regex(/^#[0-9A-F]{8}$/, 'must be uppercase #RRGGBBAA');

export const LinearGradientStop = z.strictObject({ at: z.number().min(0).max(1), color: CanvasColor });

/** Top-to-bottom linear gradient: 2 to 8 stops, `at` strictly increasing from 0 to 1. */
export const LinearGradientBackground = z
  .strictObject({
    type: z.literal('linear'),
    stops: z.array(LinearGradientStop).min(GRADIENT_MIN_STOPS).max(GRADIENT_MAX_STOPS),
  })
  .superRefine((g, ctx) => {
    if (g.stops[0]!.at !== 0)
      ctx.addIssue({ code: 'custom', path: ['stops', 0, 'at'], message: 'the first stop must be at 0' });
    if (g.stops[g.stops.length - 1]!.at !== 1)
      ctx.addIssue({
        code: 'custom',
        path: ['stops', g.stops.length - 1, 'at'],
        message: 'the last stop must be at 1',
      });
    for (let i = 1; i < g.stops.length; i++) {
      if (g.stops[i]!.at <= g.stops[i - 1]!.at)
        ctx.addIssue({ code: 'custom', path: ['stops', i, 'at'], message: 'stops must be strictly increasing' });
    }
  }, wellFormed);

export const CanvasBackground = z.union([CanvasColor, LinearGradientBackground]);

export const Canvas = z.strictObject({
  width: PositiveNumber,
  height: PositiveNumber,
  viewport_fit: z.enum(['contain', 'cover', 'fill']).default('contain'),
  background: CanvasBackground,
});

export const Rect = z.strictObject({ x: Finite, y: Finite, width: PositiveNumber, height: PositiveNumber });

// ---- Motion

export const TRANSITION_TYPES = ['crossfade', 'swipe-left', 'swipe-right', 'swipe-up', 'swipe-down'] as const;
export const Transition = z.strictObject({ type: z.enum(TRANSITION_TYPES), duration_ms: Ms(0, TRANSITION_MAX_MS) });

export const ENTER_TYPES = [
  'fade-up',
  'fade-down',
  'fade-left',
  'fade-right',
  'fade-in',
  'zoom-in',
  'zoom-out',
] as const;
/** Placement enter animation; fixed timing (starts 500 ms after the page fills, runs 400 ms). */
export const PlacementEnter = z.strictObject({ type: z.enum(ENTER_TYPES) });

// ---- Media selectors

const SelectorById = z.strictObject({
  by: z.literal('id'),
  media_id: MediaId,
  one_at_a_time: z.literal(false).default(false),
});
const SelectorByIds = z.strictObject({
  by: z.literal('ids'),
  media_ids: z
    .array(MediaId)
    .min(1)
    .max(SELECTOR_MAX_ITEMS)
    .refine((ids) => new Set(ids).size === ids.length, 'media_ids must be unique'),
  one_at_a_time: z.boolean().default(false),
});
/** Every ready media of the placement's kind; re-resolved when media change. */
const SelectorByAll = z.strictObject({ by: z.literal('all'), one_at_a_time: z.boolean().default(false) });
/** Every ready media of the placement's kind with this exact tag; re-resolved when media change. */
const SelectorByTag = z.strictObject({
  by: z.literal('tag'),
  tag: z.string().regex(TAG_PATTERN, 'must be 1 to 32 letters or digits'),
  one_at_a_time: z.boolean().default(false),
});
export const MediaSelector = z.discriminatedUnion('by', [SelectorById, SelectorByIds, SelectorByAll, SelectorByTag]);
export type MediaSelector = z.infer<typeof MediaSelector>;

// ---- Placement content (write)

export const ImageContentWrite = z.strictObject({
  type: z.literal('image'),
  selector: MediaSelector,
  alt: z.string().max(ALT_MAX).optional(),
  /** Required on media_end pages, forbidden elsewhere. */
  dwell_ms: AdvanceMs.optional(),
});

export const VideoContentWrite = z.strictObject({
  type: z.literal('video'),
  selector: MediaSelector,
  /** Screens play video muted; the soundtrack is the playlist's `audio`. */
  muted: z.literal(true).default(true),
  loop: z.boolean().default(false),
});

export const IframeContent = z.strictObject({
  type: z.literal('iframe'),
  src: z.string().superRefine((src, ctx) => {
    const why = iframeSrcProblem(src);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  }),
  title: z.string().min(1).max(IFRAME_TITLE_MAX),
});

export const ApplicationContentWrite = z.strictObject({
  type: z.literal('application'),
  release_id: z.string().regex(RELEASE_ID_PATTERN, 'must be a release id (rel_…)'),
  /** Optional assertion: the server refuses the document when the release belongs to another application. */
  application_id: z.string().regex(APPLICATION_ID_PATTERN, 'must be an application id (app_…)').optional(),
});

export const PlacementContentWrite = z.discriminatedUnion('type', [
  ImageContentWrite,
  VideoContentWrite,
  IframeContent,
  ApplicationContentWrite,
]);
export type PlacementContentWrite = z.infer<typeof PlacementContentWrite>;

export const CONTENT_FITS = ['contain', 'cover', 'fill'] as const;

export const PlacementWrite = z
  .strictObject({
    id: PageId,
    content: PlacementContentWrite,
    rect: Rect,
    layer: z.int().min(0).max(LAYER_MAX),
    content_fit: z.enum(CONTENT_FITS).meta({ description: 'iframe and application placements take only fill' }),
    controller: z.boolean().optional().meta({ description: 'application placements only; default false' }),
    enter: PlacementEnter.optional(),
  })
  .superRefine((p, ctx) => {
    const type = p.content.type;
    if ((type === 'iframe' || type === 'application') && p.content_fit !== 'fill') {
      ctx.addIssue({ code: 'custom', path: ['content_fit'], message: `${type} placements take content_fit fill` });
    }
    // `controller` belongs to application placements; elsewhere it is response-only.
    if (type !== 'application' && p.controller !== undefined) {
      ctx.addIssue({ code: 'unrecognized_keys', keys: ['controller'], path: [], input: p });
    }
  }, wellFormed);
export type PlacementWrite = z.infer<typeof PlacementWrite>;

// ---- Advance

const DurationAdvance = z.strictObject({ mode: z.literal('duration'), after_ms: AdvanceMs });
/** The page's controller application advances it; `max_ms` is the backstop. */
const ApplicationAdvance = z.strictObject({ mode: z.literal('application'), max_ms: AdvanceMs });
/** The page's one image or video decides; `max_ms` is an optional hint, the server resolves the deadline. */
const MediaEndAdvanceWrite = z.strictObject({ mode: z.literal('media_end'), max_ms: AdvanceMs.optional() });
export const AdvanceWrite = z.discriminatedUnion('mode', [DurationAdvance, ApplicationAdvance, MediaEndAdvanceWrite]);
export type AdvanceWrite = z.infer<typeof AdvanceWrite>;

// ---- Pages

type PageBody = { advance: AdvanceWrite; placements: PlacementWrite[] };

/** The rules that tie a page's advance mode to its placements (shared by pages and adslot fallbacks). */
function checkPageBody(page: PageBody, ctx: z.RefinementCtx): void {
  const seen = new Map<string, number>();
  page.placements.forEach((p, i) => {
    if (seen.has(p.id))
      ctx.addIssue({
        code: 'custom',
        path: ['placements', i, 'id'],
        message: `placement id "${p.id}" is used twice on this page`,
      });
    seen.set(p.id, i);
  });
  const mode = page.advance.mode;
  page.placements.forEach((p, i) => {
    if (p.content.type === 'image' && p.content.dwell_ms !== undefined && mode !== 'media_end') {
      ctx.addIssue({
        code: 'custom',
        path: ['placements', i, 'content', 'dwell_ms'],
        message: 'dwell_ms is only allowed on media_end pages',
      });
    }
    if (p.content.type === 'application' && p.controller === true && mode !== 'application') {
      ctx.addIssue({
        code: 'custom',
        path: ['placements', i, 'controller'],
        message: 'only a page with advance mode application has a controller',
      });
    }
    const selector = 'selector' in p.content ? p.content.selector : undefined;
    if (mode !== 'media_end' && selector?.by === 'ids' && selector.media_ids.length > 1 && !selector.one_at_a_time) {
      ctx.addIssue({
        code: 'custom',
        path: ['placements', i, 'content', 'selector', 'one_at_a_time'],
        message: 'a selector of several media needs one_at_a_time true unless the page advances on media_end',
      });
    }
  });
  if (mode === 'application') {
    const controllers = page.placements.filter((p) => p.content.type === 'application' && p.controller === true);
    if (controllers.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['advance'],
        message: `an application-advanced page needs exactly one application placement with controller true (found ${controllers.length})`,
      });
    }
  }
  if (mode === 'media_end') {
    const media = page.placements
      .map((p, i) => [p, i] as const)
      .filter(([p]) => p.content.type === 'image' || p.content.type === 'video');
    if (media.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['advance'],
        message: `a media_end page needs exactly one image or video placement (found ${media.length})`,
      });
    } else {
      const [p, i] = media[0]!;
      if (p.content.type === 'image' && p.content.dwell_ms === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['placements', i, 'content', 'dwell_ms'],
          message: 'an image on a media_end page needs dwell_ms',
        });
      }
      if (p.content.type === 'video' && p.content.loop) {
        ctx.addIssue({
          code: 'custom',
          path: ['placements', i, 'content', 'loop'],
          message: 'a video on a media_end page must not loop',
        });
      }
    }
  }
}

const pageFields = {
  id: PageId,
  canvas: Canvas,
  transition: Transition,
  advance: AdvanceWrite,
  visibility: Visibility.optional(),
  placements: z.array(PlacementWrite).min(1).max(PAGE_MAX_PLACEMENTS),
};

export const PageWrite = z.strictObject(pageFields).superRefine(checkPageBody, wellFormed);
export type PageWrite = z.infer<typeof PageWrite>;

/** A v2 ordinary page: a v1 page that may say `type: "page"` (implied when absent). */
export const OrdinaryPageWriteV2 = z
  .strictObject({ type: z.literal('page').optional(), ...pageFields })
  .superRefine(checkPageBody, wellFormed);

export const SLOT_KEY_PATTERN = PAGE_ID_PATTERN;

/**
 * The ad inventory an adslot page offers: a key that names the slot for bookings (unique across
 * the playlist's pages) and how long a booked creative plays.
 */
export const SlotDefinition = z.strictObject({
  key: z.string().regex(SLOT_KEY_PATTERN, 'must start with a letter and use letters, digits, _ or - (at most 64)'),
  duration_ms: Ms(SLOT_DURATION_MIN_MS, SLOT_DURATION_MAX_MS),
  name: z.string().min(1).max(NAME_MAX).optional(),
});
export type SlotDefinition = z.infer<typeof SlotDefinition>;

/** What an adslot page shows when no creative is booked: an ordinary page body on its own canvas. */
export const AdslotFallbackWrite = z
  .strictObject({
    canvas: Canvas,
    advance: AdvanceWrite,
    placements: z.array(PlacementWrite).min(1).max(PAGE_MAX_PLACEMENTS),
  })
  .superRefine(checkPageBody, wellFormed);

export const AdslotPageWrite = z.strictObject({
  type: z.literal('adslot'),
  id: PageId,
  slot: SlotDefinition,
  transition: Transition,
  visibility: Visibility.optional(),
  fallback: AdslotFallbackWrite,
});
export type AdslotPageWrite = z.infer<typeof AdslotPageWrite>;

export const PageWriteV2 = z.discriminatedUnion('type', [OrdinaryPageWriteV2, AdslotPageWrite]);
export type PageWriteV2 = z.infer<typeof PageWriteV2>;

// ---- Soundtrack

/**
 * Ordered ready audio/mpeg media that plays continuously while pages change, never restarted by a
 * page change; the list repeats. PUT replaces the whole document, so omitting `audio` removes it.
 */
export const AudioWrite = z.strictObject({
  tracks: z
    .array(z.strictObject({ media_id: MediaId }))
    .min(1)
    .max(AUDIO_MAX_TRACKS),
});
export type AudioWrite = z.infer<typeof AudioWrite>;

// ---- Documents

function checkDocument(
  doc: { pages: { id: string; visibility?: unknown; type?: string }[] },
  ctx: z.RefinementCtx,
): void {
  const seen = new Set<string>();
  doc.pages.forEach((page, i) => {
    if (seen.has(page.id))
      ctx.addIssue({ code: 'custom', path: ['pages', i, 'id'], message: `page id "${page.id}" is used twice` });
    seen.add(page.id);
  });
  if (!doc.pages.some((p) => p.type !== 'adslot' && p.visibility === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: ['pages'],
      message: 'at least one ordinary page must have no visibility rule, so something is always eligible',
    });
  }
}

export const PlaylistWrite = z
  .strictObject({
    name: PlaylistName,
    pages: z.array(PageWrite).min(1).max(PLAYLIST_MAX_PAGES),
    audio: AudioWrite.optional(),
  })
  .superRefine(checkDocument, wellFormed);
export type PlaylistWrite = z.infer<typeof PlaylistWrite>;

export const PlaylistWriteV2 = z
  .strictObject({
    name: PlaylistName,
    pages: z.array(PageWriteV2).min(1).max(PLAYLIST_MAX_PAGES),
    audio: AudioWrite.optional(),
  })
  .superRefine((doc, ctx) => {
    checkDocument(doc, ctx);
    const adslots = doc.pages.map((p, i) => [p, i] as const).filter(([p]) => p.type === 'adslot') as [
      AdslotPageWrite,
      number,
    ][];
    if (adslots.length > ADSLOT_PAGE_MAX) {
      ctx.addIssue({
        code: 'custom',
        path: ['pages'],
        message: `at most ${ADSLOT_PAGE_MAX} adslot pages (found ${adslots.length})`,
      });
    }
    const slotPage = new Map<string, string>();
    for (const [page, i] of adslots) {
      const other = slotPage.get(page.slot.key);
      if (other !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['pages', i, 'slot', 'key'],
          message: `slot "${page.slot.key}" is already defined on page "${other}"; a slot is defined on one page only`,
        });
      } else slotPage.set(page.slot.key, page.id);
    }
  }, wellFormed);
export type PlaylistWriteV2 = z.infer<typeof PlaylistWriteV2>;

// ---- Responses: the written document plus what the server resolved.

export interface IntrinsicSize {
  width: number;
  height: number;
}

/** One media a selector resolved to. */
export interface PlaylistMediaItem {
  media_id: string;
  intrinsic_size: IntrinsicSize;
}

export interface ImageContent {
  type: 'image';
  selector: MediaSelector;
  /**
   * Ready media the selector resolved to (1 to 32 when written). Dynamic selectors (`all`, `tag`)
   * re-resolve when media change, and may then resolve to none until matching media exist again.
   */
  items: PlaylistMediaItem[];
  alt?: string;
  dwell_ms?: number;
}

export interface VideoContent {
  type: 'video';
  selector: MediaSelector;
  items: PlaylistMediaItem[];
  muted: true;
  loop: boolean;
}

export type IframeContent = z.infer<typeof IframeContent>;

export interface ApplicationContent {
  type: 'application';
  release_id: string;
  /** The release's application, resolved by the server. */
  application_id: string;
}

export type PlacementContent = ImageContent | VideoContent | IframeContent | ApplicationContent;

export interface Placement {
  id: string;
  content: PlacementContent;
  rect: z.infer<typeof Rect>;
  layer: number;
  content_fit: (typeof CONTENT_FITS)[number];
  /** Always present: false except on the controller application of an application-advanced page. */
  controller: boolean;
  enter?: z.infer<typeof PlacementEnter>;
}

export type Advance =
  | { mode: 'duration'; after_ms: number }
  | { mode: 'application'; max_ms: number }
  /** `max_ms` is always present: the server's deadline from the resolved media lengths. */
  | { mode: 'media_end'; max_ms: number };

export interface Page {
  id: string;
  canvas: z.output<typeof Canvas>;
  transition: z.infer<typeof Transition>;
  advance: Advance;
  visibility?: Visibility;
  placements: Placement[];
}

export interface AdslotPage {
  type: 'adslot';
  id: string;
  slot: SlotDefinition;
  transition: z.infer<typeof Transition>;
  visibility?: Visibility;
  fallback: { canvas: z.output<typeof Canvas>; advance: Advance; placements: Placement[] };
}

export interface AudioTrack {
  media_id: string;
  /** Verified length, when the server could read it. */
  duration_ms?: number;
}

export interface PlaylistAudio {
  tracks: AudioTrack[];
}

/** The agent's opaque comments on a page (comments routes; a write document cannot set them). */
type Commented = { comments?: Record<string, unknown> };

export interface Playlist {
  id: string;
  name: string;
  revision: number;
  pages: (Page & Commented)[];
  audio?: PlaylistAudio;
  /** The agent's opaque comments (comments routes); absent when unset. */
  comments?: Record<string, unknown>;
}

export interface PlaylistV2 {
  id: string;
  name: string;
  revision: number;
  pages: ((Page | AdslotPage) & Commented)[];
  audio?: PlaylistAudio;
  comments?: Record<string, unknown>;
}

export interface PlaylistList {
  items: Playlist[];
}

export interface PlaylistV2List {
  items: PlaylistV2[];
}

export function isAdslotPage(page: Page | AdslotPage): page is AdslotPage {
  return (page as AdslotPage).type === 'adslot';
}

/** JSON Schema (2020-12) of the write documents, generated from these definitions. */
export function playlistJsonSchemas(): { PlaylistWrite: unknown; PlaylistWriteV2: unknown } {
  return {
    PlaylistWrite: z.toJSONSchema(PlaylistWrite, { io: 'input' }),
    PlaylistWriteV2: z.toJSONSchema(PlaylistWriteV2, { io: 'input' }),
  };
}
