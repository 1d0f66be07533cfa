import { describe, expect, it } from 'vitest';
import type { Visibility } from '../contract/visibility';
import { isVisible, nextBoundary, selectPlayablePages } from './page-visibility';

const at = (iso: string) => Date.parse(iso);
const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

describe('isVisible: the rule', () => {
  it('hides a disabled rule always', () => {
    expect(isVisible({ enabled: false }, at('2026-05-01T12:00:00Z'), BERLIN)).toBe(false);
    expect(isVisible({ enabled: false, windows: [{ days: ['fri'] }] }, at('2026-05-01T12:00:00Z'), BERLIN)).toBe(false);
  });

  it('treats from as inclusive and until as exclusive, in the screen zone', () => {
    const rule: Visibility = { enabled: true, from: '2026-05-01T09:00', until: '2026-05-01T17:30' };
    // Berlin is UTC+2 in May.
    expect(isVisible(rule, at('2026-05-01T06:59:59.999Z'), BERLIN)).toBe(false);
    expect(isVisible(rule, at('2026-05-01T07:00:00Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-01T15:29:59.999Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-01T15:30:00Z'), BERLIN)).toBe(false);
    // The same civil bounds in New York (UTC−4) are other instants.
    expect(isVisible(rule, at('2026-05-01T12:59:00Z'), NEW_YORK)).toBe(false);
    expect(isVisible(rule, at('2026-05-01T13:00:00Z'), NEW_YORK)).toBe(true);
  });

  it('with only from, stays visible forever after; with only until, visible until then', () => {
    expect(isVisible({ enabled: true, from: '2026-01-01T00:00' }, at('2099-01-01T00:00:00Z'), BERLIN)).toBe(true);
    expect(isVisible({ enabled: true, until: '2026-01-01T00:00' }, at('2025-12-31T22:59:59Z'), BERLIN)).toBe(true);
    expect(isVisible({ enabled: true, until: '2026-01-01T00:00' }, at('2025-12-31T23:00:00Z'), BERLIN)).toBe(false);
  });

  it('matches a window on its days between start (inclusive) and end (exclusive)', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['mon', 'wed'], start: '09:00', end: '12:00' }] };
    // 2026-05-04 is a Monday; Berlin UTC+2.
    expect(isVisible(rule, at('2026-05-04T06:59:00Z'), BERLIN)).toBe(false);
    expect(isVisible(rule, at('2026-05-04T07:00:00Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-04T09:59:59Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-04T10:00:00Z'), BERLIN)).toBe(false);
    expect(isVisible(rule, at('2026-05-05T08:00:00Z'), BERLIN)).toBe(false); // Tuesday
    expect(isVisible(rule, at('2026-05-06T08:00:00Z'), BERLIN)).toBe(true); // Wednesday
  });

  it('uses the screen zone for the weekday, not UTC', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['sat'] }] };
    // Friday 23:30 in UTC is already Saturday 01:30 in Berlin.
    expect(isVisible(rule, at('2026-05-01T23:30:00Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-01T23:30:00Z'), NEW_YORK)).toBe(false);
  });

  it('lets a window with end ≤ start cross midnight, owned by its start day', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['fri'], start: '22:00', end: '02:00' }] };
    // Friday 2026-05-01 22:00 Berlin = 20:00Z; Saturday 02:00 Berlin = Saturday 00:00Z.
    expect(isVisible(rule, at('2026-05-01T19:59:00Z'), BERLIN)).toBe(false);
    expect(isVisible(rule, at('2026-05-01T20:00:00Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-01T23:59:00Z'), BERLIN)).toBe(true); // Saturday 01:59 local
    expect(isVisible(rule, at('2026-05-02T00:00:00Z'), BERLIN)).toBe(false); // Saturday 02:00 local
    // Saturday 22:00 is not a start day, and Friday 01:00 belongs to Thursday's (absent) window.
    expect(isVisible(rule, at('2026-05-02T20:30:00Z'), BERLIN)).toBe(false);
    expect(isVisible(rule, at('2026-04-30T23:00:00Z'), BERLIN)).toBe(false);
  });

  it('reads end == start as a full day from start to start', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['mon'], start: '09:00', end: '09:00' }] };
    expect(isVisible(rule, at('2026-05-04T07:00:00Z'), BERLIN)).toBe(true); // Mon 09:00
    expect(isVisible(rule, at('2026-05-05T06:59:00Z'), BERLIN)).toBe(true); // Tue 08:59
    expect(isVisible(rule, at('2026-05-05T07:00:00Z'), BERLIN)).toBe(false); // Tue 09:00
  });

  it('matches all-day windows from local midnight to local midnight', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['sun'] }] };
    expect(isVisible(rule, at('2026-05-02T21:59:59Z'), BERLIN)).toBe(false); // Sat 23:59:59
    expect(isVisible(rule, at('2026-05-02T22:00:00Z'), BERLIN)).toBe(true); // Sun 00:00
    expect(isVisible(rule, at('2026-05-03T21:59:59Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-03T22:00:00Z'), BERLIN)).toBe(false);
  });

  it('needs both the date bounds and a window', () => {
    const rule: Visibility = {
      enabled: true,
      from: '2026-05-04T00:00',
      until: '2026-05-11T00:00',
      windows: [{ days: ['mon'], start: '09:00', end: '10:00' }],
    };
    expect(isVisible(rule, at('2026-04-27T07:30:00Z'), BERLIN)).toBe(false); // a Monday before from
    expect(isVisible(rule, at('2026-05-04T07:30:00Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-11T07:30:00Z'), BERLIN)).toBe(false); // a Monday after until
  });

  it('matches when any one of several windows holds', () => {
    const rule: Visibility = {
      enabled: true,
      windows: [
        { days: ['mon'], start: '09:00', end: '10:00' },
        { days: ['mon'], start: '15:00', end: '16:00' },
      ],
    };
    expect(isVisible(rule, at('2026-05-04T13:30:00Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-05-04T11:30:00Z'), BERLIN)).toBe(false);
  });

  it('refuses an unknown time zone', () => {
    expect(() => isVisible({ enabled: true, windows: [{ days: ['mon'] }] }, 0, 'Nowhere/Land')).toThrow(RangeError);
  });
});

describe('isVisible across DST changes', () => {
  it('Berlin spring forward: a window starting in the gap opens when the gap ends', () => {
    // 2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00Z.
    const rule: Visibility = { enabled: true, windows: [{ days: ['sun'], start: '02:30', end: '04:00' }] };
    expect(isVisible(rule, at('2026-03-29T00:59:59Z'), BERLIN)).toBe(false); // 01:59:59 CET
    expect(isVisible(rule, at('2026-03-29T01:00:00Z'), BERLIN)).toBe(true); // 03:00 CEST
    expect(isVisible(rule, at('2026-03-29T01:59:59Z'), BERLIN)).toBe(true); // 03:59:59 CEST
    expect(isVisible(rule, at('2026-03-29T02:00:00Z'), BERLIN)).toBe(false); // 04:00 CEST
  });

  it('Berlin spring forward: a window entirely inside the gap does not occur that day', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['sun'], start: '02:00', end: '02:30' }] };
    for (const t of ['2026-03-29T00:30:00Z', '2026-03-29T01:00:00Z', '2026-03-29T01:15:00Z'])
      expect(isVisible(rule, at(t), BERLIN)).toBe(false);
    // The next Sunday it does.
    expect(isVisible(rule, at('2026-04-05T00:15:00Z'), BERLIN)).toBe(true);
  });

  it('Berlin fall back: a window inside the repeated hour plays once, at the first occurrence', () => {
    // 2026-10-25: 03:00 CEST falls back to 02:00 CET at 01:00Z; 02:00–03:00 happens twice.
    const rule: Visibility = { enabled: true, windows: [{ days: ['sun'], start: '02:00', end: '02:30' }] };
    expect(isVisible(rule, at('2026-10-25T00:00:00Z'), BERLIN)).toBe(true); // 02:00 CEST
    expect(isVisible(rule, at('2026-10-25T00:30:00Z'), BERLIN)).toBe(false); // 02:30 CEST
    expect(isVisible(rule, at('2026-10-25T01:10:00Z'), BERLIN)).toBe(false); // 02:10 CET, second pass
  });

  it('Berlin fall back: a window spanning the repeated hour lasts an hour longer', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['sun'], start: '01:00', end: '03:00' }] };
    expect(isVisible(rule, at('2026-10-24T22:59:00Z'), BERLIN)).toBe(false); // 00:59 CEST
    expect(isVisible(rule, at('2026-10-24T23:00:00Z'), BERLIN)).toBe(true); // 01:00 CEST
    expect(isVisible(rule, at('2026-10-25T01:30:00Z'), BERLIN)).toBe(true); // 02:30 CET
    expect(isVisible(rule, at('2026-10-25T01:59:59Z'), BERLIN)).toBe(true);
    expect(isVisible(rule, at('2026-10-25T02:00:00Z'), BERLIN)).toBe(false); // 03:00 CET
  });

  it('New York spring forward: from in the gap starts at the end of the gap', () => {
    // 2026-03-08: 02:00 EST jumps to 03:00 EDT at 07:00Z.
    const rule: Visibility = { enabled: true, from: '2026-03-08T02:30' };
    expect(isVisible(rule, at('2026-03-08T06:59:59Z'), NEW_YORK)).toBe(false);
    expect(isVisible(rule, at('2026-03-08T07:00:00Z'), NEW_YORK)).toBe(true);
  });

  it('New York fall back: until in the repeated hour ends at its first occurrence', () => {
    // 2026-11-01: 02:00 EDT falls back to 01:00 EST at 06:00Z; 01:00–02:00 happens twice.
    const rule: Visibility = { enabled: true, until: '2026-11-01T01:30' };
    expect(isVisible(rule, at('2026-11-01T05:29:59Z'), NEW_YORK)).toBe(true); // 01:29:59 EDT
    expect(isVisible(rule, at('2026-11-01T05:30:00Z'), NEW_YORK)).toBe(false); // 01:30 EDT
    expect(isVisible(rule, at('2026-11-01T06:10:00Z'), NEW_YORK)).toBe(false); // 01:10 EST, second pass
  });

  it('New York: a window crossing midnight into the fall-back night', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['sat'], start: '23:00', end: '01:30' }] };
    expect(isVisible(rule, at('2026-11-01T03:00:00Z'), NEW_YORK)).toBe(true); // Sat 23:00 EDT
    expect(isVisible(rule, at('2026-11-01T05:29:00Z'), NEW_YORK)).toBe(true); // Sun 01:29 EDT
    expect(isVisible(rule, at('2026-11-01T05:30:00Z'), NEW_YORK)).toBe(false); // Sun 01:30 EDT
    expect(isVisible(rule, at('2026-11-01T06:15:00Z'), NEW_YORK)).toBe(false); // Sun 01:15 EST
  });

  it('takes from and until in a local mean time beyond ±15 h (Manila before 1845, UTC−15:56:08)', () => {
    // 08:30 in Manila on 1800-01-01 is 00:26:08Z the next UTC day.
    const from: Visibility = { enabled: true, from: '1800-01-01T08:30' };
    const until: Visibility = { enabled: true, until: '1800-01-01T08:30' };
    expect(isVisible(from, at('1800-01-02T00:26:07Z'), 'Asia/Manila')).toBe(false);
    expect(isVisible(from, at('1800-01-02T00:26:08Z'), 'Asia/Manila')).toBe(true);
    expect(isVisible(from, at('2026-12-07T12:00:00Z'), 'Asia/Manila')).toBe(true);
    expect(isVisible(until, at('1800-01-02T00:26:07Z'), 'Asia/Manila')).toBe(true);
    expect(isVisible(until, at('2026-12-07T12:00:00Z'), 'Asia/Manila')).toBe(false);
    expect(nextBoundary([until], at('1800-01-01T00:00:00Z'), 'Asia/Manila')).toBe(at('1800-01-02T00:26:08Z'));
  });

  it('all-day windows keep 23 and 25 hour days whole', () => {
    const sunday: Visibility = { enabled: true, windows: [{ days: ['sun'] }] };
    // Spring-forward Sunday in New York is 23 hours: 05:00Z to 04:00Z next day.
    expect(isVisible(sunday, at('2026-03-08T04:59:59Z'), NEW_YORK)).toBe(false);
    expect(isVisible(sunday, at('2026-03-08T05:00:00Z'), NEW_YORK)).toBe(true);
    expect(isVisible(sunday, at('2026-03-09T03:59:59Z'), NEW_YORK)).toBe(true);
    expect(isVisible(sunday, at('2026-03-09T04:00:00Z'), NEW_YORK)).toBe(false);
    // Fall-back Sunday is 25 hours: 04:00Z to 05:00Z next day.
    expect(isVisible(sunday, at('2026-11-01T04:00:00Z'), NEW_YORK)).toBe(true);
    expect(isVisible(sunday, at('2026-11-02T04:59:59Z'), NEW_YORK)).toBe(true);
    expect(isVisible(sunday, at('2026-11-02T05:00:00Z'), NEW_YORK)).toBe(false);
  });
});

describe('nextBoundary', () => {
  it('returns null for no rules, disabled rules and rules that never change again', () => {
    expect(nextBoundary([], at('2026-05-01T00:00:00Z'), BERLIN)).toBeNull();
    expect(
      nextBoundary([{ enabled: false, windows: [{ days: ['mon'] }] }], at('2026-05-01T00:00:00Z'), BERLIN),
    ).toBeNull();
    expect(nextBoundary([{ enabled: true, until: '2026-01-01T00:00' }], at('2026-05-01T00:00:00Z'), BERLIN)).toBeNull();
  });

  it('names the from and until instants', () => {
    const rule: Visibility = { enabled: true, from: '2026-05-01T09:00', until: '2026-05-01T17:30' };
    expect(nextBoundary([rule], at('2026-04-01T00:00:00Z'), BERLIN)).toBe(at('2026-05-01T07:00:00Z'));
    expect(nextBoundary([rule], at('2026-05-01T07:00:00Z'), BERLIN)).toBe(at('2026-05-01T15:30:00Z'));
  });

  it('is strictly after the given instant', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['mon'], start: '09:00', end: '10:00' }] };
    expect(nextBoundary([rule], at('2026-05-04T07:00:00Z'), BERLIN)).toBe(at('2026-05-04T08:00:00Z'));
  });

  it('finds the next week when the window already passed this week', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['mon'], start: '09:00', end: '10:00' }] };
    expect(nextBoundary([rule], at('2026-05-04T08:30:00Z'), BERLIN)).toBe(at('2026-05-11T07:00:00Z'));
  });

  it('takes the earliest boundary of all rules', () => {
    const rules: Visibility[] = [
      { enabled: true, windows: [{ days: ['tue'], start: '12:00', end: '13:00' }] },
      { enabled: true, windows: [{ days: ['mon'], start: '18:00', end: '02:00' }] },
    ];
    // Monday 2026-05-04 12:00 Berlin → next is Monday 18:00 local.
    expect(nextBoundary(rules, at('2026-05-04T10:00:00Z'), BERLIN)).toBe(at('2026-05-04T16:00:00Z'));
    // Inside the crossing window → its end, Tuesday 02:00 local.
    expect(nextBoundary(rules, at('2026-05-04T20:00:00Z'), BERLIN)).toBe(at('2026-05-05T00:00:00Z'));
  });

  it('lands on the end of the gap for a boundary inside spring forward', () => {
    const rule: Visibility = { enabled: true, windows: [{ days: ['sun'], start: '02:30', end: '04:00' }] };
    expect(nextBoundary([rule], at('2026-03-28T12:00:00Z'), BERLIN)).toBe(at('2026-03-29T01:00:00Z'));
  });

  // Brute force: step every minute across both DST changes and check that each change of any
  // rule's outcome is exactly where nextBoundary said the next one would be.
  it.each([
    [BERLIN, '2026-03-26T00:00:00Z', '2026-04-02T00:00:00Z'],
    [BERLIN, '2026-10-22T00:00:00Z', '2026-10-29T00:00:00Z'],
    [NEW_YORK, '2026-03-05T00:00:00Z', '2026-03-12T00:00:00Z'],
    [NEW_YORK, '2026-10-29T00:00:00Z', '2026-11-05T00:00:00Z'],
  ])('never misses a change (%s, %s)', (zone, startIso, endIso) => {
    const rules: Visibility[] = [
      { enabled: true, windows: [{ days: ['sun'], start: '02:00', end: '02:30' }] },
      { enabled: true, windows: [{ days: ['sat', 'sun'], start: '23:30', end: '01:30' }] },
      { enabled: true, windows: [{ days: ['mon', 'sun'] }] },
      {
        enabled: true,
        from: `${startIso.slice(0, 10)}T03:00`,
        until: `${endIso.slice(0, 10)}T01:15`,
        windows: [{ days: ['wed', 'thu', 'fri'], start: '08:00', end: '08:00' }],
      },
      { enabled: true, windows: [{ days: ['sun'], start: '01:15', end: '03:15' }] },
    ];
    const outcome = (t: number) => rules.map((r) => isVisible(r, t, zone)).join();
    let t = at(startIso);
    let previous = outcome(t);
    let expected = nextBoundary(rules, t, zone);
    let changes = 0;
    for (t += 60_000; t < at(endIso); t += 60_000) {
      const now = outcome(t);
      expect(expected, `boundary after ${new Date(t - 60_000).toISOString()}`).not.toBeNull();
      expect(expected!).toBeGreaterThanOrEqual(t);
      if (now !== previous) {
        changes++;
        expect(new Date(expected!).toISOString()).toBe(new Date(t).toISOString());
      }
      if (expected === t || now !== previous) expected = nextBoundary(rules, t, zone);
      previous = now;
    }
    expect(changes).toBeGreaterThan(10);
  });
});

describe('selectPlayablePages', () => {
  const pages = [
    { id: 'always' },
    {
      id: 'mornings',
      visibility: { enabled: true, windows: [{ days: ['mon' as const], start: '06:00', end: '10:00' }] },
    },
    { id: 'hidden', visibility: { enabled: false } },
  ];

  it('keeps pages without visibility and adds scheduled pages while their rule holds', () => {
    expect(selectPlayablePages(pages, at('2026-05-04T06:00:00Z'), BERLIN).map((p) => p.id)).toEqual([
      'always',
      'mornings',
    ]);
    expect(selectPlayablePages(pages, at('2026-05-04T12:00:00Z'), BERLIN).map((p) => p.id)).toEqual(['always']);
  });

  it('falls back to the pages without visibility when the zone is missing or unknown', () => {
    expect(selectPlayablePages(pages, at('2026-05-04T06:00:00Z'), undefined).map((p) => p.id)).toEqual(['always']);
    expect(selectPlayablePages(pages, at('2026-05-04T06:00:00Z'), 'Nowhere/Land').map((p) => p.id)).toEqual(['always']);
  });

  it('keeps the manifest order', () => {
    const reordered = [pages[1]!, pages[0]!];
    expect(selectPlayablePages(reordered, at('2026-05-04T06:00:00Z'), BERLIN).map((p) => p.id)).toEqual([
      'mornings',
      'always',
    ]);
  });
});
