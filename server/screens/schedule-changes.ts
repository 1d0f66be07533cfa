// What shows on a screen beyond its assignment: the playlist schedule and the takeover, written as
// screen changes (revision + 1, screen.updated) so manifests/ re-resolves the effective playlist,
// remints when it switched and sets the screen's next boundary. Tags are edited here too (set, add,
// remove), since fleet actions apply all of these per screen through the same functions.
import type { PlaylistScheduleEntry, PlaylistScheduleEntryWrite, TakeoverRequest } from '../../sdk/contract/fleet';
import { LAST_WIRE_INSTANT_MS } from '../clock';
import { newId } from '../keys';
import { takeoverChanged } from '../manifests/screen-resolution';
import { checkAssignable, playlistReferencesLock } from '../playlists/playlists';
import { invalidField, problem } from '../problem';
import { compiledOnce } from '../store/compiled-once';
import type { ChangeRequest } from './screen-changes';
import { changeScreen, tagsOf } from './screens';
import type { ScreenTable } from './screens.tables';
import { TAGS_PER_SCREEN } from '../../sdk/contract/limits';

/** Entry ids given where the write left them out: once per request, so a fleet fan-out shares them. */
export function normalizeEntries(entries: readonly PlaylistScheduleEntryWrite[]): PlaylistScheduleEntry[] {
  return entries.map((e) => ({ id: e.id ?? newId('ent'), playlist_id: e.playlist_id, rule: e.rule }));
}

function refuseArchived(screen: ScreenTable, what: string): void {
  if (screen.state === 'archived')
    throw problem('screen_archived', `screen ${screen.id} is archived; unarchive it before changing its ${what}`);
}

/** spec Schedule PUT rules: a timezone and a default playlist first; each entry validated like an assignment. */
export async function setPlaylistSchedule(
  r: ChangeRequest,
  before: ScreenTable,
  entries: PlaylistScheduleEntry[],
): Promise<ScreenTable> {
  refuseArchived(before, 'playlist schedule');
  if (entries.length > 0) {
    if (before.timezone === null)
      throw invalidField(
        'timezone',
        'a playlist schedule is evaluated in the screen timezone; set it first',
        'required',
      );
    if (before.playlist_id === null)
      throw invalidField(
        'playlist_id',
        'a playlist schedule falls back to the assigned playlist; assign one first',
        'required',
      );
  }
  // Every entry's playlist at once, in the locks' own order, as a content delete takes them (D-483):
  // one by one, a write holding one while it waits for another would deadlock with that delete.
  await r.work.lock(...entries.map((entry) => playlistReferencesLock(entry.playlist_id)));
  for (const [i, entry] of entries.entries()) {
    await checkAssignable(r.work, before.tenant_id, entry.playlist_id, before.timezone, `entries[${i}].playlist_id`);
  }
  const { db } = r.work;
  await db.deleteFrom('screen_schedules').where('screen_id', '=', before.id).execute();
  await db
    .deleteFrom('screen_playlist_references')
    .where('screen_id', '=', before.id)
    .where('role', '=', 'schedule')
    .execute();
  if (entries.length > 0) {
    await db
      .insertInto('screen_schedules')
      .values({
        screen_id: before.id,
        tenant_id: before.tenant_id,
        entries: JSON.stringify(entries),
        updated_at: r.now,
      })
      .execute();
    await db
      .insertInto('screen_playlist_references')
      .values(
        entries.map((e) => ({
          screen_id: before.id,
          tenant_id: before.tenant_id,
          playlist_id: e.playlist_id,
          role: 'schedule' as const,
          entry_id: e.id,
        })),
      )
      .execute();
  }
  return changeScreen(
    r.events,
    r.work,
    before,
    { changes: ['playlist_schedule'], scheduleEntries: entries, cause: 'schedule_write' },
    r.now,
    r.requestId,
  );
}

/**
 * The takeover's end as epoch ms; it must lie in the future of the request clock, and no later than
 * the wire can name (9999-12-31T23:59:59.999Z: an offset west of UTC can carry year 9999 past it).
 */
export function takeoverUntil(until: string, now: number): number {
  const at = Date.parse(until);
  if (!(at > now)) throw invalidField('until', 'must be in the future');
  if (at > LAST_WIRE_INSTANT_MS) throw invalidField('until', 'must be no later than 9999-12-31T23:59:59.999Z');
  return at;
}

/** A takeover beats every schedule entry and the assignment until `until` or until it is cleared. */
export async function startTakeover(
  r: ChangeRequest,
  before: ScreenTable,
  takeover: TakeoverRequest,
  untilMs: number,
): Promise<ScreenTable> {
  refuseArchived(before, 'takeover');
  await checkAssignable(r.work, before.tenant_id, takeover.playlist_id, before.timezone, 'playlist_id');
  // Upserts (a takeover replaces the one before): a fleet fan-out writes these 500 times.
  const { db } = r.work;
  await statements.upsertTakeover.run(
    db,
    before.id,
    before.tenant_id,
    takeover.playlist_id,
    untilMs,
    takeover.reason,
    r.now,
  );
  await statements.upsertTakeoverReference.run(db, before.id, before.tenant_id, takeover.playlist_id);
  await r.events.append(
    r.work,
    takeoverChanged(before, { playlistId: takeover.playlist_id, until: untilMs, reason: takeover.reason }, r.requestId),
    r.now,
  );
  return changeScreen(r.events, r.work, before, { changes: ['takeover'], cause: 'takeover' }, r.now, r.requestId);
}

/** Ends the takeover now; a screen without one is left as it is (clearing twice changes nothing). */
export async function clearTakeover(r: ChangeRequest, before: ScreenTable): Promise<ScreenTable> {
  const { db } = r.work;
  const removed = await db.deleteFrom('screen_takeovers').where('screen_id', '=', before.id).executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) return before;
  await db
    .deleteFrom('screen_playlist_references')
    .where('screen_id', '=', before.id)
    .where('role', '=', 'takeover')
    .execute();
  await r.events.append(r.work, takeoverChanged(before, null, r.requestId), r.now);
  return changeScreen(r.events, r.work, before, { changes: ['takeover'], cause: 'takeover' }, r.now, r.requestId);
}

/**
 * Edits the tag set: add before remove (spec), in the screen's one transaction. Tags change the
 * screen revision, never the manifest. A set that ends where it began changes nothing.
 */
export async function editTags(
  r: ChangeRequest,
  before: ScreenTable,
  edit: { set?: string[]; add?: string[]; remove?: string[] },
): Promise<ScreenTable> {
  const current = (await tagsOf(r.work.db, [before.id])).get(before.id)!;
  const next = new Set(edit.set ?? current);
  for (const tag of edit.add ?? []) next.add(tag);
  for (const tag of edit.remove ?? []) next.delete(tag);
  const tags = [...next].sort();
  if (tags.length > TAGS_PER_SCREEN)
    throw invalidField('tags', `a screen has at most ${TAGS_PER_SCREEN} tags; this edit would give it ${tags.length}`);
  if (tags.join('\n') === current.join('\n')) return before;
  return changeScreen(r.events, r.work, before, { changes: ['tags'], tags }, r.now, r.requestId);
}

/** The takeover's writes, which a fleet takeover runs for every screen, compiled once. */
const statements = {
  upsertTakeover: compiledOnce<
    [screenId: string, tenantId: string, playlistId: string, until: number, reason: string, startedAt: number],
    never
  >((db, slot) =>
    db
      .insertInto('screen_takeovers')
      .values({
        screen_id: slot(0),
        tenant_id: slot(1),
        playlist_id: slot(2),
        until: slot(3),
        reason: slot(4),
        started_at: slot(5),
      })
      .onConflict((oc) =>
        oc
          .column('screen_id')
          .doUpdateSet({ playlist_id: slot(2), until: slot(3), reason: slot(4), started_at: slot(5) }),
      ),
  ),
  upsertTakeoverReference: compiledOnce<[screenId: string, tenantId: string, playlistId: string], never>((db, slot) =>
    db
      .insertInto('screen_playlist_references')
      .values({ screen_id: slot(0), tenant_id: slot(1), playlist_id: slot(2), role: 'takeover', entry_id: '' })
      .onConflict((oc) => oc.columns(['screen_id', 'role', 'entry_id']).doUpdateSet({ playlist_id: slot(2) })),
  ),
};
