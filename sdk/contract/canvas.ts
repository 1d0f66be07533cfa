// Canvas vocabulary shared by playlist pages (write shape) and the runtime manifest: colours,
// backgrounds, transitions, enter animations, fits and the page/placement id grammar.
import { z } from 'zod';
import { LIMITS } from './limits';

/** Page and placement ids: a letter, then up to 63 letters, digits, `_` or `-`. */
export const PAGE_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const PageId = z
  .string()
  .regex(PAGE_ID_PATTERN, 'must start with a letter and hold 1 to 64 letters, digits, _ or -');

/** Canonical uppercase sRGB `#RRGGBBAA`. */
export const CanvasColor = z.string().regex(/^#[0-9A-F]{8}$/, 'must be an uppercase #RRGGBBAA colour');

export const GRADIENT_MIN_STOPS = 2;
export const GRADIENT_MAX_STOPS = 8;

/** Top-to-bottom linear gradient: stops strictly increasing in [0, 1], first at 0 and last at 1. */
export const LinearGradient = z
  .strictObject({
    type: z.literal('linear'),
    stops: z
      .array(z.strictObject({ at: z.number().min(0).max(1), color: CanvasColor }))
      .min(GRADIENT_MIN_STOPS)
      .max(GRADIENT_MAX_STOPS),
  })
  .refine(
    (g) => g.stops.every((s, i) => i === 0 || s.at > g.stops[i - 1]!.at),
    'stops must be strictly increasing in at',
  )
  .refine((g) => g.stops[0]?.at === 0 && g.stops.at(-1)?.at === 1, 'the first stop must be at 0 and the last at 1');

export const CanvasBackground = z.union([CanvasColor, LinearGradient]);
export type CanvasBackground = z.infer<typeof CanvasBackground>;

export const VIEWPORT_FITS = ['contain', 'cover', 'fill'] as const;
export type ViewportFit = (typeof VIEWPORT_FITS)[number];
export const MEDIA_CONTENT_FITS = ['contain', 'cover', 'fill'] as const;

export const TRANSITION_TYPES = ['crossfade', 'swipe-left', 'swipe-right', 'swipe-up', 'swipe-down'] as const;
export type TransitionType = (typeof TRANSITION_TYPES)[number];
export const TransitionDurationMs = z.number().int().min(0).max(LIMITS.transition_max_duration_ms);

export const ENTER_TYPES = [
  'fade-up',
  'fade-down',
  'fade-left',
  'fade-right',
  'fade-in',
  'zoom-in',
  'zoom-out',
] as const;
export type EnterType = (typeof ENTER_TYPES)[number];
/** Same object on playlist write and in the manifest (no rename inside it). */
export const PlacementEnter = z.strictObject({ type: z.enum(ENTER_TYPES) });
export type PlacementEnter = z.infer<typeof PlacementEnter>;

/** Enter timing is fixed by the canvas contract, not per placement. */
export const ENTER_DELAY_MS = 500;
export const ENTER_DURATION_MS = 400;

/** Placement layers: integers 0 to 1024; equal layers paint in array order. */
export const Layer = z.number().int().min(0).max(1024);

/** advance after_ms / max_ms and image dwell_ms bounds: 1 s to 24 h. */
export const ADVANCE_MIN_MS = 1000;
export const ADVANCE_MAX_MS = 86_400_000;
export const AdvanceMs = z.number().int().min(ADVANCE_MIN_MS).max(ADVANCE_MAX_MS);

/** Resolved image/video items per placement. */
export const SELECTOR_MAX_ITEMS = 32;
