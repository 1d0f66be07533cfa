// The forms' drafts of schedule/v1 rules and how they become the API's shapes. A draft keeps what
// a person typed (empty strings for unset times and dates) so a half-filled row is never lost; the
// conversion drops what is unset and the contract's zod schema then judges the result.
import type { DisplaySchedule, PlaylistScheduleEntry, PlaylistScheduleEntryWrite } from '../../../sdk/contract/fleet';
import type { Visibility, VisibilityWindow, Weekday } from '../../../sdk/contract/visibility';

export interface WindowDraft {
  days: Weekday[];
  /** `HH:MM`, or '' with end '' for all day. */
  start: string;
  end: string;
}

export interface EntryDraft {
  /** The entry's id once the server gave it one (kept, so events keep naming the same entry). */
  id?: string;
  playlist_id: string;
  enabled: boolean;
  /** `YYYY-MM-DDTHH:MM` civil time (what a datetime-local input gives), or ''. */
  from: string;
  until: string;
  windows: WindowDraft[];
}

export const WORKDAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];

export function newWindow(): WindowDraft {
  return { days: [...WORKDAYS], start: '08:00', end: '18:00' };
}

export function windowOf(draft: WindowDraft): VisibilityWindow {
  // One time without the other is left for the contract to name ("give both start and end").
  return { days: draft.days, ...(draft.start ? { start: draft.start } : {}), ...(draft.end ? { end: draft.end } : {}) };
}

export function windowDraft(window: VisibilityWindow): WindowDraft {
  return { days: [...window.days], start: window.start ?? '', end: window.end ?? '' };
}

export function entryWrite(draft: EntryDraft): PlaylistScheduleEntryWrite {
  const rule: Visibility = {
    enabled: draft.enabled,
    ...(draft.from ? { from: draft.from } : {}),
    ...(draft.until ? { until: draft.until } : {}),
    ...(draft.windows.length > 0 ? { windows: draft.windows.map(windowOf) } : {}),
  };
  return { ...(draft.id ? { id: draft.id } : {}), playlist_id: draft.playlist_id, rule };
}

export function entryDraft(entry: PlaylistScheduleEntry): EntryDraft {
  return {
    id: entry.id,
    playlist_id: entry.playlist_id,
    enabled: entry.rule.enabled,
    from: entry.rule.from ?? '',
    until: entry.rule.until ?? '',
    windows: (entry.rule.windows ?? []).map(windowDraft),
  };
}

export function displayScheduleOf(windows: WindowDraft[]): DisplaySchedule {
  return { on: windows.map(windowOf) };
}

/** Moves item `from` one place up (-1) or down (+1); out of range leaves the list as it is. */
export function moved<T>(items: T[], from: number, by: -1 | 1): T[] {
  const to = from + by;
  if (to < 0 || to >= items.length) return items;
  const next = [...items];
  [next[from], next[to]] = [next[to]!, next[from]!];
  return next;
}
