// The grid's fleet action form as the API's request: which screens (the selected ids, or an exact
// tag) and which action with its fields. Pure, so the choices and their shapes are tested alone.
import {
  type FleetAction,
  FleetSelector,
  TOAST_DURATION_DEFAULT_MS,
  type ToastLevel,
} from '../../../sdk/contract/fleet';

export const FLEET_CHOICES = [
  ['takeover', 'Take over with a playlist'],
  ['takeover_clear', 'End the takeover'],
  ['toast', 'Send a toast'],
  ['reload', 'Reload the player'],
  ['display_on', 'Turn the display on'],
  ['display_off', 'Turn the display off'],
  ['display_clear', 'Display follows its schedule'],
  ['assign', 'Assign a playlist'],
] as const;
export type FleetChoice = (typeof FLEET_CHOICES)[number][0];

export interface FleetForm {
  target: 'selected' | 'tag';
  ids: string[];
  tag: string;
  choice: FleetChoice;
  playlistId: string;
  /** datetime-local (the viewer's time) for a takeover's end. */
  until: string;
  reason: string;
  level: ToastLevel;
  text: string;
}

export type FleetRequest = { selector: FleetSelector; action: FleetAction } | { problem: string };

export function fleetRequest(form: FleetForm): FleetRequest {
  const selector = form.target === 'tag' ? { tag: form.tag.trim() } : { ids: form.ids };
  const checked = FleetSelector.safeParse(selector);
  if (!checked.success)
    return {
      problem:
        form.target === 'tag' ? 'Type a tag (letters and digits) the screens carry.' : 'Select at least one screen.',
    };
  const action = actionOf(form);
  return typeof action === 'string' ? { problem: action } : { selector: checked.data, action };
}

function actionOf(form: FleetForm): FleetAction | string {
  switch (form.choice) {
    case 'takeover': {
      const until = new Date(form.until);
      if (!form.playlistId) return 'Choose the playlist to take over with.';
      if (Number.isNaN(until.getTime())) return 'Choose when the takeover ends.';
      return {
        type: 'takeover',
        playlist_id: form.playlistId,
        until: until.toISOString(),
        reason: form.reason.trim() || 'Takeover from the dashboard',
      };
    }
    case 'takeover_clear':
      return { type: 'takeover_clear' };
    case 'toast':
      if (!form.text.trim()) return 'Write the toast’s message.';
      return { type: 'toast', level: form.level, text: form.text, duration_ms: TOAST_DURATION_DEFAULT_MS };
    case 'reload':
      return { type: 'reload' };
    case 'display_on':
      return { type: 'display', power: 'on' };
    case 'display_off':
      return { type: 'display', power: 'off' };
    case 'display_clear':
      return { type: 'display_clear' };
    case 'assign':
      return { type: 'assign', playlist_id: form.playlistId || null };
  }
}
