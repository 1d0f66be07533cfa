// Pairing, device binding and runtime sessions: the records behind the player's cookies.
import crypto from 'node:crypto';
import { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, type RuntimeSession } from '../../sdk/contract/screens';
import { EventCursors, type StreamScope } from '../events/cursors';
import { headPosition } from '../events/event-reader';
import { newId, randomToken } from '../keys';
import type { Services } from '../services';
import { changeScreen, publicUrl } from '../screens/screens';
import type { ScreenTable } from '../screens/screens.tables';
import { isUniqueViolation, type Db, type Tx, type Work } from '../store/store';
import { PAIRED_CAPABILITIES, READ_ONLY_CAPABILITIES } from './pairing.auth';
import type { PairingSessionTable } from './pairing.tables';
import {
  cookieValues,
  DEVICE_COOKIE,
  DEVICE_COOKIE_TTL_MS,
  PAIRING_CODE_TTL_MS,
  PAIRING_COOKIE,
  PAIRING_COOKIE_TTL_MS,
  RUNTIME_COOKIE,
  RUNTIME_SESSION_TTL_MS,
  setCookie,
} from './pairing-cookies';

/** Notifier channel a pairing stream waits on. */
export const pairingChannel = (sessionId: string) => `pairing:${sessionId}`;

export function newPairingCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++)
    code += PAIRING_CODE_ALPHABET[crypto.randomInt(PAIRING_CODE_ALPHABET.length)];
  return code;
}

/**
 * A new pending session with a code no other pending session holds; returns it and its cookie.
 * `replaces` is the pending session the same player showed until now (its pairing cookie): it is
 * removed in the same transaction, so its code cannot be claimed once the player shows another.
 */
export async function startPairingSession(
  services: Services,
  work: Work,
  now: number,
  replaces?: string,
): Promise<{ session: PairingSessionTable; cookie: string }> {
  if (replaces !== undefined)
    await work.db.deleteFrom('pairing_sessions').where('id', '=', replaces).where('state', '=', 'pending').execute();
  const session = await createPairingSession(work, now, {
    codeTtlMs: PAIRING_CODE_TTL_MS,
    ttlMs: PAIRING_COOKIE_TTL_MS,
  });
  const value = cookieValues.pairing.seal(services.keys, { s: session.id, e: session.expires_at });
  return { session, cookie: setCookie(PAIRING_COOKIE, value, PAIRING_COOKIE_TTL_MS) };
}

/**
 * A new pending session with a code no other pending session holds, claimable for `codeTtlMs`
 * and kept for `ttlMs` (a browser's ten minutes and its cookie; a native player's 72 hours).
 */
export async function createPairingSession(
  work: Work,
  now: number,
  windows: { codeTtlMs: number; ttlMs: number },
): Promise<PairingSessionTable> {
  for (let attempt = 0; ; attempt++) {
    const code = newPairingCode();
    // An expired pending session no longer holds its code.
    await work.db
      .deleteFrom('pairing_sessions')
      .where('code', '=', code)
      .where('state', '=', 'pending')
      .where('code_expires_at', '<=', now)
      .execute();
    const session: PairingSessionTable = {
      id: newId('pair'),
      code,
      state: 'pending',
      code_expires_at: now + windows.codeTtlMs,
      expires_at: now + windows.ttlMs,
      tenant_id: null,
      screen_id: null,
      completion_nonce: null,
      device_id: null,
      created_at: now,
      claimed_at: null,
      completed_at: null,
    };
    try {
      await work.db.insertInto('pairing_sessions').values(session).execute();
    } catch (error) {
      if (isUniqueViolation(error) && attempt < 8) continue;
      throw error;
    }
    return session;
  }
}

/** A claimable session: pending, code not expired. */
export async function findClaimableSession(
  db: Db | Tx,
  code: string,
  now: number,
): Promise<PairingSessionTable | undefined> {
  return db
    .selectFrom('pairing_sessions')
    .selectAll()
    .where('code', '=', code)
    .where('state', '=', 'pending')
    .where('code_expires_at', '>', now)
    .executeTakeFirst();
}

export async function claimSession(
  work: Work,
  session: PairingSessionTable,
  screen: ScreenTable,
  now: number,
): Promise<void> {
  await work.db
    .updateTable('pairing_sessions')
    .set({
      state: 'claimed',
      tenant_id: screen.tenant_id,
      screen_id: screen.id,
      completion_nonce: randomToken(32),
      claimed_at: now,
    })
    .where('id', '=', session.id)
    .where('state', '=', 'pending')
    .execute();
}

/** Binds a new paired-device credential to the screen and returns its cookie. */
export async function bindDevice(
  services: Services,
  work: Work,
  screen: ScreenTable,
  origin: 'pairing' | 'provisioning' | 'native',
  now: number,
): Promise<{ deviceId: string; cookie: string }> {
  const deviceId = newId('dev');
  await work.db
    .insertInto('screen_devices')
    .values({
      id: deviceId,
      screen_id: screen.id,
      tenant_id: screen.tenant_id,
      status: 'active',
      origin,
      created_at: now,
      revoked_at: null,
    })
    .execute();
  return { deviceId, cookie: deviceCookieFor(services, deviceId) };
}

export function deviceCookieFor(services: Services, deviceId: string): string {
  return setCookie(DEVICE_COOKIE, cookieValues.device.seal(services.keys, { d: deviceId }), DEVICE_COOKIE_TTL_MS);
}

/** The player proved possession: a pairing_pending screen becomes active (revision + 1). */
export async function activateScreen(
  services: Services,
  work: Work,
  screen: ScreenTable,
  how: string,
  now: number,
  requestId?: string,
): Promise<ScreenTable> {
  const set: Partial<ScreenTable> = { paired_at: screen.paired_at ?? now };
  const activating = screen.state === 'pairing_pending';
  if (activating) set.state = 'active';
  return changeScreen(
    services.events,
    work,
    screen,
    {
      set,
      changes: activating ? ['state', 'player'] : ['player'],
      lifecycle: { type: activating ? 'screen.activated' : 'screen.player_bound', message: `a player ${how}` },
    },
    now,
    requestId,
  );
}

/**
 * The head of the screen's runtime stream, as the cursor a new runtime session starts after: the
 * player hears what happens from now on and reads the current state from the manifest.
 */
export async function runtimeEventCursor(
  services: Services,
  db: Tx,
  screen: Pick<ScreenTable, 'id' | 'tenant_id'>,
): Promise<string> {
  const scope: StreamScope = { kind: 'screen', tenantId: screen.tenant_id, screenId: screen.id };
  return new EventCursors(services.keys).encode(scope, await headPosition(db, scope));
}

/** Opens a runtime session for the screen and returns the RuntimeSession body and its cookie. */
export async function openRuntimeSession(
  services: Services,
  work: Work,
  screen: ScreenTable,
  device: { deviceId: string } | null,
  now: number,
): Promise<{ body: RuntimeSession; cookie: string; sessionId: string; expiresAt: number }> {
  const id = newId('rts');
  const expiresAt = now + RUNTIME_SESSION_TTL_MS;
  await work.db
    .insertInto('runtime_sessions')
    .values({
      id,
      screen_id: screen.id,
      tenant_id: screen.tenant_id,
      paired: device ? 1 : 0,
      device_id: device?.deviceId ?? null,
      content_access_generation: screen.content_access_generation,
      created_at: now,
      expires_at: expiresAt,
      revoked_at: null,
    })
    .execute();
  const body: RuntimeSession = {
    paired: device !== null,
    capabilities: [...(device ? PAIRED_CAPABILITIES : READ_ONLY_CAPABILITIES)],
    event_cursor: await runtimeEventCursor(services, work.db, screen),
    public_url: publicUrl(services, screen.public_id),
  };
  return {
    body,
    sessionId: id,
    expiresAt,
    cookie: setCookie(
      RUNTIME_COOKIE,
      cookieValues.runtime.seal(services.keys, { r: id, e: expiresAt }),
      RUNTIME_SESSION_TTL_MS,
    ),
  };
}

/** Ends every runtime session of the screen (rotation, credential revoke, delete). */
export async function revokeRuntimeSessions(work: Work, screenId: string, now: number): Promise<void> {
  await work.db
    .updateTable('runtime_sessions')
    .set({ revoked_at: now })
    .where('screen_id', '=', screenId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes the screen's paired-device credentials (credential revoke, delete). */
export async function revokeDevices(work: Work, screenId: string, now: number): Promise<void> {
  await work.db
    .updateTable('screen_devices')
    .set({ status: 'revoked', revoked_at: now })
    .where('screen_id', '=', screenId)
    .where('status', '=', 'active')
    .execute();
}
