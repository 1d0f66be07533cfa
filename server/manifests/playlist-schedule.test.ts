import { describe, expect, it } from 'vitest';
import type { PlaylistScheduleEntry } from '../../sdk/contract/fleet';
import { resolveSchedule, type ScheduleInputs } from './playlist-schedule';

const ALL_DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const daily = (id: string, playlist: string, start: string, end: string): PlaylistScheduleEntry => ({
  id,
  playlist_id: playlist,
  rule: { enabled: true, windows: [{ days: [...ALL_DAYS], start, end }] },
});

function inputs(overrides: Partial<ScheduleInputs>): ScheduleInputs {
  return {
    playlistId: 'pl_default',
    timezone: 'Europe/Berlin',
    entries: [],
    takeover: null,
    unavailable: new Set(),
    ...overrides,
  };
}

const at = (iso: string) => Date.parse(iso);

describe('resolveSchedule', () => {
  it('gives the first matching entry in priority order, else the assignment', () => {
    const entries = [daily('lunch', 'pl_lunch', '11:30', '14:00'), daily('day', 'pl_day', '08:00', '18:00')];
    const noon = at('2026-11-23T11:00:00Z'); // 12:00 in Berlin
    expect(resolveSchedule(inputs({ entries }), noon).effective).toEqual({
      playlistId: 'pl_lunch',
      source: 'schedule',
    });
    expect(resolveSchedule(inputs({ entries }), at('2026-11-23T15:00:00Z')).effective.playlistId).toBe('pl_day');
    expect(resolveSchedule(inputs({ entries }), at('2026-11-23T20:00:00Z')).effective).toEqual({
      playlistId: 'pl_default',
      source: 'assignment',
    });
  });

  it('names the next boundary: the lunch window opens at 11:30 civil time', () => {
    const entries = [daily('lunch', 'pl_lunch', '11:30', '14:00')];
    expect(resolveSchedule(inputs({ entries }), at('2026-11-23T08:00:00Z')).nextBoundary).toBe(
      at('2026-11-23T10:30:00Z'),
    );
    expect(resolveSchedule(inputs({ entries }), at('2026-11-23T11:00:00Z')).nextBoundary).toBe(
      at('2026-11-23T13:00:00Z'),
    );
  });

  it('follows Berlin across the spring-forward day: 11:30 is 10:30Z before and 09:30Z after', () => {
    const entries = [daily('lunch', 'pl_lunch', '11:30', '14:00')];
    const saturday = resolveSchedule(inputs({ entries }), at('2026-03-28T06:00:00Z')).nextBoundary;
    const sunday = resolveSchedule(inputs({ entries }), at('2026-03-29T06:00:00Z')).nextBoundary;
    expect(saturday).toBe(at('2026-03-28T10:30:00Z'));
    expect(sunday).toBe(at('2026-03-29T09:30:00Z'));
  });

  it('follows New York across the fall-back night: a window ending at 01:30 ends at its first 01:30', () => {
    const entries = [daily('late', 'pl_late', '00:30', '01:30')];
    const ny = inputs({ entries, timezone: 'America/New_York' });
    // 2026-11-01: 00:30 EDT is 04:30Z; 01:30 happens twice (05:30Z EDT and 06:30Z EST).
    expect(resolveSchedule(ny, at('2026-11-01T04:00:00Z')).nextBoundary).toBe(at('2026-11-01T04:30:00Z'));
    expect(resolveSchedule(ny, at('2026-11-01T05:00:00Z')).effective.playlistId).toBe('pl_late');
    expect(resolveSchedule(ny, at('2026-11-01T05:00:00Z')).nextBoundary).toBe(at('2026-11-01T05:30:00Z'));
    expect(resolveSchedule(ny, at('2026-11-01T06:00:00Z')).effective.playlistId).toBe('pl_default');
  });

  it('holds a window that crosses midnight on both sides of it', () => {
    const entries = [daily('night', 'pl_night', '22:00', '02:00')];
    expect(resolveSchedule(inputs({ entries }), at('2026-11-23T22:30:00Z')).effective.playlistId).toBe('pl_night'); // 23:30
    expect(resolveSchedule(inputs({ entries }), at('2026-11-24T00:30:00Z')).effective.playlistId).toBe('pl_night'); // 01:30
    expect(resolveSchedule(inputs({ entries }), at('2026-11-24T00:30:00Z')).nextBoundary).toBe(
      at('2026-11-24T01:00:00Z'),
    );
  });

  it('skips a matching entry whose playlist cannot be shown, and reports it', () => {
    const entries = [daily('lunch', 'pl_lunch', '11:30', '14:00'), daily('day', 'pl_day', '08:00', '18:00')];
    const resolution = resolveSchedule(
      inputs({ entries, unavailable: new Set(['pl_lunch']) }),
      at('2026-11-23T11:00:00Z'),
    );
    expect(resolution.effective.playlistId).toBe('pl_day');
    expect(resolution.skipped).toEqual([{ playlistId: 'pl_lunch', entryIds: ['lunch'] }]);
  });

  it('lets a takeover beat every entry until it ends, and makes its end a boundary', () => {
    const entries = [daily('lunch', 'pl_lunch', '11:30', '14:00')];
    const takeover = { playlistId: 'pl_alert', until: at('2026-11-23T11:10:00Z') };
    const during = resolveSchedule(inputs({ entries, takeover }), at('2026-11-23T11:00:00Z'));
    expect(during.effective).toEqual({ playlistId: 'pl_alert', source: 'takeover' });
    expect(during.nextBoundary).toBe(takeover.until);
    expect(resolveSchedule(inputs({ entries, takeover }), takeover.until).effective.playlistId).toBe('pl_lunch');
  });

  it('names no boundary past year 9999 (an ISO instant has four year digits): "until 9999-12-31T23:59" is forever', () => {
    // 23:59 on 31 December 9999 in New York is 04:59Z on 1 January 10000.
    const forever: PlaylistScheduleEntry = {
      id: 'forever',
      playlist_id: 'pl_forever',
      rule: { enabled: true, until: '9999-12-31T23:59' },
    };
    const resolution = resolveSchedule(
      inputs({ entries: [forever], timezone: 'America/New_York' }),
      at('2026-11-23T11:00:00Z'),
    );
    expect(resolution.effective.playlistId).toBe('pl_forever');
    expect(resolution.nextBoundary).toBeNull();
    // A boundary up to the last four-digit instant is kept.
    const lastMinute: PlaylistScheduleEntry = { ...forever, rule: { enabled: true, until: '9999-12-31T23:59' } };
    expect(
      resolveSchedule(inputs({ entries: [lastMinute], timezone: 'UTC' }), at('2026-11-23T11:00:00Z')).nextBoundary,
    ).toBe(at('9999-12-31T23:59:00Z'));
  });

  it('matches nothing without a timezone and has no boundary without entries or takeover', () => {
    const entries = [daily('lunch', 'pl_lunch', '00:00', '23:59')];
    const resolution = resolveSchedule(inputs({ entries, timezone: null }), at('2026-11-23T11:00:00Z'));
    expect(resolution.effective.playlistId).toBe('pl_default');
    expect(resolveSchedule(inputs({}), at('2026-11-23T11:00:00Z')).nextBoundary).toBeNull();
  });
});
