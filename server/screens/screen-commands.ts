// Commands to a screen's player (and the kiosk behind it): toast, display power and schedule, reboot.
// Each is a durable runtime event on the screen's stream; none changes the screen revision (like a
// reload). Toasts and reboots expire: a player that was offline past expires_at ignores them. The
// display state is kept (screen_displays) and handed to every new runtime session, so a screen that
// comes online applies it without replaying history.
import type {
  DisplayPower,
  DisplaySchedule,
  DisplayState,
  RebootAccepted,
  ToastAccepted,
  ToastLevel,
} from '../../sdk/contract/fleet';
import { isoTime } from '../clock';
import { newId } from '../keys';
import { invalidField, problem } from '../problem';
import { displayOf } from './display-state';
import type { ChangeRequest } from './screen-changes';
import type { ScreenTable } from './screens.tables';

/** spec: a reboot is a screen message like a reload; it expires ten minutes after it was asked for. */
export const REBOOT_TTL_MS = 10 * 60_000;

/** A screen with no player yet (pairing_pending) or dark glass (archived) cannot show a message. */
function checkPlayer(screen: ScreenTable, what: string): void {
  if (screen.state === 'pairing_pending')
    throw problem('resource_conflict', `screen ${screen.id} is still pairing_pending; there is no player to ${what}`);
  if (screen.state === 'archived')
    throw problem('resource_conflict', `screen ${screen.id} is archived; its glass is dark`);
}

export function checkToastable(screen: ScreenTable): void {
  checkPlayer(screen, 'show a toast');
}

export async function showToast(
  r: ChangeRequest,
  screen: ScreenTable,
  toast: { level: ToastLevel; text: string; duration_ms: number },
): Promise<ToastAccepted> {
  checkToastable(screen);
  const accepted: ToastAccepted = { toast_id: newId('tst'), expires_at: isoTime(r.now + toast.duration_ms) };
  await r.events.append(
    r.work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      type: 'screen.toast',
      message: `toast (${toast.level}) for ${toast.duration_ms / 1000} s`,
      resource: { type: 'screen', id: screen.id },
      details: {
        toast_id: accepted.toast_id,
        level: toast.level,
        text: toast.text,
        duration_ms: toast.duration_ms,
        expires_at: accepted.expires_at,
      },
      requestId: r.requestId,
    },
    r.now,
  );
  return accepted;
}

export function checkRebootable(screen: ScreenTable): void {
  checkPlayer(screen, 'reboot');
}

/** The kiosk's adapter reboots the box; a browser player reloads. */
export async function requestReboot(r: ChangeRequest, screen: ScreenTable): Promise<RebootAccepted> {
  checkRebootable(screen);
  const accepted: RebootAccepted = { reboot_id: newId('rbt'), expires_at: isoTime(r.now + REBOOT_TTL_MS) };
  await r.events.append(
    r.work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      type: 'player.reboot',
      message: 'reboot requested',
      resource: { type: 'screen', id: screen.id },
      details: { reboot_id: accepted.reboot_id, expires_at: accepted.expires_at },
      requestId: r.requestId,
    },
    r.now,
  );
  return accepted;
}

/** Writes one part of the display state and tells the player the whole of it (the one writer). */
async function changeDisplay(
  r: ChangeRequest,
  screen: ScreenTable,
  edit: { power?: DisplayPower | null; schedule?: DisplaySchedule | null },
): Promise<DisplayState> {
  const current = await displayOf(r.work.db, screen.id);
  const next: DisplayState = {
    power: edit.power !== undefined ? edit.power : current.power,
    schedule: edit.schedule !== undefined ? edit.schedule : current.schedule,
  };
  await r.work.db.deleteFrom('screen_displays').where('screen_id', '=', screen.id).execute();
  if (next.power !== null || next.schedule !== null) {
    await r.work.db
      .insertInto('screen_displays')
      .values({
        screen_id: screen.id,
        tenant_id: screen.tenant_id,
        power: next.power,
        schedule: next.schedule ? JSON.stringify(next.schedule) : null,
        updated_at: r.now,
      })
      .execute();
  }
  const describe = next.power ?? (next.schedule ? 'on schedule' : 'on');
  await r.events.append(
    r.work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      type: 'screen.display_changed',
      message: `display ${describe}`,
      resource: { type: 'screen', id: screen.id },
      details: next,
      requestId: r.requestId,
    },
    r.now,
  );
  return next;
}

/** Display off (black glass, panel power off through the kiosk) or on, until cleared. */
export function setDisplayPower(r: ChangeRequest, screen: ScreenTable, power: DisplayPower): Promise<DisplayState> {
  return changeDisplay(r, screen, { power });
}

/** Drops the override: the display follows its schedule again (or stays on without one). */
export function clearDisplayPower(r: ChangeRequest, screen: ScreenTable): Promise<DisplayState> {
  return changeDisplay(r, screen, { power: null });
}

/** Weekly on-windows in the screen's time zone, which it needs. */
export function setDisplaySchedule(
  r: ChangeRequest,
  screen: ScreenTable,
  schedule: DisplaySchedule,
): Promise<DisplayState> {
  if (screen.timezone === null)
    throw invalidField('timezone', 'a display schedule is evaluated in the screen timezone; set it first', 'required');
  return changeDisplay(r, screen, { schedule });
}

export function clearDisplaySchedule(r: ChangeRequest, screen: ScreenTable): Promise<DisplayState> {
  return changeDisplay(r, screen, { schedule: null });
}
