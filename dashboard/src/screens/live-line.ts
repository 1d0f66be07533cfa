// What the event stream told about a screen, for its card: since when it is online and whether its
// display was switched on or off (neither is in the screen view, so neither costs a request).
import type { ScreenLive } from '../state/screens-store';

/** "14:02" today, "2026-11-26 14:02" before: the moment, not a duration that goes stale. */
export function sinceText(iso: string, now: number, zone?: string): string {
  const then = new Date(iso);
  if (Number.isNaN(then.getTime())) return iso;
  const day = (d: Date) => d.toLocaleDateString('en-CA', { timeZone: zone });
  const time = then.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false, timeZone: zone });
  return day(then) === day(new Date(now)) ? time : `${day(then)} ${time}`;
}

export function liveLine(live: ScreenLive | undefined, online: boolean, now: number, zone?: string): string {
  if (!live) return '';
  const parts: string[] = [];
  if (online && live.onlineSince) parts.push(`online since ${sinceText(live.onlineSince, now, zone)}`);
  if (live.display === 'off') parts.push('display off');
  if (live.display === 'on') parts.push('display on');
  return parts.join(' · ');
}
