// Screens: lookups, the public view, and the one way a screen changes (revision by exactly one,
// its events, and a report to manifests/, which remints when what the player must show changed).
import type { PlaylistScheduleEntry } from '../../sdk/contract/fleet';
import type { Screen, ScreenList, ScreenListQuery, ScreenState, WallRegion } from '../../sdk/contract/screens';
import { isoTime } from '../clock';
import type { EventLog, NewEvent } from '../events/event-log';
import { problem } from '../problem';
import { newId, randomToken } from '../keys';
import type { Services } from '../services';
import { compiledOnce, type CompiledOnce } from '../store/compiled-once';
import { json, StaleWrite, type Db, type Tx, type Work } from '../store/store';
import { revokeReleaseGrants } from '../release-host/launch-tickets';
import { admitScreen } from '../tenants/tenants';
import { screenChanged } from '../manifests/remint';
import { recoveryPendingView } from './recovery-view';
import type { SwitchCause } from '../manifests/screen-resolution';
import { commentsMember } from '../comments/comment-fields';
import type { ScreenTable } from './screens.tables';
import type { ScreenHealth, ScreenObservation } from '../../sdk/contract/screen-health';
import { healthOf } from './screen-health';

/** spec: a deleted screen's tombstone is kept at least 90 days. */
export const SCREEN_TOMBSTONE_RETENTION_MS = 90 * 24 * 3600_000;
/** Random bytes of a public id: it is the public URL credential, so unguessable. */
const PUBLIC_ID_BYTES = 24;

export function newPublicId(): string {
  return randomToken(PUBLIC_ID_BYTES);
}

export function publicUrl(services: Services, publicId: string): string {
  return `${services.config.playOrigin}/s/${publicId}`;
}

/** A screen that is not deleted, of this tenant; anything else is not_found. */
export async function findScreen(db: Db | Tx, tenantId: string, id: string): Promise<ScreenTable> {
  const row = await db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  if (!row) throw problem('not_found', `screen ${id} not found`);
  return row;
}

export async function tagsOf(db: Db | Tx, screenIds: string[]): Promise<Map<string, string[]>> {
  const tags = new Map<string, string[]>(screenIds.map((id) => [id, []]));
  if (screenIds.length === 0) return tags;
  const rows = await db
    .selectFrom('screen_tags')
    .select(['screen_id', 'tag'])
    .where('screen_id', 'in', screenIds)
    .orderBy('tag')
    .execute();
  for (const r of rows) tags.get(r.screen_id)?.push(r.tag);
  return tags;
}

/**
 * The public view; `online` holds the screens that services.presence reported online, and `now`
 * decides whether a recovery offer is still pending.
 */
export function screenView(
  row: ScreenTable,
  tags: string[],
  online: ReadonlySet<string>,
  now: number,
  health?: { health: ScreenHealth; observation?: ScreenObservation },
): Screen {
  return {
    id: row.id,
    public_id: row.public_id,
    label: row.label,
    name: row.label,
    revision: row.revision,
    manifest_revision: row.manifest_revision,
    content_access_generation: row.content_access_generation,
    state: row.state as ScreenState,
    ...(row.playlist_id !== null ? { playlist_id: row.playlist_id } : {}),
    ...(row.timezone !== null ? { timezone: row.timezone } : {}),
    tags,
    ...(row.sync_group !== null ? { sync_group: row.sync_group } : {}),
    ...(row.wall_region !== null ? { wall_region: json.read<WallRegion>(row.wall_region)! } : {}),
    online: row.state !== 'deleted' && online.has(row.id),
    ...(row.last_online_at !== null ? { last_online_at: isoTime(row.last_online_at) } : {}),
    ...recoveryPendingView(row.recovery_pending, now),
    ...commentsMember(row.comments),
    ...(health?.observation ? { observation: health.observation } : {}),
    ...(health ? { health: health.health } : {}),
    created_at: isoTime(row.created_at),
    updated_at: isoTime(row.updated_at),
  };
}

export async function viewOf(services: Services, db: Db | Tx, row: ScreenTable): Promise<Screen> {
  return (await viewsOf(services, db, [row]))[0]!;
}

/** The public views of these screens, in their order, with the reads of one screen's view. */
export async function viewsOf(services: Services, db: Db | Tx, rows: readonly ScreenTable[]): Promise<Screen[]> {
  const ids = rows.map((r) => r.id);
  const online = await services.presence.online(ids);
  const now = services.clock.now();
  const health = await healthOf(db, rows, online, now);
  const tags = await tagsOf(db, ids);
  return rows.map((row) => screenView(row, tags.get(row.id)!, online, now, health.get(row.id)));
}

/** These screens of the tenant that are not deleted, by id (one statement for a fan-out's group). */
export async function screensById(
  db: Db | Tx,
  tenantId: string,
  ids: readonly string[],
): Promise<Map<string, ScreenTable>> {
  if (ids.length === 0) return new Map();
  // By primary key alone, the tenant and the state checked here: with them in the statement, SQLite
  // walks the tenant's whole index (screens_tenant) instead of looking up the ids.
  const rows = (
    await db
      .selectFrom('screens')
      .selectAll()
      .where('id', 'in', [...ids])
      .execute()
  ).filter((r) => r.tenant_id === tenantId && r.state !== 'deleted');
  return new Map(rows.map((r) => [r.id, r]));
}

/** Creates a quota-counted pairing_pending screen (pair or provision) and its creation event. */
export async function createScreen(
  services: Services,
  work: Work,
  input: {
    tenantId: string;
    label: string;
    now: number;
    event: { type: 'screen.paired' | 'screen.provisioned'; message: string };
    requestId?: string;
  },
): Promise<ScreenTable> {
  await admitScreen(work.db, input.tenantId);
  const row: ScreenTable = {
    id: newId('scr'),
    tenant_id: input.tenantId,
    public_id: newPublicId(),
    label: input.label,
    revision: 1,
    manifest_revision: 1,
    content_access_generation: 1,
    state: 'pairing_pending',
    playlist_id: null,
    effective_playlist_id: null,
    timezone: null,
    native_identity: 0,
    paired_at: null,
    created_at: input.now,
    updated_at: input.now,
    archived_at: null,
    deleted_at: null,
    last_online_at: null,
    recovery_pending: null,
    sync_group: null,
    wall_region: null,
  };
  await work.db.insertInto('screens').values(row).execute();
  await services.events.append(
    work,
    {
      tenantId: input.tenantId,
      type: input.event.type,
      message: input.event.message,
      screenId: row.id,
      resource: { type: 'screen', id: row.id },
      details: { revision: row.revision, state: row.state },
      requestId: input.requestId,
    },
    input.now,
  );
  return row;
}

/** Events of a screen's lifecycle transitions (their details: the revision and state after it). */
export type ScreenLifecycleType =
  | 'screen.activated'
  | 'screen.player_bound'
  | 'screen.archived'
  | 'screen.unarchived'
  | 'screen.public_id_rotated'
  | 'screen.credential_revoked'
  | 'screen.deleted'
  | 'screen.recovered';

export interface ScreenChange {
  /** Column values to write (besides revision, manifest_revision and updated_at). */
  set?: Partial<
    Pick<
      ScreenTable,
      | 'label'
      | 'state'
      | 'playlist_id'
      | 'timezone'
      | 'public_id'
      | 'paired_at'
      | 'archived_at'
      | 'deleted_at'
      | 'sync_group'
      | 'wall_region'
    >
  >;
  /** Names of what changed, for `screen.updated` details. */
  changes: string[];
  /** The new tag set, when it changed (written to screen_tags; `details.tags`). */
  tags?: string[];
  /** Every grant must be reissued: bumps content_access_generation. */
  regrant?: boolean;
  /** The lifecycle event the screen table names (screen.archived, ...), appended after screen.updated. */
  lifecycle?: { type: ScreenLifecycleType; message: string };
  /** The new playlist schedule entries, when they changed (`details.playlist_schedule_entries`). */
  scheduleEntries?: PlaylistScheduleEntry[];
  /** Why the effective playlist may have moved (default: from `changes`). */
  cause?: SwitchCause;
}

/** Why a change may move the effective playlist, from what it changed. */
function causeOf(change: ScreenChange): SwitchCause | null {
  if (change.cause) return change.cause;
  if (change.changes.includes('playlist_id')) return 'assignment';
  if (change.set?.state === 'active') return 'unarchive';
  if (change.changes.includes('timezone')) return 'timezone';
  return null;
}

/**
 * The one way a screen mutates: revision + 1 (no hidden bumps), screen.updated, the lifecycle
 * event, and the change reported to manifests/ (a new manifest revision when the remint rule says
 * the player must show something else).
 */
export async function changeScreen(
  events: EventLog,
  work: Work,
  before: ScreenTable,
  change: ScreenChange,
  now: number,
  requestId?: string,
): Promise<ScreenTable> {
  const after: ScreenTable = {
    ...before,
    ...change.set,
    revision: before.revision + 1,
    content_access_generation: before.content_access_generation + (change.regrant ? 1 : 0),
    updated_at: now,
  };
  // Release grants end with the generation they were issued at, and when glass goes dark or away.
  const leaving = (state: string) => after.state === state && before.state !== state;
  if (change.regrant || leaving('archived') || leaving('deleted')) {
    await revokeReleaseGrants(work, { tenantId: before.tenant_id, screenId: before.id }, now);
  }

  if (change.tags) {
    await work.db.deleteFrom('screen_tags').where('screen_id', '=', before.id).execute();
    if (change.tags.length > 0) {
      await work.db
        .insertInto('screen_tags')
        .values(change.tags.map((tag) => ({ screen_id: before.id, tenant_id: before.tenant_id, tag })))
        .execute();
    }
  }
  if (change.set && 'playlist_id' in change.set) {
    if (after.playlist_id === null) await statements.deleteAssignment.run(work.db, before.id);
    // One upsert, not a delete and an insert: a fleet assign writes this for 500 screens.
    else await statements.upsertAssignment.run(work.db, before.id, before.tenant_id, after.playlist_id);
  }

  const base = {
    tenantId: before.tenant_id,
    screenId: before.id,
    resource: { type: 'screen', id: before.id },
    requestId,
  };
  const changed: NewEvent[] = [
    {
      ...base,
      type: 'screen.updated',
      message: `screen ${change.changes.join(', ')} changed`,
      details: {
        revision: after.revision,
        changes: change.changes,
        ...(change.tags ? { tags: change.tags } : {}),
        ...(change.changes.includes('sync_group') ? { sync_group: after.sync_group } : {}),
        ...(change.changes.includes('wall_region')
          ? { wall_region: after.wall_region === null ? null : json.read<WallRegion>(after.wall_region) }
          : {}),
        ...(change.scheduleEntries ? { playlist_schedule_entries: change.scheduleEntries } : {}),
      },
    },
  ];
  if (change.lifecycle) {
    changed.push({
      ...base,
      type: change.lifecycle.type,
      message: change.lifecycle.message,
      details: { revision: after.revision, state: after.state },
    });
  }
  return screenChanged(events, work, before, after, now, {
    cause: causeOf(change),
    requestId,
    write: {
      events: changed,
      // Compare-and-set on the revision read: the row must be the one this change started from.
      async row(db, effectivePlaylistId, bump) {
        // Only the columns the change sets: a column written with its own value still rewrites
        // the index entries it is in (state, public_id), and a fan-out writes 500 rows.
        const columns = ROW_COLUMNS.filter((c) => change.set !== undefined && c in change.set);
        const row = (
          await rowWrite(columns).run(
            db,
            ...columns.map((c) => after[c]),
            after.revision,
            after.content_access_generation,
            now,
            effectivePlaylistId,
            bump,
            before.id,
            before.revision,
          )
        ).rows[0];
        // Another writer changed the screen since this transaction read it (PostgreSQL runs writers
        // side by side): the unit of work runs again on the new row, where an If-Match that no
        // longer holds answers revision_conflict and a change without one applies.
        if (!row) throw new StaleWrite(`screen ${before.id}`);
        return row;
      },
    },
  });
}

/** The columns a change may set (ScreenChange.set), in the order a row write names them. */
const ROW_COLUMNS = [
  'label',
  'state',
  'playlist_id',
  'timezone',
  'public_id',
  'paired_at',
  'archived_at',
  'deleted_at',
  'sync_group',
  'wall_region',
] as const satisfies readonly (keyof NonNullable<ScreenChange['set']>)[];

type RowColumn = (typeof ROW_COLUMNS)[number];
type ManifestNumbers = Pick<ScreenTable, 'manifest_revision' | 'content_access_generation'>;

/** A change's write of the screen row, compiled once for each set of columns changes set (a handful). */
const rowWrites = new Map<string, CompiledOnce<unknown[], ManifestNumbers>>();

/**
 * The UPDATE of a change that sets these columns: their values, then the revision, the content
 * generation, updated_at, the effective playlist, the manifest bump, the id and the revision read
 * (compare-and-set). It answers the manifest numbers after it, or no row when the revision moved.
 */
function rowWrite(columns: readonly RowColumn[]): CompiledOnce<unknown[], ManifestNumbers> {
  const key = columns.join(',');
  let write = rowWrites.get(key);
  if (!write) {
    const n = columns.length;
    write = compiledOnce<unknown[], ManifestNumbers>((db, slot) =>
      db
        .updateTable('screens')
        .set((eb) => ({
          ...Object.fromEntries(columns.map((c, i) => [c, slot(i)])),
          revision: slot(n),
          content_access_generation: slot(n + 1),
          updated_at: slot(n + 2),
          effective_playlist_id: slot(n + 3),
          manifest_revision: eb('manifest_revision', '+', slot<number>(n + 4)),
        }))
        .where('id', '=', slot(n + 5))
        .where('revision', '=', slot(n + 6))
        .returning(['manifest_revision', 'content_access_generation']),
    );
    rowWrites.set(key, write);
  }
  return write;
}

/** The statements every change of a screen runs (a fleet fan-out: 500 times), compiled once. */
const statements = {
  deleteAssignment: compiledOnce<[screenId: string], never>((db, slot) =>
    db.deleteFrom('screen_playlist_references').where('screen_id', '=', slot(0)).where('role', '=', 'assignment'),
  ),
  upsertAssignment: compiledOnce<[screenId: string, tenantId: string, playlistId: string], never>((db, slot) =>
    db
      .insertInto('screen_playlist_references')
      .values({ screen_id: slot(0), tenant_id: slot(1), playlist_id: slot(2), role: 'assignment', entry_id: '' })
      .onConflict((oc) => oc.columns(['screen_id', 'role', 'entry_id']).doUpdateSet({ playlist_id: slot(2) })),
  ),
};

/** A paired runtime stream of the screen was connected at `now` (the screen's last_online_at). */
export async function recordLastOnline(db: Db | Tx, screenId: string, now: number): Promise<void> {
  await db.updateTable('screens').set({ last_online_at: now }).where('id', '=', screenId).execute();
}

/** Screens (not deleted) that refer to the playlist in any role: they block its delete. */
export async function screenReferencesTo(
  db: Db | Tx,
  tenantId: string,
  playlistId: string,
): Promise<{ screen_id: string; role: string }[]> {
  return db
    .selectFrom('screen_playlist_references')
    .innerJoin('screens', 'screens.id', 'screen_playlist_references.screen_id')
    .select(['screen_playlist_references.screen_id', 'screen_playlist_references.role'])
    .where('screen_playlist_references.tenant_id', '=', tenantId)
    .where('screen_playlist_references.playlist_id', '=', playlistId)
    .where('screens.state', '!=', 'deleted')
    .orderBy('screen_playlist_references.screen_id')
    .execute();
}

/** The screen's state, of any tenant (the paired-device cookie already names the screen). */
export async function screenStateOf(db: Db | Tx, screenId: string): Promise<ScreenTable['state']> {
  const row = await db.selectFrom('screens').select('state').where('id', '=', screenId).executeTakeFirstOrThrow();
  return row.state;
}

/** The tenant's screens: pairing_pending and active unless a state is asked for, optionally of one tag. */
export async function screenList(
  services: Services,
  db: Db,
  tenantId: string,
  query: ScreenListQuery,
): Promise<ScreenList> {
  let q = db.selectFrom('screens').selectAll().where('tenant_id', '=', tenantId);
  q = query.state ? q.where('state', '=', query.state) : q.where('state', 'in', ['pairing_pending', 'active']);
  if (query.tag) {
    q = q.where(
      'id',
      'in',
      db.selectFrom('screen_tags').select('screen_id').where('tenant_id', '=', tenantId).where('tag', '=', query.tag),
    );
  }
  const rows = await q.orderBy('created_at').orderBy('id').execute();
  const tags = await tagsOf(
    db,
    rows.map((r) => r.id),
  );
  const online = await services.presence.online(rows.map((r) => r.id));
  const now = services.clock.now();
  const health = await healthOf(db, rows, online, now);
  return { items: rows.map((r) => screenView(r, tags.get(r.id)!, online, now, health.get(r.id))) };
}
