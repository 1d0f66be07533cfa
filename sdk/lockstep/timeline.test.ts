import { describe, expect, it } from 'vitest';
import type { Visibility } from '../contract/visibility';
import { isVisible } from '../schedule/page-visibility';
import { endedEarly, followingSegment, segmentAt, type Segment, type SequencePage } from './sequencer';
import { epochAnchor, joinInstant, timelinePositionAt, timelineSegmentAt, type TimelinePosition } from './timeline';

const at = (iso: string) => Date.parse(iso);
const BERLIN = 'Europe/Berlin';
const HOUR = 3600_000;
const DAY = 24 * HOUR;

const loop: SequencePage[] = [
  { id: 'a', transitionMs: 200, dwellMs: 1000 },
  { id: 'b', transitionMs: 600, dwellMs: 2000 },
  { id: 'c', transitionMs: 0, dwellMs: 1000 },
];
const CYCLE = 1200 + 2600 + 1000;

const office: Visibility = {
  enabled: true,
  windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }],
};
const lunch: Visibility = {
  enabled: true,
  windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '12:00', end: '12:30' }],
};
const scheduled: SequencePage[] = [
  { id: 'always', transitionMs: 300, dwellMs: 7_000 },
  { id: 'office', transitionMs: 500, dwellMs: 11_000, visibility: office },
  { id: 'lunch', transitionMs: 0, dwellMs: 13_000, visibility: lunch },
];

/**
 * The engine's walk written out plainly, one turn at a time: the sequencer's pick at each end, and a
 * turn cut short at the first instant inside it where its page stops being visible (checked every
 * second, and every rule in these tests changes on a whole minute).
 */
function referenceWalk(
  pages: SequencePage[],
  anchor: TimelinePosition,
  instants: number[],
  zone: string,
): TimelinePosition[] {
  const cut = (s: Segment) => {
    const rule = pages[s.index]!.visibility;
    if (!rule) return s;
    for (let x = Math.ceil((s.start + 1) / 1000) * 1000; x < s.end; x += 1000)
      if (!isVisible(rule, x, zone)) return endedEarly(s, x);
    return s;
  };
  let s = cut(anchor.segment);
  let turn = anchor.turn;
  const counts = [...anchor.counts];
  return [...instants]
    .sort((a, b) => a - b)
    .map((t) => {
      while (s.end <= t) {
        s = cut(followingSegment(pages, s, zone)!);
        turn = counts[s.index]!++;
      }
      return { segment: s, turn, counts: [...counts] };
    });
}

describe('the lockstep timeline', () => {
  it('is the sequencer’s walk from the epoch, at any instant', () => {
    const anchor = epochAnchor(loop, 1_000_000, undefined)!;
    for (const t of [1_000_000, 1_000_199, 1_001_200, 1_003_000, 1_000_000 + 7 * CYCLE + 4000, 1_000_000 + 999 * CYCLE])
      expect(timelineSegmentAt(loop, anchor, t, undefined)).toEqual(segmentAt(loop, anchor.segment, t, undefined));
    expect(timelineSegmentAt(loop, anchor, 999_999, undefined)).toBeNull();
  });

  it('skips whole loops, so an epoch a year old is answered exactly', () => {
    const epoch = at('2025-03-02T11:00:00Z');
    const anchor = epochAnchor(loop, epoch, undefined)!;
    const t = epoch + 365 * DAY + 1234;
    const loops = Math.floor((t - epoch) / CYCLE);
    const offset = t - epoch - loops * CYCLE;
    const segment = timelineSegmentAt(loop, anchor, t, undefined)!;
    // 1234 ms into a loop lies in page b's turn, which starts 1200 ms into the loop.
    expect(offset).toBe(1234 + ((365 * DAY) % CYCLE));
    expect(segment.start - epoch).toBe(loops * CYCLE + [0, 1200, 3800].filter((s) => s <= offset).at(-1)!);
    expect(segment.pageId).toBe(offset < 1200 ? 'a' : offset < 3800 ? 'b' : 'c');
  });

  it('repeats a single page as cuts without a transition', () => {
    const single = [loop[0]!];
    const anchor = epochAnchor(single, 0, undefined)!;
    // First turn: 200 ms transition + 1000 ms dwell; then cuts of 1000 ms.
    expect(timelineSegmentAt(single, anchor, 1200 + 5 * 1000 + 10, undefined)).toEqual({
      index: 0,
      pageId: 'a',
      start: 6200,
      fill: 6200,
      end: 7200,
    });
  });

  it('counts each page’s turns alike on every member, across skipped loops', () => {
    const anchor = epochAnchor(loop, 0, undefined)!;
    // 1000 loops and 1234 ms: page b is on its 1001st turn, a and b turned 1001 times, c 1000.
    const position = timelinePositionAt(loop, anchor, 1000 * CYCLE + 1234, undefined)!;
    expect(position.segment.pageId).toBe('b');
    expect(position.turn).toBe(1000);
    expect(position.counts).toEqual([1001, 1001, 1000]);
    // The same as walking one turn at a time.
    const walked = referenceWalk(loop, anchor, [1000 * CYCLE + 1234], 'UTC')[0]!;
    expect(position).toEqual(walked);
  });

  it('gives every member the same segment wherever it starts walking', () => {
    const anchor = epochAnchor(scheduled, at('2026-03-02T06:00:00Z'), BERLIN)!;
    const t = at('2026-03-04T11:12:13Z');
    const viaYesterday = timelinePositionAt(scheduled, anchor, at('2026-03-03T15:00:00Z'), BERLIN)!;
    expect(timelinePositionAt(scheduled, viaYesterday, t, BERLIN)).toEqual(
      timelinePositionAt(scheduled, anchor, t, BERLIN),
    );
  });

  it('plays a scheduled page only inside its window and ends it mid-turn when its window closes', () => {
    const anchor = epochAnchor(scheduled, at('2026-03-02T06:00:00Z'), BERLIN)!; // Monday 07:00 Berlin
    const pagesBetween = (from: number, to: number) => {
      const ids = new Set<string>();
      for (let s = timelineSegmentAt(scheduled, anchor, from, BERLIN)!; s.start < to; )
        ids.add(s.pageId), (s = timelineSegmentAt(scheduled, anchor, s.end, BERLIN)!);
      return ids;
    };
    expect(pagesBetween(at('2026-03-02T06:00:00Z'), at('2026-03-02T07:59:00Z'))).toEqual(new Set(['always']));
    expect(pagesBetween(at('2026-03-02T08:01:00Z'), at('2026-03-02T10:59:00Z'))).toEqual(new Set(['always', 'office']));
    expect(pagesBetween(at('2026-03-02T11:01:00Z'), at('2026-03-02T11:29:00Z'))).toEqual(
      new Set(['always', 'office', 'lunch']),
    );
  });

  it('ends a turn exactly when its page’s window closes during it', () => {
    const long: SequencePage[] = [
      { id: 'always', transitionMs: 0, dwellMs: 1000 },
      { id: 'office', transitionMs: 0, dwellMs: 3 * HOUR, visibility: office },
    ];
    // Monday 09:00 CET: always, office until 12:00:01, always, office until 15:00:02, always, then
    // office from 15:00:03 would run to 18:00:03 but its window closes at 17:00 (16:00Z).
    const anchor = epochAnchor(long, at('2026-03-02T08:00:00Z'), BERLIN)!;
    const last = timelineSegmentAt(long, anchor, at('2026-03-02T15:59:59Z'), BERLIN)!;
    expect(last).toMatchObject({
      pageId: 'office',
      start: at('2026-03-02T14:00:03Z'),
      end: at('2026-03-02T16:00:00Z'),
    });
    expect(timelineSegmentAt(long, anchor, at('2026-03-02T16:00:00Z'), BERLIN)).toMatchObject({
      pageId: 'always',
      start: at('2026-03-02T16:00:00Z'),
    });
  });

  it('agrees with the engine’s walk across windows, week-ends and a DST change', () => {
    // Friday 27 March 2026 to Tuesday 31 March: Berlin moves from UTC+1 to UTC+2 on Sunday.
    const from = at('2026-03-27T05:00:00Z');
    const anchor = epochAnchor(scheduled, from, BERLIN)!;
    let seed = 7;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const instants = Array.from({ length: 40 }, () => from + Math.floor(random() * 4 * DAY)).sort((a, b) => a - b);
    const expected = referenceWalk(scheduled, anchor, instants, BERLIN);
    instants.forEach((t, i) =>
      expect(timelinePositionAt(scheduled, anchor, t, BERLIN), new Date(t).toISOString()).toEqual(expected[i]),
    );
  });

  it('opens a window at 09:00 civil time on both sides of the DST change', () => {
    const anchor = epochAnchor(scheduled, at('2026-03-27T05:00:00Z'), BERLIN)!;
    const firstOffice = (from: number) => {
      let p = timelinePositionAt(scheduled, anchor, from, BERLIN)!;
      while (p.segment.pageId !== 'office') p = timelinePositionAt(scheduled, p, p.segment.end, BERLIN)!;
      return p.segment.start;
    };
    // Friday 09:00 CET is 08:00Z; Monday 09:00 CEST is 07:00Z. The first office turn comes at the
    // first boundary after the window opens (at most one turn of each other page later).
    const friday = firstOffice(at('2026-03-27T08:00:00Z'));
    const monday = firstOffice(at('2026-03-30T07:00:00Z'));
    expect(friday - at('2026-03-27T08:00:00Z')).toBeGreaterThanOrEqual(0);
    expect(friday - at('2026-03-27T08:00:00Z')).toBeLessThanOrEqual(7_300 + 13_000);
    expect(monday - at('2026-03-30T07:00:00Z')).toBeGreaterThanOrEqual(0);
    expect(monday - at('2026-03-30T07:00:00Z')).toBeLessThanOrEqual(7_300 + 13_000);
    // 06:59:59Z on Monday is 08:59:59 CEST: the window is not open yet.
    expect(timelineSegmentAt(scheduled, anchor, at('2026-03-30T06:59:59Z'), BERLIN)!.pageId).not.toBe('office');
  });

  it('walks a month of windows to the same segment as from any day in between', () => {
    const anchor = epochAnchor(scheduled, at('2026-02-01T00:00:00Z'), BERLIN)!;
    const position = timelinePositionAt(scheduled, anchor, at('2026-03-03T11:15:00Z'), BERLIN)!;
    expect(position).toEqual(
      timelinePositionAt(
        scheduled,
        timelinePositionAt(scheduled, anchor, at('2026-03-03T00:00:00Z'), BERLIN)!,
        at('2026-03-03T11:15:00Z'),
        BERLIN,
      ),
    );
  });
});

describe('a zone this member cannot evaluate', () => {
  it('walks on from a lead’s anchor on a scheduled page instead of throwing', () => {
    // The lead knew the zone; this member's older ICU does not (Europe/Kyiv before tzdata 2022b).
    const start = at('2026-03-02T11:00:00Z');
    const anchor = {
      segment: { index: 1, pageId: 'office', start, fill: start + 500, end: start + 11_500 },
      turn: 0,
      counts: [0, 1, 0],
    };
    const position = timelinePositionAt(scheduled, anchor, start + 20_000, 'America/Not_A_Zone');
    expect(position?.segment.pageId).toBe('always');
  });
});

describe('moving onto a new timeline (a playlist swap)', () => {
  it('moves at the epoch, on the first page, when the member learns of it in time', () => {
    const epoch = 50_000;
    const anchor = epochAnchor(loop, epoch, undefined)!;
    expect(joinInstant(loop, anchor, 45_000, undefined)).toBe(epoch);
    expect(timelineSegmentAt(loop, anchor, epoch, undefined)!.pageId).toBe('a');
  });

  it('moves at the next boundary when it learns late, so members that learn within one turn move together', () => {
    const anchor = epochAnchor(loop, 50_000, undefined)!;
    // Boundaries of the new timeline: 50 000, 51 200, 53 800, 54 800, 56 000, ...
    expect(joinInstant(loop, anchor, 51_300, undefined)).toBe(53_800);
    expect(joinInstant(loop, anchor, 53_700, undefined)).toBe(53_800);
    expect(joinInstant(loop, anchor, 53_800, undefined)).toBe(53_800);
    expect(joinInstant(loop, anchor, 53_801, undefined)).toBe(54_800);
  });
});
