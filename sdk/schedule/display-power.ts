// Whether a screen's display is on, from its display state (an override beats the weekly schedule;
// neither means on) in the screen's time zone, and when that may next change. The web player shows
// black glass while it is off; the kiosk also powers the panel down through its display adapter.
import type { DisplayState } from '../contract/fleet';
import { isVisible, nextBoundary } from './page-visibility';

export function isDisplayOn(state: DisplayState | null, instant: number, timeZone: string | undefined): boolean {
  if (!state) return true;
  if (state.power !== null) return state.power === 'on';
  // Without a usable time zone the schedule cannot be judged: stay on rather than go dark by mistake.
  if (!state.schedule || timeZone === undefined) return true;
  try {
    return isVisible({ enabled: true, windows: state.schedule.on }, instant, timeZone);
  } catch {
    return true;
  }
}

/** The next instant the display schedule switches, or null (no schedule, or an override holds). */
export function nextDisplaySwitch(
  state: DisplayState | null,
  instant: number,
  timeZone: string | undefined,
): number | null {
  if (!state?.schedule || state.power !== null || timeZone === undefined) return null;
  try {
    return nextBoundary([{ enabled: true, windows: state.schedule.on }], instant, timeZone);
  } catch {
    return null;
  }
}
