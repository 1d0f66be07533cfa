import { describe, expect, it } from 'vitest';
import {
  endedEarly,
  firstSegment,
  followingSegment,
  MAX_CATCH_UP_SEGMENTS,
  nextVisibilityBoundary,
  rotationIndex,
  segmentAt,
  sequencePages,
  type SequencePage,
} from './sequencer';
import type { RuntimePage } from '../contract/manifest';

const loop: SequencePage[] = [
  { id: 'a', transitionMs: 200, dwellMs: 1000 },
  { id: 'b', transitionMs: 600, dwellMs: 2000 },
  { id: 'c', transitionMs: 0, dwellMs: 1000 },
];

describe('sequencer', () => {
  it('derives dwell from after_ms or the max_ms backstop', () => {
    const page = (id: string, advance: RuntimePage['advance']) =>
      ({ id, transition: { type: 'crossfade', durationMs: 200 }, advance }) as RuntimePage;
    expect(
      sequencePages([
        page('d', { mode: 'duration', afterMs: 5000 }),
        page('m', { mode: 'media_end', maxMs: 9000 }),
        page('a', { mode: 'application', maxMs: 7000 }),
      ]),
    ).toEqual([
      { id: 'd', transitionMs: 200, dwellMs: 5000 },
      { id: 'm', transitionMs: 200, dwellMs: 9000 },
      { id: 'a', transitionMs: 200, dwellMs: 7000 },
    ]);
  });

  it('starts at the first page: transition, then fill, then dwell', () => {
    expect(firstSegment(loop, 10_000, undefined)).toEqual({
      index: 0,
      pageId: 'a',
      start: 10_000,
      fill: 10_200,
      end: 11_200,
    });
  });

  it('chains segments exactly, so the position is a function of the anchor and the clock', () => {
    const first = firstSegment(loop, 0, undefined)!;
    const second = followingSegment(loop, first, undefined)!;
    expect(second).toEqual({ index: 1, pageId: 'b', start: 1200, fill: 1800, end: 3800 });
    const cycle = 1200 + 2600 + 1000;
    // Late timers do not matter: the page at any instant is the same however we got there.
    expect(segmentAt(loop, first, 3 * cycle + 1300, undefined)).toEqual({
      index: 1,
      pageId: 'b',
      start: 3 * cycle + 1200,
      fill: 3 * cycle + 1800,
      end: 3 * cycle + 3800,
    });
    expect(segmentAt(loop, second, 3 * cycle + 1300, undefined)).toEqual(
      segmentAt(loop, first, 3 * cycle + 1300, undefined),
    );
    expect(segmentAt(loop, first, 500, undefined)).toBe(first);
  });

  it('wraps around and repeats a single page', () => {
    const last = { index: 2, pageId: 'c', start: 0, fill: 0, end: 1000 };
    expect(followingSegment(loop, last, undefined)!.pageId).toBe('a');
    const single = [loop[0]!];
    const only = firstSegment(single, 0, undefined)!;
    // Coming round again is a cut: no transition, the page fills at once.
    expect(followingSegment(single, only, undefined)).toEqual({ ...only, start: 1200, fill: 1200, end: 2200 });
  });

  it('skips pages the caller cannot show yet', () => {
    const first = firstSegment(loop, 0, undefined)!;
    expect(followingSegment(loop, first, undefined, first.end, (i) => i !== 1)!.pageId).toBe('c');
    expect(followingSegment(loop, first, undefined, first.end, () => false)).toBeNull();
  });

  it('ends a segment early for media end or an application signal, never before the fill', () => {
    const seg = { index: 0, pageId: 'a', start: 0, fill: 200, end: 1200 };
    expect(endedEarly(seg, 700).end).toBe(700);
    expect(endedEarly(seg, 100).end).toBe(200);
    expect(endedEarly(seg, 5000).end).toBe(1200);
  });

  it('starts afresh when asleep for longer than the catch-up bound', () => {
    const first = firstSegment(loop, 0, undefined)!;
    const far = MAX_CATCH_UP_SEGMENTS * 10_000;
    expect(segmentAt(loop, first, far, undefined)).toEqual(firstSegment(loop, far, undefined));
  });

  it('rotates one-at-a-time items by activation', () => {
    expect([0, 1, 2, 3, 4].map((n) => rotationIndex(n, 3))).toEqual([0, 1, 2, 0, 1]);
    expect(rotationIndex(5, 0)).toBe(0);
  });
});

describe('sequencer with page visibility', () => {
  const zone = 'Europe/Berlin';
  const scheduled: SequencePage[] = [
    { id: 'always', transitionMs: 0, dwellMs: 60_000 },
    // Weekdays 09:00–17:00 Berlin time.
    {
      id: 'office',
      transitionMs: 0,
      dwellMs: 60_000,
      visibility: {
        enabled: true,
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' }],
      },
    },
  ];

  it('plays a scheduled page only inside its window, judged at the boundary', () => {
    const mondayNoon = Date.parse('2026-03-02T11:00:00Z'); // 12:00 in Berlin (CET)
    const mondayNight = Date.parse('2026-03-02T21:00:00Z');
    const atNoon = firstSegment(scheduled, mondayNoon, zone)!;
    expect(followingSegment(scheduled, atNoon, zone)!.pageId).toBe('office');
    const atNight = firstSegment(scheduled, mondayNight, zone)!;
    expect(followingSegment(scheduled, atNight, zone)!.pageId).toBe('always');
  });

  it('hides scheduled pages without a time zone; pages without visibility still play', () => {
    const seg = firstSegment(scheduled, Date.parse('2026-03-02T11:00:00Z'), undefined)!;
    expect(followingSegment(scheduled, seg, undefined)!.pageId).toBe('always');
  });

  it('treats a zone this runtime does not know like none: scheduled pages hidden, no boundary, nothing thrown', () => {
    // An older browser's ICU lacks newer names (Europe/Kyiv before tzdata 2022b, America/Coyhaique).
    const unknown = 'America/Not_A_Zone';
    const seg = firstSegment(scheduled, Date.parse('2026-03-02T11:00:00Z'), unknown)!;
    expect(followingSegment(scheduled, seg, unknown)!.pageId).toBe('always');
    expect(nextVisibilityBoundary(scheduled, Date.parse('2026-03-02T11:00:00Z'), unknown)).toBeNull();
  });

  it('names the next boundary exactly, across a DST change', () => {
    // Friday 27 March 2026 18:00 Berlin (CET, UTC+1); the window opens Monday 30 March 09:00 CEST (UTC+2).
    const friday = Date.parse('2026-03-27T17:00:00Z');
    expect(nextVisibilityBoundary(scheduled, friday, zone)).toBe(Date.parse('2026-03-30T07:00:00Z'));
    expect(nextVisibilityBoundary([scheduled[0]!], friday, zone)).toBeNull();
    expect(nextVisibilityBoundary(scheduled, friday, undefined)).toBeNull();
  });
});
