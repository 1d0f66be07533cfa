// The remint rule and its writes. When what a screen's player must show changes, the screen's
// manifest revision moves and `screen.manifest_changed` tells the player to fetch it. Screens and
// playlists report their changes here; nothing else moves manifest_revision or writes that event
// (a screen's own change hands its row write in, and the bump is decided here: ScreenRowWrite). Work
// over many screens is set-based: one UPDATE of the screens and one INSERT of their events,
// whatever their number, so a playlist edit that 500 screens show is a few statements.
import type { ManifestChangeReason } from '../../sdk/contract/event-types';
import type { EventLog, NewEvent } from '../events/event-log';
import type { ScreenTable } from '../screens/screens.tables';
import { compiledOnce } from '../store/compiled-once';
import { json, type Db, type Tx, type Work } from '../store/store';
import type { StoredManifest } from './manifest-compose';
import {
  playlistAt,
  rememberResolved,
  resolveScreen,
  writeResolution,
  type Resolving,
  type SwitchCause,
} from './screen-resolution';

/** Screen ids per UPDATE: the bound parameters stay far below SQLite's and PostgreSQL's ceilings. */
export const SCREENS_PER_STATEMENT = 1000;

/** What a screen's manifest depends on besides its playlist's content. */
export type ScreenShowing = Pick<
  ScreenTable,
  'state' | 'effective_playlist_id' | 'timezone' | 'sync_group' | 'wall_region'
>;

/** The manifest numbers of a screen after a remint (what the event and the caller's view carry). */
export interface RemintedScreen {
  id: string;
  tenant_id: string;
  manifest_revision: number;
  content_access_generation: number;
}

/**
 * Why a change of the screen itself gives its player another manifest, or null when it does not.
 * An archived screen shows dark glass whatever its settings: archiving and unarchiving remint, and
 * settings changed meanwhile are picked up by the unarchive. A deleted screen has no player left.
 * The label is not a reason: a rename leaves the manifests on glass alone.
 */
export function remintReason(
  before: ScreenShowing,
  after: ScreenShowing,
  cause: SwitchCause | null,
): ManifestChangeReason | null {
  if (after.state === 'deleted') return null;
  const dark = (s: ScreenShowing) => s.state === 'archived';
  if (dark(before) !== dark(after)) return dark(after) ? 'archived' : 'unarchived';
  if (dark(after)) return null;
  if (before.effective_playlist_id !== after.effective_playlist_id)
    return cause === 'assignment' || cause === null ? 'playlist_assigned' : 'playlist_switched';
  if (before.timezone !== after.timezone) return 'timezone_changed';
  // Lockstep: the manifest carries the group (its epoch) and the wall region.
  if (before.sync_group !== after.sync_group || before.wall_region !== after.wall_region) return 'sync_changed';
  return null;
}

/** The one writer of `screen.manifest_changed`. */
export function manifestChanged(screen: RemintedScreen, reason: ManifestChangeReason, requestId?: string): NewEvent {
  return {
    tenantId: screen.tenant_id,
    screenId: screen.id,
    type: 'screen.manifest_changed',
    message:
      reason === 'content_access_regranted'
        ? 'grants reissued at a new content-access generation'
        : `the screen's manifest changed (${reason})`,
    resource: { type: 'screen', id: screen.id },
    details: {
      manifest_revision: screen.manifest_revision,
      content_access_generation: screen.content_access_generation,
      reason,
    },
    requestId,
  };
}

/**
 * Moves the manifest revision of these screens of the tenant by one and signals each: one UPDATE
 * per SCREENS_PER_STATEMENT screens and one INSERT of their events. Returns the reminted screens
 * by id (ids of other tenants or unknown ids are not reminted).
 */
export async function remintScreens(
  events: EventLog,
  work: Work,
  tenantId: string,
  screenIds: readonly string[],
  reason: ManifestChangeReason,
  now: number,
  requestId?: string,
): Promise<Map<string, RemintedScreen>> {
  const reminted = new Map<string, RemintedScreen>();
  const ids = [...new Set(screenIds)];
  for (let start = 0; start < ids.length; start += SCREENS_PER_STATEMENT) {
    const rows = await work.db
      .updateTable('screens')
      .set((eb) => ({ manifest_revision: eb('manifest_revision', '+', 1) }))
      .where('tenant_id', '=', tenantId)
      .where('id', 'in', ids.slice(start, start + SCREENS_PER_STATEMENT))
      .returning(['id', 'tenant_id', 'manifest_revision', 'content_access_generation'])
      .execute();
    for (const row of rows) reminted.set(row.id, row);
  }
  // Events in the order the caller named the screens (the order its own events had).
  const changed = ids.flatMap((id) => {
    const screen = reminted.get(id);
    return screen ? [manifestChanged(screen, reason, requestId)] : [];
  });
  await events.appendMany(work, changed, now);
  return reminted;
}

/** Causes whose switch of the effective playlist is announced as `screen.playlist_switched`. */
const ANNOUNCED_SWITCHES: ReadonlySet<SwitchCause> = new Set([
  'schedule_write',
  'boundary',
  'takeover',
  'availability',
]);

/** The manifest numbers of a screen as its row holds them after a write. */
export type ManifestNumbers = Pick<RemintedScreen, 'manifest_revision' | 'content_access_generation'>;

/**
 * A change's own write of the screen's row (screens.ts changeScreen), folded into the one UPDATE of
 * the screen that the resolution needs anyway: one statement a change, not three.
 */
export interface ScreenRowWrite {
  /** The change's events (screen.updated, its lifecycle event), appended before the resolution's. */
  events: NewEvent[];
  /**
   * Writes the row with the change's columns, this effective playlist and the manifest revision
   * moved by `bump`, and answers the numbers after it (it refuses a row changed meanwhile).
   */
  row(db: Tx, effectivePlaylistId: string | null, bump: 0 | 1): Promise<ManifestNumbers>;
}

/** A screen's resolution outcome written alone (no change of its own: a boundary, availability). */
const resolutionRow = compiledOnce<
  [effectivePlaylistId: string | null, bump: 0 | 1, screenId: string],
  ManifestNumbers
>((db, slot) =>
  db
    .updateTable('screens')
    .set((eb) => ({
      effective_playlist_id: slot(0),
      manifest_revision: eb('manifest_revision', '+', slot<number>(1)),
    }))
    .where('id', '=', slot(2))
    .returning(['manifest_revision', 'content_access_generation']),
);

/**
 * A screen changed (screens report every change here with their write of its row, `write`; the
 * boundary timer reports a boundary): the screen is resolved again (schedule, takeover, assignment)
 * and, when the change is a reason, its manifest is reminted, in one UPDATE of the screen with the
 * change's own columns. Everything is read before anything is written. Returns the screen as it is now.
 */
export async function screenChanged(
  events: EventLog,
  work: Work,
  before: ScreenTable,
  after: ScreenTable,
  now: number,
  options: { cause: SwitchCause | null; requestId?: string; write?: ScreenRowWrite },
): Promise<ScreenTable> {
  let current = after;
  let resolving: Resolving | undefined;
  const changed: NewEvent[] = [...(options.write?.events ?? [])];
  if (after.state !== 'deleted') {
    resolving = await resolveScreen(work.db, after, now, {
      reportSkipped:
        options.cause === 'schedule_write' || options.cause === 'boundary' || options.cause === 'availability',
      requestId: options.requestId,
    });
    const { resolution } = resolving;
    changed.push(...resolving.pending);
    current = { ...after, effective_playlist_id: resolution.effective.playlistId };
    const switched = before.effective_playlist_id !== current.effective_playlist_id;
    if (switched && after.state !== 'archived' && options.cause !== null && ANNOUNCED_SWITCHES.has(options.cause)) {
      changed.push({
        tenantId: after.tenant_id,
        screenId: after.id,
        type: 'screen.playlist_switched',
        message: `the screen now shows ${current.effective_playlist_id ?? 'no playlist'} (${resolution.effective.source})`,
        resource: { type: 'screen', id: after.id },
        details: {
          from_playlist_id: before.effective_playlist_id,
          to_playlist_id: current.effective_playlist_id,
          source: resolution.effective.source,
          cause: options.cause,
        },
        requestId: options.requestId,
      });
    }
  }
  let reason = remintReason(before, current, options.cause);
  if (
    reason === null &&
    current.state !== 'archived' &&
    current.state !== 'deleted' &&
    options.cause !== null &&
    ANNOUNCED_SWITCHES.has(options.cause) &&
    (await upcomingStale(work.db, current, resolving?.resolution.nextBoundary ?? null))
  )
    reason = 'upcoming_changed';

  const bump = reason === null ? 0 : 1;
  let numbers: ManifestNumbers | undefined;
  if (options.write) numbers = await options.write.row(work.db, current.effective_playlist_id, bump);
  else if (bump === 1 || current.effective_playlist_id !== after.effective_playlist_id)
    numbers = (await resolutionRow.run(work.db, current.effective_playlist_id, bump, after.id)).rows[0];
  if (numbers) current = { ...current, ...numbers };
  if (resolving) await writeResolution(events, work, current, resolving);
  if (reason !== null) changed.push(manifestChanged(current, reason, options.requestId));
  await events.appendMany(work, changed, now);
  if (resolving) rememberResolved(current, resolving);
  return current;
}

/**
 * Whether the document of the screen's current revision names another next boundary, or another
 * playlist from it, than holds now. A player switches to a manifest's upcoming pages at its
 * boundary by itself, so a stale one would show what the server no longer plans. A revision not
 * minted yet is composed from what holds when it is.
 */
async function upcomingStale(db: Db | Tx, screen: ScreenTable, nextBoundary: number | null): Promise<boolean> {
  const row = await db
    .selectFrom('runtime_manifests')
    .select('document')
    .where('screen_id', '=', screen.id)
    .where('manifest_revision', '=', screen.manifest_revision)
    .executeTakeFirst();
  if (!row) return false;
  const stored = json.read<StoredManifest>(row.document)!;
  const storedAt = stored.nextBoundaryAt === undefined ? null : Date.parse(stored.nextBoundaryAt);
  if (storedAt !== nextBoundary) return true;
  if (nextBoundary === null) return false;
  const next = await playlistAt(db, screen, nextBoundary);
  const expected = next !== null && next !== screen.effective_playlist_id ? next : undefined;
  return stored.upcoming?.playlistId !== expected;
}

/** Live (not archived, not deleted) screens of the tenant whose effective playlist is one of these, by id. */
export async function screensShowing(db: Db | Tx, tenantId: string, playlistIds: readonly string[]): Promise<string[]> {
  if (playlistIds.length === 0) return [];
  const candidates = await db
    .selectFrom('screens')
    .select(['id', 'effective_playlist_id'])
    .where('tenant_id', '=', tenantId)
    .where('state', 'in', ['pairing_pending', 'active'])
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('screen_playlist_references')
        .select('screen_id')
        .where('playlist_id', 'in', [...playlistIds])
        .where('tenant_id', '=', tenantId),
    )
    .orderBy('id')
    .execute();
  const showing = new Set(playlistIds);
  return candidates
    .filter((s) => s.effective_playlist_id !== null && showing.has(s.effective_playlist_id))
    .map((s) => s.id);
}

/**
 * What these playlists serve changed (playlists report updates and re-resolutions here): every live
 * screen showing one of them gets a new manifest, in three statements whatever their number.
 * Returns how many screens were reminted.
 */
export async function playlistsChanged(
  events: EventLog,
  work: Work,
  tenantId: string,
  playlistIds: readonly string[],
  reason: 'playlist_updated' | 'playlist_rematerialized',
  now: number,
  requestId?: string,
): Promise<number> {
  if (playlistIds.length === 0) return 0; // and `IN ()` is not SQL everywhere (PostgreSQL refuses it)
  // Whether a scheduled or takeover playlist can be shown may have changed: those screens are
  // resolved again first (skipping it, or returning to it), as a boundary would.
  const scheduling = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('state', 'in', ['pairing_pending', 'active'])
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('screen_playlist_references')
        .select('screen_id')
        .where('tenant_id', '=', tenantId)
        .where('playlist_id', 'in', [...playlistIds])
        .where('role', 'in', ['schedule', 'takeover']),
    )
    .execute();
  const switched = new Set<string>();
  for (const screen of scheduling) {
    const after = await screenChanged(events, work, screen, screen, now, { cause: 'availability', requestId });
    if (after.manifest_revision !== screen.manifest_revision) switched.add(screen.id);
  }
  const screens = (await screensShowing(work.db, tenantId, playlistIds)).filter((id) => !switched.has(id));
  if (screens.length === 0) return switched.size;
  return switched.size + (await remintScreens(events, work, tenantId, screens, reason, now, requestId)).size;
}

/**
 * spec: after a rotation "live grants are reissued at the new generation for the unchanged manifest
 * revision": the manifest revision stays, and the player is told to fetch the manifest again.
 */
export async function contentAccessRegranted(
  events: EventLog,
  work: Work,
  screen: RemintedScreen,
  now: number,
  requestId?: string,
): Promise<void> {
  await events.append(work, manifestChanged(screen, 'content_access_regranted', requestId), now);
}
