import { describe, expect, it } from 'vitest';
import type { PlaybackRow } from '../../../sdk/contract/playback';
import {
  byContent,
  byDay,
  byScreen,
  csvUrl,
  daysBetween,
  defaultRange,
  measureText,
  niceMax,
  rangeProblem,
  topWithOthers,
  totalOf,
} from './proof-data';

const row = (patch: Partial<PlaybackRow>): PlaybackRow => ({
  screen_id: 'scr_a',
  media_id: 'med_1',
  application_id: null,
  filename: 'welcome.png',
  day: '2026-11-24',
  play_count: 1,
  played_seconds: 8,
  complete_count: 1,
  interrupted_count: 0,
  impression_count: 0,
  last_page_id: 'p',
  last_manifest_revision: 'man_1',
  first_started_at: '2026-11-24T08:00:00Z',
  last_started_at: '2026-11-24T08:00:00Z',
  ...patch,
});

const rows = [
  row({ play_count: 10, played_seconds: 80 }),
  row({ screen_id: 'scr_b', play_count: 5, played_seconds: 40 }),
  row({ day: '2026-11-26', media_id: 'med_2', filename: 'menu.png', play_count: 7, played_seconds: 70 }),
  row({
    day: '2026-11-26',
    media_id: null,
    application_id: 'app_1',
    filename: 'Board',
    play_count: 2,
    played_seconds: 600,
  }),
  row({ day: '2026-11-20', play_count: 99 }),
];

describe('summing proof of play', () => {
  it('gives one bar a day of the range, zero where nothing played, rows outside it left out', () => {
    expect(byDay(rows, '2026-11-24', '2026-11-26').map((b) => [b.label, b.plays, b.seconds])).toEqual([
      ['2026-11-24', 15, 120],
      ['2026-11-25', 0, 0],
      ['2026-11-26', 9, 670],
    ]);
  });

  it('sums by screen with their names and by media or application, most plays first', () => {
    const names = new Map([['scr_a', 'Lobby']]);
    expect(byScreen(rows, names).map((b) => [b.label, b.plays])).toEqual([
      ['Lobby', 118],
      ['scr_b', 5],
    ]);
    expect(byContent(rows).map((b) => [b.label, b.plays, b.seconds])).toEqual([
      ['welcome.png', 114, 128],
      ['menu.png', 7, 70],
      ['Board (application)', 2, 600],
    ]);
  });

  it('keeps the biggest bars and sums the rest into one', () => {
    const bars = byContent(rows);
    expect(topWithOthers(bars, 1).map((b) => [b.label, b.plays, b.seconds])).toEqual([
      ['welcome.png', 114, 128],
      ['2 others', 9, 670],
    ]);
    expect(topWithOthers(bars, 5)).toHaveLength(3);
    expect(totalOf(bars)).toEqual({ plays: 123, seconds: 798 });
  });
});

describe('the range', () => {
  it('lists its days across a month end and defaults to the last two weeks', () => {
    expect(daysBetween('2026-11-29', '2026-12-02')).toEqual(['2026-11-29', '2026-11-30', '2026-12-01', '2026-12-02']);
    expect(defaultRange(new Date('2026-11-27T12:00:00Z'), 14, 'UTC')).toEqual({ from: '2026-11-14', to: '2026-11-27' });
  });

  it("ends the default range on the viewer's own today, not UTC's (rows are screen-local days)", () => {
    // 09:00 on 8 December in Auckland is still 7 December in UTC.
    const morning = new Date('2026-12-07T20:00:00Z');
    expect(defaultRange(morning, 14, 'Pacific/Auckland')).toEqual({ from: '2026-11-25', to: '2026-12-08' });
    // 19:00 on 7 December in New York is already 8 December in UTC.
    const evening = new Date('2026-12-08T00:00:00Z');
    expect(defaultRange(evening, 14, 'America/New_York')).toEqual({ from: '2026-11-24', to: '2026-12-07' });
  });

  it('refuses an empty, reversed or too long range', () => {
    expect(rangeProblem('2026-11-01', '2026-11-30')).toBeNull();
    expect(rangeProblem('', '2026-11-30')).toMatch(/start/);
    expect(rangeProblem('2026-11-30', '2026-11-01')).toMatch(/not be after/);
    expect(rangeProblem('2026-01-01', '2026-12-31')).toMatch(/at most 92 days/);
  });

  it('downloads the same selection from the API’s CSV export', () => {
    expect(csvUrl({ from: '2026-11-01', to: '2026-11-30', screen_id: 'scr_a' })).toBe(
      '/dashboard/v1/playback?format=csv&from=2026-11-01&to=2026-11-30&screen_id=scr_a',
    );
  });
});

describe('scales and words', () => {
  it('rounds a scale up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 7, 10, 11, 180, 501].map(niceMax)).toEqual([1, 1, 5, 10, 10, 20, 200, 1000]);
  });

  it('says plays and time on glass', () => {
    expect(measureText(1, 'plays')).toBe('1 play');
    expect(measureText(1234, 'plays')).toBe('1,234 plays');
    expect(measureText(45, 'seconds')).toBe('45 s');
    expect(measureText(7500, 'seconds')).toBe('2 h 5 min');
  });
});
