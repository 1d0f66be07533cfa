// Native pairing and identity: a device starts pairing from its Ed25519 key (and host facts), an
// owner claims the code as for a browser, the device completes with a signed proof and its key
// becomes the screen's identity (a native identity-bound screen: delete refuses, archive keeps the
// key). Afterwards the device proves possession against a challenge to mint each runtime session,
// and only a signed reset unbinds it. A device that lost its key is offered back to its screen
// (screens/recovery.ts).
import {
  describeHost,
  type HostFacts,
  type NativeIdentityChallenge,
  type NativeProofOp,
  type NativeRuntimeSession,
  type PlayerPublicKey,
} from '../../sdk/contract/native';
import type { PairingCompletion } from '../../sdk/contract/screens';
import { isoTime } from '../clock';
import { randomToken, safeEqual, sha256Hex } from '../keys';
import { problem } from '../problem';
import { offerRecovery } from '../screens/recovery';
import { tombstoneScreen } from '../screens/screen-changes';
import { publicUrl, viewOf } from '../screens/screens';
import type { ScreenTable } from '../screens/screens.tables';
import type { Services } from '../services';
import { json, type Tx, type Work } from '../store/store';
import type { NativeIdentityTable } from './native-identity.tables';
import { kidOf, verifyProof } from './native-proof';
import { sealNativeSession } from './native.auth';
import { activateScreen, bindDevice, createPairingSession, openRuntimeSession } from './pairing';
import type { PairingSessionTable } from './pairing.tables';

/** reference: an unclaimed native pairing lasts seventy-two hours. */
export const NATIVE_CODE_TTL_MS = 72 * 3600_000;
/** The row outlives both windows: 72 h unclaimed, then a fresh 72 h to collect after the claim. */
const NATIVE_PAIRING_ROW_TTL_MS = 2 * NATIVE_CODE_TTL_MS;
/** A challenge is signed at once by a device that asked for it; short, so a leaked one is soon worthless. */
export const NATIVE_CHALLENGE_TTL_MS = 2 * 60_000;
/** spec: after a recovery the old key retires after a 15-minute grace. */
export const RECOVERY_GRACE_MS = 15 * 60_000;

export interface NativePairingStarted {
  session: PairingSessionTable;
  credential: string;
}

/** Starts a native pairing: refused for a key already bound; may record a recovery offer. */
export async function startNativePairing(
  services: Services,
  work: Work,
  input: { publicKey: PlayerPublicKey; host?: HostFacts },
  now: number,
  requestId?: string,
): Promise<NativePairingStarted> {
  const kid = await kidOf(input.publicKey);
  const bound = await work.db.selectFrom('native_identities').select('kid').where('kid', '=', kid).executeTakeFirst();
  if (bound)
    throw problem(
      'enrollment_bound',
      'this player key already identifies a screen; mint a session from a proof instead',
    );
  const session = await createPairingSession(work, now, {
    codeTtlMs: NATIVE_CODE_TTL_MS,
    ttlMs: NATIVE_PAIRING_ROW_TTL_MS,
  });
  const credential = `mqp_${randomToken(32)}`;
  await work.db
    .insertInto('native_pairing_sessions')
    .values({
      pairing_session_id: session.id,
      credential_hash: sha256Hex(credential),
      kid,
      public_x: input.publicKey.x,
      host: input.host ? json.write(input.host) : null,
      created_at: now,
    })
    .execute();
  if (input.host) await offerRecovery(services, work, { session, kid, host: input.host }, now, requestId);
  return { session, credential };
}

/**
 * Completes a claimed native pairing with the key that started it: the key becomes the screen's
 * identity. When the screen already had one (a confirmed recovery), the old key retires after the
 * grace. A retry of a completed pairing by the same key answers the same completion.
 */
export async function completeNativePairing(
  services: Services,
  work: Work,
  sessionId: string,
  input: { completionNonce: string; publicKey: PlayerPublicKey; signature: string },
  now: number,
  requestId?: string,
): Promise<PairingCompletion> {
  const session = await work.db
    .selectFrom('pairing_sessions')
    .innerJoin('native_pairing_sessions', 'native_pairing_sessions.pairing_session_id', 'pairing_sessions.id')
    .selectAll('pairing_sessions')
    .select(['native_pairing_sessions.kid', 'native_pairing_sessions.host'])
    .where('pairing_sessions.id', '=', sessionId)
    .executeTakeFirstOrThrow();
  if (session.state === 'pending')
    throw problem('resource_conflict', 'this pairing session has not been claimed yet; wait for pairing.claimed');
  const kid = await kidOf(input.publicKey);
  if (kid !== session.kid) throw problem('proof_invalid', 'this pairing session was started with another key');
  if (!safeEqual(session.completion_nonce ?? '', input.completionNonce))
    throw problem('proof_invalid', 'the completion nonce does not match this pairing session');
  const { nonce } = await verifyProof(input.signature, input.publicKey, { op: 'pairing.complete', kid }, now);
  if (nonce !== input.completionNonce) throw problem('proof_invalid', 'the proof signs another nonce');

  const screen = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', session.screen_id!)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  if (!screen) throw problem('not_found', 'the screen this code was claimed for no longer exists');

  let after: ScreenTable = screen;
  if (session.state !== 'completed') {
    const taken = await work.db.selectFrom('native_identities').select('kid').where('kid', '=', kid).executeTakeFirst();
    if (taken) throw problem('enrollment_bound', 'this player key already identifies a screen');
    // A confirmed recovery: the key the screen had until now keeps working for the grace only.
    await work.db
      .updateTable('native_identities')
      .set({ state: 'retiring', retires_at: now + RECOVERY_GRACE_MS })
      .where('screen_id', '=', screen.id)
      .where('state', '=', 'active')
      .execute();
    const { deviceId } = await bindDevice(services, work, screen, 'native', now);
    const host = json.read<HostFacts>(session.host);
    await work.db
      .insertInto('native_identities')
      .values({
        kid,
        public_x: input.publicKey.x,
        tenant_id: screen.tenant_id,
        screen_id: screen.id,
        device_id: deviceId,
        state: 'active',
        retires_at: null,
        duid: host?.duid ?? null,
        serial: host?.serial ?? null,
        host: host ? json.write(describeHost(host)) : null,
        created_at: now,
        last_seen_at: now,
      })
      .execute();
    await work.db
      .updateTable('pairing_sessions')
      .set({ state: 'completed', device_id: deviceId, completed_at: now })
      .where('id', '=', session.id)
      .execute();
    await work.db
      .updateTable('screen_recovery_offers')
      .set({ state: 'confirmed' })
      .where('pairing_session_id', '=', session.id)
      .execute();
    after = await activateScreen(services, work, screen, 'completed native pairing', now, requestId);
    await work.db.updateTable('screens').set({ native_identity: 1 }).where('id', '=', screen.id).execute();
    after = { ...after, native_identity: 1 };
  } else {
    const identity = await work.db
      .selectFrom('native_identities')
      .select('screen_id')
      .where('kid', '=', kid)
      .executeTakeFirst();
    if (identity?.screen_id !== screen.id)
      throw problem('unauthorized', 'this pairing was completed and its key has since been unbound; pair again');
  }
  return { screen: await viewOf(services, work.db, after), public_url: publicUrl(services, after.public_id) };
}

/** The identity a proof names, if it may still prove anything: active, or retiring within its grace. */
async function liveIdentity(db: Tx, kid: string, now: number): Promise<NativeIdentityTable | undefined> {
  const identity = await db.selectFrom('native_identities').selectAll().where('kid', '=', kid).executeTakeFirst();
  if (!identity || (identity.retires_at !== null && identity.retires_at <= now)) return undefined;
  return identity;
}

export async function issueChallenge(
  work: Work,
  kid: string,
  op: Exclude<NativeProofOp, 'pairing.complete'>,
  now: number,
): Promise<NativeIdentityChallenge> {
  if (!(await liveIdentity(work.db, kid, now)))
    throw problem('not_found', 'no screen is bound to this key; start native pairing');
  // Spent and lapsed challenges go as new ones come (they are worthless either way).
  await work.db.deleteFrom('native_identity_challenges').where('expires_at', '<=', now).execute();
  const nonce = randomToken(32);
  const expiresAt = now + NATIVE_CHALLENGE_TTL_MS;
  await work.db
    .insertInto('native_identity_challenges')
    .values({ nonce, kid, op, expires_at: expiresAt, consumed_at: null })
    .execute();
  return { nonce, expires_at: isoTime(expiresAt), aud: 'marquee-runtime', op };
}

/**
 * Checks a proof against the key's live identity and spends its challenge (once: a replayed
 * proof finds it spent). Returns the identity; the key's proof is a sign of life.
 */
async function proveIdentity(
  work: Work,
  input: { kid: string; publicKey: PlayerPublicKey; signature: string },
  op: 'session.mint' | 'identity.reset',
  now: number,
): Promise<NativeIdentityTable> {
  const kid = await kidOf(input.publicKey, input.kid);
  const identity = await liveIdentity(work.db, kid, now);
  if (!identity) throw problem('unauthorized', 'no screen is bound to this key any more; start native pairing');
  const { nonce } = await verifyProof(input.signature, input.publicKey, { op, kid }, now);
  const spent = await work.db
    .updateTable('native_identity_challenges')
    .set({ consumed_at: now })
    .where('nonce', '=', nonce)
    .where('kid', '=', kid)
    .where('op', '=', op)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (Number(spent.numUpdatedRows) !== 1)
    throw problem('proof_invalid', 'the proof signs no current challenge of this key (expired, used, or never issued)');
  await work.db.updateTable('native_identities').set({ last_seen_at: now }).where('kid', '=', kid).execute();
  return identity;
}

/** A paired runtime session for the key's screen (an archived screen too: it shows archived glass). */
export async function mintNativeSession(
  services: Services,
  work: Work,
  input: { kid: string; publicKey: PlayerPublicKey; signature: string },
  now: number,
): Promise<NativeRuntimeSession> {
  const identity = await proveIdentity(work, input, 'session.mint', now);
  const screen = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', identity.screen_id)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  if (!screen) throw problem('unauthorized', 'the screen of this key was deleted; start native pairing');
  const opened = await openRuntimeSession(services, work, screen, { deviceId: identity.device_id }, now);
  return {
    ...opened.body,
    paired: true,
    runtime_credential: sealNativeSession(services.keys, { r: opened.sessionId, e: opened.expiresAt }),
  };
}

/**
 * The only way a native device de-associates: its enrollment goes, and the screen it identifies
 * is tombstoned. A retiring key (replaced by a recovery) only loses its enrollment.
 */
export async function resetNativeIdentity(
  services: Services,
  work: Work,
  input: { kid: string; publicKey: PlayerPublicKey; signature: string },
  now: number,
  requestId: string,
): Promise<void> {
  const identity = await proveIdentity(work, input, 'identity.reset', now);
  await work.db.deleteFrom('native_identities').where('kid', '=', identity.kid).execute();
  await work.db
    .updateTable('screen_devices')
    .set({ status: 'revoked', revoked_at: now })
    .where('id', '=', identity.device_id)
    .execute();
  if (identity.state !== 'active') return;
  const screen = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', identity.screen_id)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  if (screen)
    await tombstoneScreen(
      { events: services.events, work, now, requestId },
      screen,
      'its native player reset its identity',
    );
}
