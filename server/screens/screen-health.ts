// Is my screen alive, and what is on it: the `health` and `observation` members of a screen view,
// what players tell of themselves (their surface, their build, kiosk watchdog recoveries), and the
// announced presence: screen.online / screen.offline once a change of services.presence has held
// for PRESENCE_DEBOUNCE_MS, so a screen that flaps (a reload, a router reboot) raises no alert.
// The announced state is a row, so a restart neither repeats an announcement nor loses one.
import type { PlayerKind, ScreenHealth, ScreenObservation } from '../../sdk/contract/screen-health';
import { isoTime } from '../clock';
import { manifestRevisionId } from '../manifests/manifest-ids';
import type { Services } from '../services';
import { json, type Db, type Tx, type Work } from '../store/store';
import type { ScreenHealthTable } from './screen-health.tables';
import { statusesOf } from './screenshots';
import type { ScreenTable } from './screens.tables';

/**
 * A presence change is announced once it held this long: long enough that a player reload, a
 * kiosk's renderer restart or a brief uplink drop raises nothing, short enough for an alert to matter.
 */
export const PRESENCE_DEBOUNCE_MS = 60_000;
/** How often the presence sweep looks (an announcement comes at most this late past the debounce). */
export const PRESENCE_SWEEP_MS = 5_000;
/** The runtime report a kiosk's watchdog makes after each recovery (packaging/kiosk/agent.ts). */
export const RENDERER_RECOVERED = 'kiosk.renderer_recovered';

type HealthParts = { health: ScreenHealth; observation?: ScreenObservation };

/** The health of each screen (and its observation, once a player sent one), in a few queries. */
export async function healthOf(
  db: Db | Tx,
  rows: readonly ScreenTable[],
  online: ReadonlySet<string>,
  now: number,
): Promise<Map<string, HealthParts>> {
  const ids = rows.map((r) => r.id);
  const result = new Map<string, HealthParts>();
  if (ids.length === 0) return result;
  const [health, runtime, hosts, shots] = await Promise.all([
    db.selectFrom('screen_health').selectAll().where('screen_id', 'in', ids).execute(),
    db.selectFrom('screen_runtime_state').selectAll().where('screen_id', 'in', ids).execute(),
    db
      .selectFrom('native_identities')
      .select(['screen_id', 'host'])
      .where('screen_id', 'in', ids)
      .where('state', '=', 'active')
      .execute(),
    statusesOf(db, ids, now),
  ]);
  const healthBy = new Map(health.map((h) => [h.screen_id, h]));
  const runtimeBy = new Map(runtime.map((r) => [r.screen_id, r]));
  const hostBy = new Map(hosts.map((h) => [h.screen_id, h.host]));
  for (const row of rows) {
    const h = healthBy.get(row.id);
    const active = runtimeBy.get(row.id);
    const isOnline = online.has(row.id);
    const lastSeen = isOnline ? now : row.last_online_at;
    const observation = json.read<ScreenObservation>(h?.observation ?? null);
    result.set(row.id, {
      health: {
        presence: (h?.presence as ScreenHealth['presence'] | undefined) ?? null,
        last_seen_at: lastSeen === null ? null : isoTime(lastSeen),
        offline_since: h?.presence === 'offline' && h.offline_since !== null ? isoTime(h.offline_since) : null,
        player: h?.player_kind ? { kind: h.player_kind as PlayerKind, version: h.player_version } : null,
        host: json.read<ScreenHealth['host']>(hostBy.get(row.id) ?? null),
        now_playing: active
          ? {
              // The activated manifest's playlist: a player still on an older one is not said to play the new.
              playlist_id: active.playlist_id,
              manifest_revision: manifestRevisionId(row.id, active.active_manifest_revision),
              activated_at: isoTime(active.activated_at),
            }
          : null,
        watchdog: {
          recoveries: Number(h?.recoveries ?? 0),
          last_recovery_at: h?.last_recovery_at ? isoTime(h.last_recovery_at) : null,
          last_reason: h?.last_recovery_reason ?? null,
        },
        screenshot: shots.get(row.id) ?? { state: 'idle' },
      },
      ...(observation ? { observation } : {}),
    });
  }
  return result;
}

/** Writes some health columns of a screen, creating its row on first use. */
async function upsertHealth(
  db: Db | Tx,
  screen: { screenId: string; tenantId: string },
  set: Partial<Omit<ScreenHealthTable, 'screen_id' | 'tenant_id'>>,
): Promise<void> {
  await db
    .insertInto('screen_health')
    .values({ screen_id: screen.screenId, tenant_id: screen.tenantId, recoveries: 0, ...set })
    .onConflict((oc) => oc.column('screen_id').doUpdateSet(set))
    .execute();
}

/** A paired runtime stream of the screen opened: which kind of player it is (from its credential). */
export async function recordPlayerKind(
  db: Db | Tx,
  screen: { screenId: string; tenantId: string },
  kind: PlayerKind,
): Promise<void> {
  await upsertHealth(db, screen, { player_kind: kind });
}

const surfaceKey = (o: ScreenObservation) =>
  o.surfaces.map((s) => [s.id, s.width, s.height, s.pixel_ratio, s.presentation].join(':')).join('|');

/**
 * PUT /runtime/v1/observation (reference contract): last write wins and replaces the surfaces; an
 * identical surface tuple is not a change (its later observed_at is ignored, no event).
 */
export async function recordObservation(
  services: Services,
  work: Work,
  screen: { screenId: string; tenantId: string },
  observation: ScreenObservation,
  player: { kind: PlayerKind; version: string | null },
  now: number,
): Promise<void> {
  const row = await work.db
    .selectFrom('screen_health')
    .select('observation')
    .where('screen_id', '=', screen.screenId)
    .executeTakeFirst();
  const before = json.read<ScreenObservation>(row?.observation ?? null);
  const changed = before === null || surfaceKey(before) !== surfaceKey(observation);
  await upsertHealth(work.db, screen, {
    player_kind: player.kind,
    player_version: player.version,
    ...(changed ? { observation: json.write(observation) } : {}),
  });
  if (!changed) return;
  const s = observation.surfaces[0]!;
  await services.events.append(
    work,
    {
      tenantId: screen.tenantId,
      screenId: screen.screenId,
      type: 'screen.surface_changed',
      message: `display surface ${s.width}×${s.height} at ${s.pixel_ratio}x (${s.presentation})`,
      resource: { type: 'screen', id: screen.screenId },
      details: observation,
    },
    now,
  );
}

/** A kiosk's watchdog recovered its renderer (its report, RENDERER_RECOVERED): counted for the view. */
export async function recordRecovery(
  work: Work,
  screen: { screenId: string; tenantId: string },
  reason: string,
  now: number,
): Promise<void> {
  const reasonText = reason.slice(0, 80);
  await work.db
    .insertInto('screen_health')
    .values({
      screen_id: screen.screenId,
      tenant_id: screen.tenantId,
      recoveries: 1,
      last_recovery_at: now,
      last_recovery_reason: reasonText,
    })
    .onConflict((oc) =>
      oc.column('screen_id').doUpdateSet((eb) => ({
        recoveries: eb('screen_health.recoveries', '+', 1),
        last_recovery_at: now,
        last_recovery_reason: reasonText,
      })),
    )
    .execute();
}

/**
 * Since when each screen's presence differs from what was announced (this process's view; a
 * restart starts the debounce over, which can only delay an announcement, never repeat one).
 */
export type PresenceDrift = Map<string, { observed: 'online' | 'offline'; since: number }>;

/**
 * Announces presence changes that held for the debounce. Looks at active screens that were ever
 * online; a change that flips back within the debounce is forgotten (no event pair).
 */
export async function sweepPresence(services: Services, drift: PresenceDrift, now: number): Promise<void> {
  const { db } = services.store;
  const rows = await db
    .selectFrom('screens')
    .leftJoin('screen_health', 'screen_health.screen_id', 'screens.id')
    .select(['screens.id', 'screens.tenant_id', 'screens.last_online_at', 'screen_health.presence'])
    .where('screens.state', '=', 'active')
    .where('screens.last_online_at', 'is not', null)
    .execute();
  const online = await services.presence.online(rows.map((r) => r.id));
  const seen = new Set<string>();
  for (const row of rows) {
    seen.add(row.id);
    const observed = online.has(row.id) ? 'online' : 'offline';
    const announced = row.presence ?? 'offline'; // never announced: only coming online is news
    if (observed === announced) {
      drift.delete(row.id);
      continue;
    }
    const current = drift.get(row.id);
    if (!current || current.observed !== observed) {
      drift.set(row.id, { observed, since: now });
      continue;
    }
    if (now - current.since < PRESENCE_DEBOUNCE_MS) continue;
    drift.delete(row.id);
    await announce(
      services,
      { screenId: row.id, tenantId: row.tenant_id },
      row.presence,
      observed,
      row.last_online_at!,
      now,
    );
  }
  for (const id of drift.keys()) if (!seen.has(id)) drift.delete(id);
}

async function announce(
  services: Services,
  screen: { screenId: string; tenantId: string },
  before: string | null,
  observed: 'online' | 'offline',
  lastOnlineAt: number,
  now: number,
): Promise<void> {
  await services.store.transaction(async (work) => {
    // Replicas sweep side by side: one announcement of a screen at a time, each reading what the
    // one before it committed (on SQLite, where transactions run one at a time, a no-op).
    await work.lock(`screen-presence:${screen.screenId}`);
    const row = await work.db
      .selectFrom('screen_health')
      .select(['presence', 'offline_since'])
      .where('screen_id', '=', screen.screenId)
      .executeTakeFirst();
    // Another replica (or an earlier sweep) announced it meanwhile.
    if ((row?.presence ?? null) !== before) return;
    const lastSeen = observed === 'online' ? now : lastOnlineAt;
    await upsertHealth(work.db, screen, {
      presence: observed,
      presence_changed_at: now,
      offline_since: observed === 'offline' ? lastOnlineAt : null,
    });
    const offlineSince = row?.offline_since ?? null;
    await services.events.append(
      work,
      observed === 'online'
        ? {
            tenantId: screen.tenantId,
            screenId: screen.screenId,
            type: 'screen.online',
            message:
              offlineSince === null ? 'screen online' : `screen back online (offline since ${isoTime(offlineSince)})`,
            resource: { type: 'screen', id: screen.screenId },
            details: {
              last_seen_at: isoTime(lastSeen),
              offline_since: offlineSince === null ? null : isoTime(offlineSince),
            },
          }
        : {
            tenantId: screen.tenantId,
            screenId: screen.screenId,
            type: 'screen.offline',
            severity: 'warning',
            message: `screen offline since ${isoTime(lastOnlineAt)}`,
            resource: { type: 'screen', id: screen.screenId },
            details: { last_seen_at: isoTime(lastSeen), offline_since: isoTime(lastOnlineAt) },
          },
      now,
    );
  });
}
