// Weekly windows (schedule/v1: days, start, end in the screen's civil time) as blocks on a Monday-
// first week of minutes, for the calendar views of the playlist and display schedules. A window
// whose end is not after its start crosses midnight and belongs to its start day (as the player
// evaluates it, sdk/schedule/page-visibility.ts): it is drawn as two blocks, the second on the next day.
import { WEEKDAYS, type VisibilityWindow, type Weekday } from '../../../sdk/contract/visibility';

export const DAY_MINUTES = 24 * 60;

export interface CalendarBlock {
  /** 0 = Monday … 6 = Sunday. */
  day: number;
  /** Minutes since the day's midnight; end > start, end ≤ 1440. */
  start: number;
  end: number;
  /** Which rule the block draws (an entry's index in priority order). */
  owner: number;
}

export function minutesOf(clock: string): number {
  const [h, m] = clock.split(':').map(Number);
  return h! * 60 + m!;
}

export function clockOf(minutes: number): string {
  const m = Math.max(0, Math.min(DAY_MINUTES, minutes));
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/** The blocks of each owner's windows; an owner without windows (a rule of dates only) holds all week. */
export function calendarBlocks(owners: (VisibilityWindow[] | undefined)[]): CalendarBlock[] {
  const blocks: CalendarBlock[] = [];
  owners.forEach((windows, owner) => {
    if (!windows) {
      for (let day = 0; day < 7; day++) blocks.push({ day, start: 0, end: DAY_MINUTES, owner });
      return;
    }
    for (const window of windows) {
      for (const name of window.days) {
        const day = WEEKDAYS.indexOf(name as Weekday);
        if (day < 0) continue;
        if (!window.start || !window.end) {
          blocks.push({ day, start: 0, end: DAY_MINUTES, owner });
          continue;
        }
        const start = minutesOf(window.start);
        const end = minutesOf(window.end);
        if (end > start) blocks.push({ day, start, end, owner });
        else {
          blocks.push({ day, start, end: DAY_MINUTES, owner });
          if (end > 0) blocks.push({ day: (day + 1) % 7, start: 0, end, owner });
        }
      }
    }
  });
  return blocks;
}
