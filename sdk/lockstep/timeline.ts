// The lockstep timeline: the segment a sync group shows at an instant, a pure function of the
// manifest's pages, the group's anchor (the segment that starts at its epoch, or the last barrier's)
// and the synchronized clock. It makes exactly the sequencer's walk, boundary by boundary, plus the
import type { RuntimeManifest } from '../contract/manifest';
// one rule the engine applies between boundaries (a page whose visibility ends during its turn ends
// then, never before its fill), so every member that walks from the same anchor shows the same page
// at the same instant, with no messages per page. Between visibility boundaries the loop is
// periodic, so whole loops are skipped: an anchor months old costs a few steps per boundary.
import { isVisible, nextBoundary, usableZone } from '../schedule/page-visibility';
import { endedEarly, firstSegment, nextPageIndex, nextVisibilityBoundary, segmentOf } from './sequencer';
import type { Segment, SequencePage } from './sequencer';

/** A runaway walk (a bug, not a schedule) stops here rather than hanging glass. */
const MAX_TIMELINE_STEPS = 1_000_000;

/**
 * A point on a timeline: the segment on glass and how many turns each page began since the anchor
 * (the one on glass included). A page's items rotate by turn (a one-at-a-time selector shows item
 * `turn mod count`), so members must count turns alike too, not only pick the same page.
 */
export interface TimelinePosition {
  segment: Segment;
  /** The turn of `segment`'s page that is on glass (0-based since the anchor). */
  turn: number;
  /** Turns begun per page index since the anchor. */
  counts: readonly number[];
}

/** A timeline anchored at `segment`: its first turn, nothing counted before it. */
export function anchorAt(pages: readonly SequencePage[], segment: Segment): TimelinePosition {
  const counts = pages.map(() => 0);
  counts[segment.index] = 1;
  return { segment, turn: 0, counts };
}

/** The group's first position: the first page that may play at the epoch, starting then (null: none may). */
export function epochAnchor(
  pages: readonly SequencePage[],
  epoch: number,
  timeZone: string | undefined,
): TimelinePosition | null {
  const first = firstSegment(pages, epoch, timeZone);
  return first ? anchorAt(pages, first) : null;
}

/** The instant after `start` at which the set of playable pages can change (Infinity: never). */
function stretchEndAfter(pages: readonly SequencePage[], start: number, timeZone: string | undefined): number {
  return nextVisibilityBoundary(pages, start, timeZone) ?? Infinity;
}

/** `segment` ended at the first boundary inside its turn where its own page stops being visible. */
function clipped(pages: readonly SequencePage[], segment: Segment, timeZone: string | undefined): Segment {
  const rule = pages[segment.index]?.visibility;
  const zone = usableZone(timeZone);
  if (!rule || zone === undefined) return segment;
  for (let b = nextBoundary([rule], segment.start, zone); b !== null && b < segment.end; ) {
    if (!isVisible(rule, b, zone)) return endedEarly(segment, b);
    b = nextBoundary([rule], b, zone);
  }
  return segment;
}

/** The segment after `segment`: the sequencer's pick at its end, or a hold until the playable set changes. */
function step(pages: readonly SequencePage[], segment: Segment, timeZone: string | undefined): Segment {
  const at = segment.end;
  const index = nextPageIndex(pages, segment.index, at, timeZone);
  if (index < 0) return { ...segment, end: stretchEndAfter(pages, at, timeZone) };
  return segmentOf(pages, index, at, index === segment.index);
}

function shifted(segment: Segment, ms: number): Segment {
  return { ...segment, start: segment.start + ms, fill: segment.fill + ms, end: segment.end + ms };
}

/**
 * The position at `t` (its segment has start ≤ t < end) on the timeline that begins at `anchor`,
 * or null before the anchor. Walking from any later position of the same timeline gives the same
 * answer, so a caller may keep the last position it computed as its next anchor.
 */
export function timelinePositionAt(
  pages: readonly SequencePage[],
  anchor: TimelinePosition,
  t: number,
  timeZone: string | undefined,
): TimelinePosition | null {
  if (t < anchor.segment.start) return null;
  let segment = clipped(pages, anchor.segment, timeZone);
  let turn = anchor.turn;
  const counts = [...anchor.counts];
  let stretchEnd = stretchEndAfter(pages, segment.start, timeZone);
  // Segments of the current stretch by page index: meeting a page again gives the loop's period.
  let seen = new Map<number, Segment>();
  for (let steps = 0; segment.end <= t; steps++) {
    if (steps >= MAX_TIMELINE_STEPS) throw new Error('the lockstep timeline did not converge');
    const before = segment;
    segment = step(pages, segment, timeZone);
    if (segment.start === before.start) continue; // a hold: nothing may play until the set changes
    turn = counts[segment.index]!++;
    if (segment.start >= stretchEnd) {
      stretchEnd = stretchEndAfter(pages, segment.start, timeZone);
      seen = new Map();
    }
    // Only a turn that ends after a boundary can be cut short by it; the others are whole.
    if (segment.end > stretchEnd) {
      segment = clipped(pages, segment, timeZone);
      continue;
    }
    const earlier = seen.get(segment.index);
    seen.set(segment.index, segment);
    // Same page, same kind of turn (with or without its transition), same playable set: what
    // followed `earlier` repeats every `period` until the boundary, so skip the whole loops that
    // end before both the boundary and `t`; each page of the loop turns once per loop.
    if (!earlier || earlier.fill - earlier.start !== segment.fill - segment.start) continue;
    const period = segment.start - earlier.start;
    if (period <= 0) continue;
    const loops = Math.floor((Math.min(t, stretchEnd) - segment.end) / period);
    if (loops <= 0) continue;
    for (const [index, s] of seen) if (s.start > earlier.start) counts[index]! += loops;
    segment = shifted(segment, loops * period);
    turn = counts[segment.index]! - 1;
  }
  return { segment, turn, counts };
}

/** The segment on glass at `t` on the timeline that begins at `anchor` (null before it). */
export function timelineSegmentAt(
  pages: readonly SequencePage[],
  anchor: TimelinePosition,
  t: number,
  timeZone: string | undefined,
): Segment | null {
  return timelinePositionAt(pages, anchor, t, timeZone)?.segment ?? null;
}

/**
 * When a member that shows something else (another manifest, nothing yet) moves onto this
 * timeline: at its anchor when that is still ahead, else at its first boundary at or after
 * `notBefore` (the member needs until then to prepare the page). Members that learn of the
 * timeline before its anchor therefore all move at the anchor, on its first page.
 */
export function joinInstant(
  pages: readonly SequencePage[],
  anchor: TimelinePosition,
  notBefore: number,
  timeZone: string | undefined,
): number {
  if (anchor.segment.start >= notBefore) return anchor.segment.start;
  const segment = timelineSegmentAt(pages, anchor, notBefore, timeZone)!;
  return segment.start === notBefore ? segment.start : segment.end;
}

/** The timeline key of a lockstep manifest (barriers name it): the playlist, its revision and the group's epoch. */
export function timelineKey(
  manifest: Pick<RuntimeManifest, 'playlistId' | 'playlistRevision' | 'sync'>,
): string | null {
  const sync = manifest.sync;
  return sync ? `${manifest.playlistId ?? ''}@${manifest.playlistRevision}@${sync.epoch}` : null;
}
