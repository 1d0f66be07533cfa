// What each screen route changes, one function each (fleet actions apply the same ones per screen):
// a patch, the lifecycle of the spec's Screen table (archive, unarchive, public-id rotation,
// credential revoke, delete) and a reload. Every change goes through changeScreen (screens.ts).
import type { ScreenPatch, ScreenReloadAccepted } from '../../sdk/contract/screens';
import { isoTime } from '../clock';
import type { EventLog } from '../events/event-log';
import { newId } from '../keys';
import { contentAccessRegranted } from '../manifests/remint';
import { revokeDevices, revokeRuntimeSessions } from '../pairing/pairing';
import { checkAssignable } from '../playlists/playlists';
import { problem } from '../problem';
import type { Work } from '../store/store';
import { admitScreen, releaseScreen } from '../tenants/tenants';
import { lockstepChanges } from './screen-sync';
import { changeScreen, newPublicId, tagsOf, type ScreenChange } from './screens';
import type { ScreenTable } from './screens.tables';
import { isIanaZoneName } from './time-zones';

/** spec: a reload expires ten minutes after it was requested (players ignore it afterwards). */
export const RELOAD_TTL_MS = 10 * 60_000;

/** Who asked, and when: the request every change is recorded under. */
export interface ChangeRequest {
  events: EventLog;
  work: Work;
  now: number;
  requestId: string;
}

/**
 * Writes what the patch changes. Only what differs from the screen is written: a field sent with its
 * current value changes nothing, and a patch that changes nothing bumps nothing (no hidden revision
 * bumps). Whether the player gets a new manifest is the remint rule's (manifests/remint.ts).
 */
export async function patchScreen(r: ChangeRequest, before: ScreenTable, patch: ScreenPatch): Promise<ScreenTable> {
  const change: ScreenChange & { set: NonNullable<ScreenChange['set']> } = { set: {}, changes: [] };
  if (patch.name !== undefined && patch.name !== before.label) {
    change.set.label = patch.name;
    change.changes.push('label');
  }
  if (patch.timezone !== undefined && patch.timezone !== before.timezone) {
    if (!isIanaZoneName(patch.timezone)) {
      throw problem('invalid_request', `timezone: "${patch.timezone}" is not an IANA time-zone identifier`, {
        errors: [
          {
            field: 'timezone',
            code: 'invalid',
            detail: 'must be an IANA time-zone identifier such as Europe/Berlin',
          },
        ],
      });
    }
    change.set.timezone = patch.timezone;
    change.changes.push('timezone');
  }
  if (patch.playlist_id !== undefined && patch.playlist_id !== before.playlist_id) {
    change.set.playlist_id = patch.playlist_id;
    change.changes.push('playlist_id');
    if (patch.playlist_id !== null)
      await checkAssignable(
        r.work,
        before.tenant_id,
        patch.playlist_id,
        change.set.timezone ?? before.timezone,
        'playlist_id',
      );
  }
  lockstepChanges(patch, before, change);
  if (patch.tags !== undefined) {
    const tags = [...patch.tags].sort();
    const current = (await tagsOf(r.work.db, [before.id])).get(before.id)!;
    if (tags.join('\n') !== current.join('\n')) {
      change.tags = tags;
      change.changes.push('tags');
    }
  }
  if (change.changes.length === 0) return before;
  return changeScreen(r.events, r.work, before, change, r.now, r.requestId);
}

/** Hidden from the default list, glass darkened, its quota slot released. */
export async function archiveScreen(r: ChangeRequest, before: ScreenTable): Promise<ScreenTable> {
  if (before.state === 'archived') throw problem('resource_conflict', `screen ${before.id} is already archived`);
  await releaseScreen(r.work.db, before.tenant_id);
  return changeScreen(
    r.events,
    r.work,
    before,
    {
      set: { state: 'archived', archived_at: r.now },
      changes: ['state'],
      lifecycle: { type: 'screen.archived', message: 'screen archived: hidden from the default list, glass darkened' },
    },
    r.now,
    r.requestId,
  );
}

/** Listed again (quota re-admitted) with its normal manifest. */
export async function unarchiveScreen(r: ChangeRequest, before: ScreenTable): Promise<ScreenTable> {
  if (before.state !== 'archived') throw problem('resource_conflict', `screen ${before.id} is not archived`);
  await admitScreen(r.work.db, before.tenant_id);
  return changeScreen(
    r.events,
    r.work,
    before,
    {
      set: { state: 'active', archived_at: null },
      changes: ['state'],
      lifecycle: { type: 'screen.unarchived', message: 'screen unarchived: listed again, normal manifest reminted' },
    },
    r.now,
    r.requestId,
  );
}

/** A new public URL: runtime sessions end, the paired device stays, grants are reissued. */
export async function rotatePublicId(r: ChangeRequest, before: ScreenTable): Promise<ScreenTable> {
  await revokeRuntimeSessions(r.work, before.id, r.now);
  const after = await changeScreen(
    r.events,
    r.work,
    before,
    {
      set: { public_id: newPublicId() },
      changes: ['public_id', 'content_access_generation'],
      regrant: true,
      lifecycle: {
        type: 'screen.public_id_rotated',
        message: 'public URL rotated; runtime sessions invalidated, device credential kept',
      },
    },
    r.now,
    r.requestId,
  );
  await contentAccessRegranted(r.events, r.work, after, r.now, r.requestId);
  return after;
}

/** (Model A) The paired device and every runtime grant are revoked; the public URL stays. */
export async function revokeCredential(r: ChangeRequest, before: ScreenTable): Promise<ScreenTable> {
  await revokeDevices(r.work, before.id, r.now);
  await revokeRuntimeSessions(r.work, before.id, r.now);
  const after = await changeScreen(
    r.events,
    r.work,
    before,
    {
      changes: ['device_credential', 'content_access_generation'],
      regrant: true,
      lifecycle: {
        type: 'screen.credential_revoked',
        message: 'paired device credential and all runtime grants revoked; public URL kept',
      },
    },
    r.now,
    r.requestId,
  );
  await contentAccessRegranted(r.events, r.work, after, r.now, r.requestId);
  return after;
}

/** A tombstone: the player's cookies stop working, the quota slot is released, its playlists may be deleted. */
export async function deleteScreen(r: ChangeRequest, before: ScreenTable): Promise<void> {
  if (before.native_identity) {
    throw problem(
      'screen_archive_required',
      `screen ${before.id} is bound to a native player identity; archive it instead of deleting it`,
    );
  }
  await tombstoneScreen(r, before, 'by its owner');
}

/**
 * The screen leaves for good: quota released, device credentials and runtime sessions revoked, its
 * playlist references dropped, and the tombstone (state deleted). Owners delete through
 * deleteScreen; a native player's signed identity reset ends here too (`how` says which).
 */
export async function tombstoneScreen(r: ChangeRequest, before: ScreenTable, how: string): Promise<void> {
  if (before.state !== 'archived') await releaseScreen(r.work.db, before.tenant_id);
  await revokeDevices(r.work, before.id, r.now);
  await revokeRuntimeSessions(r.work, before.id, r.now);
  // A tombstone refers to nothing: its playlists may be deleted.
  await r.work.db.deleteFrom('screen_playlist_references').where('screen_id', '=', before.id).execute();
  await changeScreen(
    r.events,
    r.work,
    before,
    {
      set: { state: 'deleted', deleted_at: r.now },
      changes: ['state'],
      lifecycle: {
        type: 'screen.deleted',
        message: `screen deleted (${how}); its credentials and runtime grants are revoked`,
      },
    },
    r.now,
    r.requestId,
  );
}

/** A screen still pairing_pending has no player to reload (checked before any budget is spent). */
export function checkReloadable(screen: ScreenTable): void {
  if (screen.state === 'pairing_pending')
    throw problem('resource_conflict', `screen ${screen.id} is still pairing_pending; there is no player to reload`);
}

/** Tells the screen's player to reload (within RELOAD_TTL_MS); the screen itself does not change. */
export async function requestReload(r: ChangeRequest, screen: ScreenTable): Promise<ScreenReloadAccepted> {
  checkReloadable(screen);
  const accepted: ScreenReloadAccepted = { reload_id: newId('rld'), expires_at: isoTime(r.now + RELOAD_TTL_MS) };
  await r.events.append(
    r.work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      type: 'player.reload',
      message: 'reload requested',
      resource: { type: 'screen', id: screen.id },
      details: { reason: 'project', reload_id: accepted.reload_id, spread_s: 0, expires_at: accepted.expires_at },
      requestId: r.requestId,
    },
    r.now,
  );
  return accepted;
}
