// Resolving what a screen shows, with I/O: reads its schedule, takeover and the playlists they name,
// runs the pure resolver (playlist-schedule.ts), and writes the outcome: screens.effective_playlist_id,
// the screen's next boundary (screen_boundaries, one row a screen, the boundary timer's table) and the
// end of an expired takeover. Screens report every change through remint.ts, which calls this.
import type { PlaylistScheduleEntry } from '../../sdk/contract/fleet';
import { isoTime } from '../clock';
import type { EventLog, NewEvent } from '../events/event-log';
import type { ScreenTable } from '../screens/screens.tables';
import { compiledOnce } from '../store/compiled-once';
import { json, type Db, type Tx, type Work } from '../store/store';
import { resolveSchedule, type ScheduleResolution } from './playlist-schedule';

/** Notifier channel the boundary timer listens on: a write set a boundary (message: its due time). */
export const BOUNDARY_CHANNEL = 'manifests:screen-boundaries';

export type SwitchCause =
  | 'schedule_write'
  | 'boundary'
  | 'takeover'
  | 'assignment'
  | 'unarchive'
  | 'timezone'
  /** A scheduled or takeover playlist became showable or stopped being so. */
  | 'availability';

export interface ScreenSchedule {
  entries: PlaylistScheduleEntry[];
  updatedAt: number | null;
  takeover: { playlistId: string; until: number; reason: string } | null;
}

/** The statements a screen's resolution runs for every screen of a fan-out, compiled once. */
const statements = {
  schedule: compiledOnce<[screenId: string], ScheduleRow>((db, slot) =>
    db
      .selectFrom('screens')
      .leftJoin('screen_schedules', 'screen_schedules.screen_id', 'screens.id')
      .leftJoin('screen_takeovers', 'screen_takeovers.screen_id', 'screens.id')
      .select([
        'screen_schedules.entries as entries',
        'screen_schedules.updated_at as updated_at',
        'screen_takeovers.playlist_id as takeover_playlist_id',
        'screen_takeovers.until as takeover_until',
        'screen_takeovers.reason as takeover_reason',
      ])
      .where('screens.id', '=', slot(0)),
  ),
  playlistUnavailable: compiledOnce<[tenantId: string, playlistId: string], { id: string; unavailable: string }>(
    (db, slot) =>
      db
        .selectFrom('playlists')
        .select(['id', 'unavailable'])
        .where('tenant_id', '=', slot(0))
        .where('id', '=', slot(1))
        .where('deleted_at', 'is', null),
  ),
  deleteTakeover: compiledOnce<[screenId: string], never>((db, slot) =>
    db.deleteFrom('screen_takeovers').where('screen_id', '=', slot(0)),
  ),
  deleteReference: compiledOnce<[screenId: string, role: string], never>((db, slot) =>
    db.deleteFrom('screen_playlist_references').where('screen_id', '=', slot(0)).where('role', '=', slot(1)),
  ),
  deleteBoundary: compiledOnce<[screenId: string], never>((db, slot) =>
    db.deleteFrom('screen_boundaries').where('screen_id', '=', slot(0)),
  ),
  upsertBoundary: compiledOnce<[screenId: string, tenantId: string, dueAt: number], never>((db, slot) =>
    db
      .insertInto('screen_boundaries')
      .values({ screen_id: slot(0), tenant_id: slot(1), due_at: slot(2) })
      .onConflict((oc) => oc.column('screen_id').doUpdateSet({ tenant_id: slot(1), due_at: slot(2) })),
  ),
};

interface ScheduleRow {
  entries: string | null;
  updated_at: number | null;
  takeover_playlist_id: string | null;
  takeover_until: number | null;
  takeover_reason: string | null;
}

export async function scheduleOf(db: Db | Tx, screenId: string): Promise<ScreenSchedule> {
  // One statement for both one-row tables (every schedule change and boundary reads them; a
  // fan-out does so per screen): the screen row is only the anchor of the two outer joins.
  const row = (await statements.schedule.run(db, screenId)).rows[0];
  const entries = row?.entries ?? null;
  const takeover =
    row?.takeover_playlist_id != null && row.takeover_until != null
      ? { playlistId: row.takeover_playlist_id, until: row.takeover_until, reason: row.takeover_reason ?? '' }
      : null;
  return {
    entries: entries !== null ? json.read<PlaylistScheduleEntry[]>(entries)! : [],
    updatedAt: row?.updated_at ?? null,
    takeover,
  };
}

/** Of these playlist ids, those the tenant cannot show now (gone, or content no longer ready). */
export async function unavailablePlaylists(
  db: Db | Tx,
  tenantId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Set();
  const rows =
    wanted.length === 1
      ? (await statements.playlistUnavailable.run(db, tenantId, wanted[0]!)).rows
      : await db
          .selectFrom('playlists')
          .select(['id', 'unavailable'])
          .where('tenant_id', '=', tenantId)
          .where('id', 'in', wanted)
          .where('deleted_at', 'is', null)
          .execute();
  const showable = new Set(
    rows.filter((r) => (json.read<unknown[]>(r.unavailable) ?? []).length === 0).map((r) => r.id),
  );
  return new Set(wanted.filter((id) => !showable.has(id)));
}

/** The one writer of `screen.takeover_changed`: the takeover the player must show now (null: none). */
export function takeoverChanged(
  screen: Pick<ScreenTable, 'id' | 'tenant_id'>,
  takeover: { playlistId: string; until: number; reason: string } | null,
  requestId?: string,
): NewEvent {
  return {
    tenantId: screen.tenant_id,
    screenId: screen.id,
    type: 'screen.takeover_changed',
    message: takeover ? `takeover until ${isoTime(takeover.until)}: ${takeover.reason}` : 'takeover ended',
    resource: { type: 'screen', id: screen.id },
    details: takeover
      ? { playlist_id: takeover.playlistId, until: isoTime(takeover.until), reason: takeover.reason }
      : { playlist_id: null, until: null, reason: null },
    requestId,
  };
}

/** What resolveScreen read and decided for a screen, as of the change that returned it. */
export interface ResolvedSchedule {
  at: number;
  schedule: ScreenSchedule;
  resolution: ScheduleResolution;
}

// Keyed by the screen object a change returns (screenChanged), so the answer of the same request
// (the schedule view) reuses what was just read and written instead of reading it all again: four
// reads a screen, 2,000 over a 500-screen takeover. A new object per change: never stale.
const resolvedScreens = new WeakMap<ScreenTable, ResolvedSchedule>();

export function rememberResolved(screen: ScreenTable, resolved: ResolvedSchedule): void {
  resolvedScreens.set(screen, resolved);
}

export function resolvedOf(screen: ScreenTable): ResolvedSchedule | undefined {
  return resolvedScreens.get(screen);
}

/** What resolving a screen decided, before it is written (the caller writes it: screenChanged). */
export interface Resolving extends ResolvedSchedule {
  /** The takeover had ended by `now`: writeResolution removes it (its end is among `pending`). */
  expiredTakeover: boolean;
  /** Events of the resolution, in order: the takeover's end, skipped entries. */
  pending: NewEvent[];
}

/**
 * Resolves the screen (as it is after a change) at `now`, reading only: its schedule, its takeover
 * (one that has ended counts as gone) and the playlists they name. Unavailable matching entries are
 * reported when `reportSkipped`. The caller writes the effective playlist with the screen's row,
 * then the rest with writeResolution; it decides whether the manifest moves (remint.ts).
 */
export async function resolveScreen(
  db: Db | Tx,
  screen: ScreenTable,
  now: number,
  options: { reportSkipped: boolean; requestId?: string },
): Promise<Resolving> {
  const schedule = await scheduleOf(db, screen.id);
  const pending: NewEvent[] = [];
  const expiredTakeover = schedule.takeover !== null && schedule.takeover.until <= now;
  if (expiredTakeover) {
    pending.push(takeoverChanged(screen, null, options.requestId));
    schedule.takeover = null;
  }
  const unavailable = await unavailablePlaylists(db, screen.tenant_id, [
    ...schedule.entries.map((e) => e.playlist_id),
    ...(schedule.takeover ? [schedule.takeover.playlistId] : []),
  ]);
  const resolution = resolveSchedule(
    {
      playlistId: screen.playlist_id,
      timezone: screen.timezone,
      entries: schedule.entries,
      takeover: schedule.takeover,
      unavailable,
    },
    now,
  );
  if (options.reportSkipped && screen.state !== 'archived') {
    for (const skipped of resolution.skipped) {
      pending.push({
        tenantId: screen.tenant_id,
        screenId: screen.id,
        type: 'screen.playlist_unavailable',
        severity: 'warning',
        message: `scheduled playlist ${skipped.playlistId} cannot be shown; skipped`,
        resource: { type: 'screen', id: screen.id },
        details: { playlist_id: skipped.playlistId, entry_ids: skipped.entryIds, code: 'playlist_unavailable' },
        requestId: options.requestId,
      });
    }
  }
  return { at: now, schedule, resolution, expiredTakeover, pending };
}

/**
 * Writes what resolveScreen decided besides the effective playlist (which goes with the screen's
 * row): the end of an expired takeover and the next boundary. Its events are the caller's to append.
 */
export async function writeResolution(events: EventLog, work: Work, screen: ScreenTable, r: Resolving): Promise<void> {
  if (r.expiredTakeover) {
    await statements.deleteTakeover.run(work.db, screen.id);
    await statements.deleteReference.run(work.db, screen.id, 'takeover');
  }
  await setBoundary(events, work, screen, r.resolution.nextBoundary);
}

/**
 * The playlist the screen will show at `at` (its next boundary) as things stand now: a takeover
 * ending then has ended, a rule edge then has passed. Nothing is written; the manifest carries the
 * answer as `upcoming` for a player that is offline at `at`.
 */
export async function playlistAt(db: Db | Tx, screen: ScreenTable, at: number): Promise<string | null> {
  const schedule = await scheduleOf(db, screen.id);
  const unavailable = await unavailablePlaylists(db, screen.tenant_id, [
    ...schedule.entries.map((e) => e.playlist_id),
    ...(schedule.takeover ? [schedule.takeover.playlistId] : []),
  ]);
  const inputs = {
    playlistId: screen.playlist_id,
    timezone: screen.timezone,
    entries: schedule.entries,
    takeover: schedule.takeover,
    unavailable,
  };
  return resolveSchedule(inputs, at).effective.playlistId;
}

/** Writes (or removes) the screen's next boundary and wakes the timer once it commits. */
async function setBoundary(events: EventLog, work: Work, screen: ScreenTable, dueAt: number | null): Promise<void> {
  if (dueAt === null || screen.state === 'deleted') {
    await statements.deleteBoundary.run(work.db, screen.id);
    return;
  }
  // One statement, not a delete and an insert: a fleet fan-out sets 500 of these.
  await statements.upsertBoundary.run(work.db, screen.id, screen.tenant_id, dueAt);
  events.announce(work, BOUNDARY_CHANNEL, dueAt);
}

/** The screen's next boundary, or null. */
export async function boundaryOf(db: Db | Tx, screenId: string): Promise<number | null> {
  const row = await db
    .selectFrom('screen_boundaries')
    .select('due_at')
    .where('screen_id', '=', screenId)
    .executeTakeFirst();
  return row?.due_at ?? null;
}
