// Drafts of schedule rules become the API's shapes, the calendar draws them as the player evaluates
// them, and problems land on the fields they name.
import { describe, expect, it } from 'vitest';
import { ScreenPlaylistScheduleWrite } from '../../../sdk/contract/fleet';
import { MarqueeProblem } from '../../../sdk/client/problem';
import { issuesByField, problemsOf } from './field-problems';
import { entryDraft, entryWrite, moved, newWindow } from './schedule-drafts';
import { calendarBlocks, DAY_MINUTES } from './week-calendar';

describe('schedule drafts', () => {
  it('drop unset dates and times, and keep the entry id across a round trip', () => {
    const write = entryWrite({
      id: 'morning',
      playlist_id: 'pl_1',
      enabled: true,
      from: '2026-12-01T00:00',
      until: '',
      windows: [{ days: ['sat', 'sun'], start: '', end: '' }, newWindow()],
    });
    expect(write).toEqual({
      id: 'morning',
      playlist_id: 'pl_1',
      rule: {
        enabled: true,
        from: '2026-12-01T00:00',
        windows: [
          { days: ['sat', 'sun'] },
          { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '08:00', end: '18:00' },
        ],
      },
    });
    expect(entryWrite(entryDraft({ ...write, id: 'morning' }))).toEqual(write);
  });

  it('moves an entry one place and leaves the ends alone', () => {
    expect(moved(['a', 'b', 'c'], 2, -1)).toEqual(['a', 'c', 'b']);
    expect(moved(['a', 'b'], 0, -1)).toEqual(['a', 'b']);
  });
});

describe('the week calendar', () => {
  it('draws a window that crosses midnight on its start day and the next (Sunday wraps to Monday)', () => {
    expect(calendarBlocks([[{ days: ['sun'], start: '22:00', end: '02:00' }]])).toEqual([
      { day: 6, start: 22 * 60, end: DAY_MINUTES, owner: 0 },
      { day: 0, start: 0, end: 120, owner: 0 },
    ]);
  });

  it('draws all-day windows and window-less rules over whole days, each block naming its entry', () => {
    const blocks = calendarBlocks([undefined, [{ days: ['wed'] }]]);
    expect(blocks.filter((b) => b.owner === 0)).toHaveLength(7);
    expect(blocks.filter((b) => b.owner === 1)).toEqual([{ day: 2, start: 0, end: DAY_MINUTES, owner: 1 }]);
  });
});

describe('field problems', () => {
  it('names a client-side failure by the path the server would name', () => {
    const parsed = ScreenPlaylistScheduleWrite.safeParse({
      entries: [
        { playlist_id: 'pl_1', rule: { enabled: true, windows: [{ days: ['mon'], start: '25:00', end: '26:00' }] } },
      ],
    });
    expect(parsed.success).toBe(false);
    expect(Object.keys(issuesByField(parsed.error!))).toContain('entries.0.rule.windows.0.start');
  });

  it('puts a server problem’s errors on the fields the form shows and the rest in its message', () => {
    const problem = new MarqueeProblem(400, {
      code: 'invalid_request',
      detail: 'until: must be in the future',
      errors: [
        { field: 'until', code: 'too_small', detail: 'must be in the future' },
        { field: 'timezone', code: 'required', detail: 'set it first' },
      ],
    });
    expect(problemsOf(problem, (f) => f === 'until', 'Takeover')).toEqual({
      fields: { until: 'must be in the future' },
      message: 'The screen’s time zone (under Settings): set it first',
    });
  });

  it('says what an entry without a playlist needs, not the schema’s string length', () => {
    const parsed = ScreenPlaylistScheduleWrite.safeParse({
      entries: [{ playlist_id: '', rule: { enabled: true, windows: [{ days: ['mon'] }] } }],
    });
    expect(parsed.success).toBe(false);
    expect(issuesByField(parsed.error!)).toEqual({ 'entries.0.playlist_id': 'choose a playlist' });
  });

  it('keeps a schema’s own words and never passes zod’s defaults through', () => {
    const parsed = ScreenPlaylistScheduleWrite.safeParse({
      entries: [{ id: 'a b', playlist_id: 'x'.repeat(201), rule: { enabled: true, windows: [{ days: ['someday'] }] } }],
    });
    const fields = issuesByField(parsed.error!);
    expect(fields['entries.0.id']).toBe('must be 1 to 64 letters, digits, _ or -');
    expect(fields['entries.0.playlist_id']).toBe('at most 200 characters');
    for (const text of Object.values(fields)) expect(text).not.toMatch(/^(Invalid|Too (small|big))/);
  });
});
