// The playback position as a function of the manifest and the clock, shared by the player and the
// kiosk (sdk/, so both may import it). A segment is one page's turn on glass: its incoming
// transition starts at `start`, the page fills the viewport at `fill`, and the next page's transition
// starts at `end`. Segments follow each other exactly (each starts at the previous end), so timers
// that fire late never make the loop drift, and the page on glass at any instant can be recomputed
// from an anchor segment. Which page comes next is decided at the boundary, with page visibility
// evaluated at that instant in the screen's time zone (sdk/lockstep/timeline.ts builds on this).
import { nextBoundary, selectPlayablePages, usableZone } from '../schedule/page-visibility';
import type { RuntimePage } from '../contract/manifest';
import type { Visibility } from '../contract/visibility';

export interface SequencePage {
  id: string;
  /** The incoming transition's length. */
  transitionMs: number;
  /** How long the page stays once it fills the viewport: after_ms, or max_ms as the backstop. */
  dwellMs: number;
  visibility?: Visibility;
}

export interface Segment {
  /** Index of the page in the manifest's page list. */
  index: number;
  pageId: string;
  start: number;
  fill: number;
  end: number;
}

/** Catch-up bound: further behind than this many segments (a device asleep for days), start afresh. */
export const MAX_CATCH_UP_SEGMENTS = 10_000;

export function sequencePages(pages: readonly RuntimePage[]): SequencePage[] {
  return pages.map((page) => ({
    id: page.id,
    transitionMs: page.transition.durationMs,
    dwellMs: page.advance.mode === 'duration' ? page.advance.afterMs : page.advance.maxMs,
    ...(page.visibility ? { visibility: page.visibility } : {}),
  }));
}

/** The page's turn from `start`; `again` (the page follows itself) is a cut without a transition. */
export function segmentOf(pages: readonly SequencePage[], index: number, start: number, again = false): Segment {
  const page = pages[index]!;
  const fill = start + (again ? 0 : page.transitionMs);
  return { index, pageId: page.id, start, fill, end: fill + page.dwellMs };
}

/** Indexes of the pages that may play at `instant` (pages without visibility always may). */
export function playableIndexes(
  pages: readonly SequencePage[],
  instant: number,
  timeZone: string | undefined,
): Set<number> {
  const indexed = pages.map((page, index) => ({ index, visibility: page.visibility }));
  return new Set(selectPlayablePages(indexed, instant, timeZone).map((p) => p.index));
}

/**
 * The page after `afterIndex` in manifest order (wrapping; -1 starts at the first page) that may
 * play at `instant` and that `usable` accepts; `afterIndex` itself comes last, so a loop of one
 * page repeats it. -1 when no page qualifies.
 */
export function nextPageIndex(
  pages: readonly SequencePage[],
  afterIndex: number,
  instant: number,
  timeZone: string | undefined,
  usable: (index: number) => boolean = () => true,
): number {
  if (pages.length === 0) return -1;
  const playable = playableIndexes(pages, instant, timeZone);
  for (let step = 1; step <= pages.length; step++) {
    const index = (((afterIndex + step) % pages.length) + pages.length) % pages.length;
    if (playable.has(index) && usable(index)) return index;
  }
  return -1;
}

export function firstSegment(
  pages: readonly SequencePage[],
  start: number,
  timeZone: string | undefined,
  usable?: (index: number) => boolean,
): Segment | null {
  const index = nextPageIndex(pages, -1, start, timeZone, usable);
  return index < 0 ? null : segmentOf(pages, index, start);
}

/** The segment that starts when `current` ends (or at `at`, for an early advance). */
export function followingSegment(
  pages: readonly SequencePage[],
  current: Segment,
  timeZone: string | undefined,
  at: number = current.end,
  usable?: (index: number) => boolean,
): Segment | null {
  const index = nextPageIndex(pages, current.index, at, timeZone, usable);
  return index < 0 ? null : segmentOf(pages, index, at, index === current.index);
}

/** The segment on glass at `now`, walking forward from `anchor` boundary by boundary. */
export function segmentAt(
  pages: readonly SequencePage[],
  anchor: Segment,
  now: number,
  timeZone: string | undefined,
): Segment | null {
  let segment: Segment | null = anchor;
  for (let i = 0; segment && segment.end <= now; i++) {
    if (i >= MAX_CATCH_UP_SEGMENTS) return firstSegment(pages, now, timeZone);
    segment = followingSegment(pages, segment, timeZone);
  }
  return segment;
}

/** The segment cut short at `at` (media ended, the application asked, the page stopped being visible). */
export function endedEarly(segment: Segment, at: number): Segment {
  return { ...segment, end: Math.max(segment.fill, Math.min(segment.end, at)) };
}

/** When the set of visible pages can next change, or null when it never will. */
export function nextVisibilityBoundary(
  pages: readonly SequencePage[],
  instant: number,
  timeZone: string | undefined,
): number | null {
  const zone = usableZone(timeZone);
  if (zone === undefined) return null;
  const rules = pages.flatMap((p) => (p.visibility ? [p.visibility] : []));
  return rules.length === 0 ? null : nextBoundary(rules, instant, zone);
}

/** Item shown by a one-at-a-time selector on the page's nth activation (0-based). */
export function rotationIndex(activation: number, items: number): number {
  return items <= 0 ? 0 : activation % items;
}
