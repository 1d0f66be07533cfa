// Page visibility, evaluated by the player in the screen's time zone. A page is eligible when its
// rule is enabled, from ≤ now < until, and it has no windows or one window holds now. Windows are
// civil: `end ≤ start` crosses midnight and belongs to the start day; no start/end means all day.
// Every civil reading becomes the earliest instant the wall clock shows it (see ZoneOffsets), so
// each window occurrence is one contiguous interval even across DST changes.
import { IANAZone } from 'luxon';
import { WEEKDAYS, type Visibility, type VisibilityWindow } from '../contract/visibility';
import { DAY_MS, MINUTE_MS, ZoneOffsets } from './zone-offsets';

/** Days before today whose windows can still hold now: a crossing window runs into the next day. */
const LOOKBACK_DAYS = 1;
/** Days ahead to look for the next boundary: every window recurs within a week. */
const LOOKAHEAD_DAYS = 8;

const CIVIL_DATETIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

function civilDateTime(text: string): number {
  const [, y, mo, d, h, mi] = CIVIL_DATETIME.exec(text)!.map(Number);
  return Date.UTC(y!, mo! - 1, d!, h!, mi!);
}

function clockMinutes(text: string): number {
  return Number(text.slice(0, 2)) * 60 + Number(text.slice(3, 5));
}

/** Monday = 0 … Sunday = 6 for a civil day number (days since 1970-01-01, a Thursday). */
function weekdayOf(day: number): number {
  return (((day + 3) % 7) + 7) % 7;
}

interface Interval {
  start: number;
  end: number;
}

/** The instants of one window's occurrence that starts on civil day `day`, or null when it has none that day. */
function occurrence(window: VisibilityWindow, day: number, zone: ZoneOffsets): Interval | null {
  if (!window.days.includes(WEEKDAYS[weekdayOf(day)]!)) return null;
  const midnight = day * DAY_MS;
  if (window.start === undefined || window.end === undefined) {
    return { start: zone.instantOf(midnight), end: zone.instantOf(midnight + DAY_MS) };
  }
  const start = clockMinutes(window.start) * MINUTE_MS;
  const end = clockMinutes(window.end) * MINUTE_MS;
  return {
    start: zone.instantOf(midnight + start),
    end: zone.instantOf(midnight + (end > start ? end : DAY_MS + end)),
  };
}

function today(instant: number, zone: ZoneOffsets): number {
  return Math.floor(zone.civil(instant) / DAY_MS);
}

/** Whether `rule` lets its page play at `instant` (epoch ms) in `timeZone` (IANA; RangeError if unknown). */
export function isVisible(rule: Visibility, instant: number, timeZone: string): boolean {
  const zone = ZoneOffsets.of(timeZone);
  if (!rule.enabled) return false;
  if (rule.from !== undefined && instant < zone.instantOf(civilDateTime(rule.from))) return false;
  if (rule.until !== undefined && instant >= zone.instantOf(civilDateTime(rule.until))) return false;
  if (rule.windows === undefined) return true;
  const day = today(instant, zone);
  return rule.windows.some((w) => {
    for (let d = day - LOOKBACK_DAYS; d <= day; d++) {
      const o = occurrence(w, d, zone);
      if (o && o.start <= instant && instant < o.end) return true;
    }
    return false;
  });
}

/**
 * The first instant after `instant` at which any rule's outcome can change, or null when none
 * ever will. The player re-evaluates exactly then instead of polling.
 */
export function nextBoundary(rules: readonly Visibility[], instant: number, timeZone: string): number | null {
  const zone = ZoneOffsets.of(timeZone);
  let next = Infinity;
  const consider = (t: number) => {
    if (t > instant && t < next) next = t;
  };
  const day = today(instant, zone);
  for (const rule of rules) {
    if (!rule.enabled) continue;
    if (rule.from !== undefined) consider(zone.instantOf(civilDateTime(rule.from)));
    if (rule.until !== undefined) consider(zone.instantOf(civilDateTime(rule.until)));
    for (const w of rule.windows ?? []) {
      for (let d = day - LOOKBACK_DAYS; d <= day + LOOKAHEAD_DAYS; d++) {
        const o = occurrence(w, d, zone);
        if (o) {
          consider(o.start);
          consider(o.end);
        }
      }
    }
  }
  return next === Infinity ? null : next;
}

/**
 * The pages to loop at `instant`. Pages without visibility always play, so they are the fallback
 * by construction (the server keeps at least one); scheduled pages join while their rule holds.
 * Without a usable time zone no rule can be judged, so scheduled pages stay hidden.
 */
export function selectPlayablePages<P extends { visibility?: Visibility }>(
  pages: readonly P[],
  instant: number,
  timeZone: string | undefined,
): P[] {
  const zone = usableZone(timeZone);
  return pages.filter(
    (p) => p.visibility === undefined || (zone !== undefined && isVisible(p.visibility, instant, zone)),
  );
}

/**
 * The zone when this runtime can evaluate it, else undefined: a manifest may name a zone the
 * server's ICU knows and an older browser's does not (Europe/Kyiv before tzdata 2022b). Callers
 * treat it as no zone (scheduled pages hidden, no boundary) instead of throwing.
 */
export function usableZone(timeZone: string | undefined): string | undefined {
  return timeZone !== undefined && isKnownZone(timeZone) ? timeZone : undefined;
}

/** Zone names already judged: asking Intl costs more than the rest of a visibility check. */
const knownZones = new Map<string, boolean>();
const KNOWN_ZONES_MAX = 64;

function isKnownZone(name: string): boolean {
  let known = knownZones.get(name);
  if (known === undefined) {
    if (knownZones.size >= KNOWN_ZONES_MAX) knownZones.clear();
    knownZones.set(name, (known = IANAZone.isValidZone(name)));
  }
  return known;
}
