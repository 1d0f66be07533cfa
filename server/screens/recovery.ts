// Recovery (spec: States / Screen, Limits): a native device that lost its key starts pairing anew
// with the same duid or serial; when that matches exactly one screen (in exactly one project) under
// another key, and that key has shown no life for ten minutes, the screen's owner is offered to
// move the screen to the new device (screen.recovery_offered; at most three offers per screen per
// rolling hour). Confirming claims the device's pairing session for the same screen: the device
// hears pairing.claimed, proves possession, and its key becomes the identity while the old one
// retires after a grace (pairing/native-pairing.ts). Problems never echo device identifiers.
import { describeHost, type HostFacts } from '../../sdk/contract/native';
import { newId } from '../keys';
import { claimSession, pairingChannel } from '../pairing/pairing';
import type { PairingSessionTable } from '../pairing/pairing.tables';
import { problem } from '../problem';
import type { Services } from '../services';
import { json, type Tx, type Work } from '../store/store';
import type { RecoveryPendingColumn } from './recovery-view';
import { changeScreen } from './screens';
import type { ScreenTable } from './screens.tables';

/** spec: no offer while the bound key showed life in the last ten minutes. */
export const RECOVERY_QUIET_MS = 10 * 60_000;
/** spec: at most three recovery offers per screen per rolling hour. */
export const RECOVERY_OFFERS_PER_HOUR = 3;
const HOUR_MS = 3600_000;

/** Screens (not deleted, any project) whose active identity carries this duid or serial. */
async function screensMatching(db: Tx, host: Pick<HostFacts, 'duid' | 'serial'>): Promise<string[]> {
  if (host.duid === undefined && host.serial === undefined) return [];
  const rows = await db
    .selectFrom('native_identities')
    .innerJoin('screens', 'screens.id', 'native_identities.screen_id')
    .select('native_identities.screen_id')
    .distinct()
    .where('native_identities.state', '=', 'active')
    .where('screens.state', '!=', 'deleted')
    .where((eb) =>
      eb.or([
        ...(host.duid !== undefined ? [eb('native_identities.duid', '=', host.duid)] : []),
        ...(host.serial !== undefined ? [eb('native_identities.serial', '=', host.serial)] : []),
      ]),
    )
    .execute();
  return rows.map((r) => r.screen_id);
}

/**
 * Called at a native pairing start with host facts: records an offer when every rule allows one,
 * and otherwise does nothing (the device's pairing goes on as an ordinary one either way).
 */
export async function offerRecovery(
  services: Services,
  work: Work,
  input: { session: PairingSessionTable; kid: string; host: HostFacts },
  now: number,
  requestId?: string,
): Promise<void> {
  const matches = await screensMatching(work.db, input.host);
  if (matches.length !== 1) return; // none, or ambiguous: never guess which screen a device was
  const screen = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', matches[0]!)
    .executeTakeFirstOrThrow();
  const bound = await work.db
    .selectFrom('native_identities')
    .select(['kid', 'last_seen_at'])
    .where('screen_id', '=', screen.id)
    .where('state', '=', 'active')
    .executeTakeFirstOrThrow();
  if (bound.kid === input.kid) return;
  // The bound key is alive (a proof or a request lately, or its stream connected): not lost.
  if (bound.last_seen_at > now - RECOVERY_QUIET_MS || (await services.presence.online([screen.id])).has(screen.id))
    return;
  // The hour's offers are counted, then one is added and the pending one superseded: one offer per
  // screen at a time where transactions run side by side, or devices starting together pass the cap.
  await work.lock(`recovery-offers:${screen.id}`);
  const recent = await work.db
    .selectFrom('screen_recovery_offers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('screen_id', '=', screen.id)
    .where('created_at', '>', now - HOUR_MS)
    .executeTakeFirstOrThrow();
  if (Number(recent.n) >= RECOVERY_OFFERS_PER_HOUR) return;

  const host = describeHost(input.host);
  const offer = {
    id: newId('rco'),
    tenant_id: screen.tenant_id,
    screen_id: screen.id,
    pairing_session_id: input.session.id,
    state: 'pending' as const,
    host: json.write(host),
    expires_at: input.session.code_expires_at,
    created_at: now,
    confirmed_at: null,
  };
  // The newest offer is the one the owner confirms; earlier ones are superseded.
  await work.db
    .updateTable('screen_recovery_offers')
    .set({ state: 'superseded' })
    .where('screen_id', '=', screen.id)
    .where('state', '=', 'pending')
    .execute();
  await work.db.insertInto('screen_recovery_offers').values(offer).execute();
  const column: RecoveryPendingColumn = { offer_id: offer.id, offered_at: now, expires_at: offer.expires_at, host };
  // An offer is the device's doing, not the owner's: it shows on the screen without a revision bump.
  await work.db
    .updateTable('screens')
    .set({ recovery_pending: json.write(column) })
    .where('id', '=', screen.id)
    .execute();
  await services.events.append(
    work,
    {
      tenantId: screen.tenant_id,
      screenId: screen.id,
      type: 'screen.recovery_offered',
      message: 'a native device offers to take this screen over; confirm the recovery to move it there',
      resource: { type: 'screen', id: screen.id },
      details: { ...host, expires_at: new Date(offer.expires_at).toISOString() },
      requestId,
    },
    now,
  );
}

/**
 * Confirms the screen's pending offer: claims the offering device's pairing session for this
 * screen (the device hears pairing.claimed) and emits screen.recovered. Everything the screen
 * holds (playlists, label, timezone, schedules, history) stays: it is the same screen.
 */
export async function confirmRecovery(
  services: Services,
  work: Work,
  screen: ScreenTable,
  now: number,
  requestId?: string,
): Promise<ScreenTable> {
  const offer = await work.db
    .selectFrom('screen_recovery_offers')
    .selectAll()
    .where('screen_id', '=', screen.id)
    .where('state', '=', 'pending')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (!offer) throw problem('recovery_not_offered', `no recovery is pending for screen ${screen.id}`);
  const session = await work.db
    .selectFrom('pairing_sessions')
    .innerJoin('native_pairing_sessions', 'native_pairing_sessions.pairing_session_id', 'pairing_sessions.id')
    .selectAll('pairing_sessions')
    .select('native_pairing_sessions.host')
    .where('pairing_sessions.id', '=', offer.pairing_session_id)
    .executeTakeFirst();
  if (!session || session.code_expires_at <= now || offer.expires_at <= now)
    throw problem(
      'recovery_expired',
      'the offering device stopped waiting (its pairing session lapsed); it must start again',
    );
  // Claimed meanwhile by its code (a new screen): nothing left to recover.
  if (session.state !== 'pending')
    throw problem('recovery_not_offered', `no recovery is pending for screen ${screen.id}`);
  const host = json.read<HostFacts>(session.host) ?? { platform: 'unknown' };
  const matches = await screensMatching(work.db, host);
  if (matches.length !== 1 || matches[0] !== screen.id)
    throw problem(
      'recovery_ambiguous',
      "the offering device's identifier is attached to more than one screen; pair it with its code instead",
    );

  await claimSession(work, session, screen, now);
  work.afterCommit(() => services.notifier.publish(pairingChannel(session.id)));
  await work.db
    .updateTable('screen_recovery_offers')
    .set({ state: 'confirmed', confirmed_at: now })
    .where('id', '=', offer.id)
    .execute();
  await work.db.updateTable('screens').set({ recovery_pending: null }).where('id', '=', screen.id).execute();
  return changeScreen(
    services.events,
    work,
    { ...screen, recovery_pending: null },
    {
      changes: ['recovery'],
      lifecycle: {
        type: 'screen.recovered',
        message: 'recovery confirmed: the offering device takes this screen over once it proves its key',
      },
    },
    now,
    requestId,
  );
}
