// Proof of play as the charts show it: the API's daily rows (one per screen, media or application,
// and screen-local day) summed by day, by screen and by what played, over a chosen range of days.
import type { PlaybackRow } from '../../../sdk/contract/playback';

export type Measure = 'plays' | 'seconds';

export interface Bar {
  key: string;
  label: string;
  plays: number;
  seconds: number;
}

/** The longest range the page reads at once (about a quarter). */
export const RANGE_MAX_DAYS = 92;
/** Rows read at most for one range; past that the page says the charts are partial. */
export const ROWS_MAX = 10_000;

const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The calendar day of `date` (UTC) as YYYY-MM-DD. */
export const isoDay = (date: Date): string => date.toISOString().slice(0, 10);

/** Every day from `from` to `to`, both included. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS)
    days.push(isoDay(new Date(t)));
  return days;
}

/**
 * The last `days` days up to the viewer's today: rows are screen-local days, so the UTC date would
 * leave out today's plays wherever the viewer is ahead of UTC (Auckland's morning is UTC's yesterday).
 */
export function defaultRange(
  now: Date,
  days = 14,
  zone = Intl.DateTimeFormat().resolvedOptions().timeZone,
): { from: string; to: string } {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' })
    .formatToParts(now)
    .reduce<Record<string, string>>((all, p) => Object.assign(all, { [p.type]: p.value }), {});
  const to = `${parts.year}-${parts.month}-${parts.day}`;
  return { from: isoDay(new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * DAY_MS)), to };
}

/** Why a range cannot be shown, or null. */
export function rangeProblem(from: string, to: string): string | null {
  if (!DAY.test(from) || Number.isNaN(Date.parse(from))) return 'Choose a start day.';
  if (!DAY.test(to) || Number.isNaN(Date.parse(to))) return 'Choose an end day.';
  if (from > to) return 'The start day must not be after the end day.';
  if (daysBetween(from, to).length > RANGE_MAX_DAYS) return `Choose at most ${RANGE_MAX_DAYS} days.`;
  return null;
}

function add(bars: Map<string, Bar>, key: string, label: string, row: PlaybackRow): void {
  const bar = bars.get(key) ?? { key, label, plays: 0, seconds: 0 };
  bar.plays += row.play_count;
  bar.seconds += row.played_seconds;
  bars.set(key, bar);
}

/** One bar a day of the range, days without plays included (at zero), oldest first. */
export function byDay(rows: readonly PlaybackRow[], from: string, to: string): Bar[] {
  const bars = new Map(daysBetween(from, to).map((day) => [day, { key: day, label: day, plays: 0, seconds: 0 }]));
  for (const row of rows) if (bars.has(row.day)) add(bars, row.day, row.day, row);
  return [...bars.values()];
}

const biggest = (a: Bar, b: Bar) => b.plays - a.plays || b.seconds - a.seconds || a.label.localeCompare(b.label);

/** One bar a screen, most plays first; a screen no longer listed is named by its id. */
export function byScreen(rows: readonly PlaybackRow[], names: ReadonlyMap<string, string>): Bar[] {
  const bars = new Map<string, Bar>();
  for (const row of rows) add(bars, row.screen_id, names.get(row.screen_id) ?? row.screen_id, row);
  return [...bars.values()].sort(biggest);
}

/** One bar a media item or application, by the name it had when it played, most plays first. */
export function byContent(rows: readonly PlaybackRow[]): Bar[] {
  const bars = new Map<string, Bar>();
  for (const row of rows) {
    const key = row.media_id ?? row.application_id ?? 'unknown';
    add(bars, key, row.application_id ? `${row.filename} (application)` : row.filename, row);
  }
  return [...bars.values()].sort(biggest);
}

/** The first `n` bars, the rest summed into one "n others" bar. */
export function topWithOthers(bars: readonly Bar[], n: number): Bar[] {
  if (bars.length <= n) return [...bars];
  const rest = bars.slice(n);
  const total = totalOf(rest);
  return [...bars.slice(0, n), { key: 'others', label: `${rest.length} others`, ...total }];
}

export function totalOf(bars: readonly Bar[]): { plays: number; seconds: number } {
  return bars.reduce((t, b) => ({ plays: t.plays + b.plays, seconds: t.seconds + b.seconds }), {
    plays: 0,
    seconds: 0,
  });
}

/** A bar's value in the chosen measure. */
export const measured = (bar: Bar, measure: Measure): number => (measure === 'plays' ? bar.plays : bar.seconds);

/** 1,234 plays; 2 h 5 min on glass. */
export function measureText(value: number, measure: Measure): string {
  if (measure === 'plays') return `${value.toLocaleString('en')} play${value === 1 ? '' : 's'}`;
  if (value < 60) return `${value} s`;
  const minutes = Math.round(value / 60);
  if (minutes < 60) return `${minutes} min`;
  const rest = minutes % 60;
  return `${Math.floor(minutes / 60)} h${rest ? ` ${rest} min` : ''}`;
}

/** A round top for a chart's scale at or above `max` (1, 2 or 5 times a power of ten). */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/** The API's own CSV export of the same selection (every matching row, RFC 4180). */
export function csvUrl(filter: { from: string; to: string; screen_id?: string }): string {
  const query = new URLSearchParams({ format: 'csv', from: filter.from, to: filter.to });
  if (filter.screen_id) query.set('screen_id', filter.screen_id);
  return `/dashboard/v1/playback?${query}`;
}
