// Pairing, device binding and runtime sessions: the records behind the player's cookies.
import { displayOf } from '../screens/display-state';
import crypto from 'node:crypto';
import { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, type RuntimeSession } from '../../sdk/contract/screens';
import { EventCursors, type StreamScope } from '../events/cursors';
import { headPosition } from '../events/event-reader';
import { newId, randomToken, safeEqual, sha256Hex } from '../keys';
import { problem } from '../problem';
import type { Services } from '../services';
import { changeScreen, createScreen, publicUrl } from '../screens/screens';
import type { ScreenTable } from '../screens/screens.tables';
import { expectUpdated, type Db, type Tx, type Work } from '../store/store';
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

/** spec: a provisioning token is redelivered to an exact retry for ten minutes. */
export const PROVISIONING_WINDOW_MS = 10 * 60_000;

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
    // DO NOTHING rather than catching the violation: on PostgreSQL a failed statement aborts the
    // whole transaction, so the next attempt could not run in it.
    const inserted = await work.db
      .insertInto('pairing_sessions')
      .values(session)
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows) === 0) {
      if (attempt < 8) continue;
      throw new Error('no free pairing code after 9 attempts');
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
  // Another claim of the code that committed since it was read makes this unit of work run again,
  // where the code is no longer claimable (and the screen made for it is not kept).
  expectUpdated(
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
      .executeTakeFirst(),
    `pairing session ${session.id}`,
  );
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
    // The display state now: a player coming online applies it without replaying old commands.
    display: await displayOf(work.db, screen.id),
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

/** Whether a runtime session still stands: not revoked or expired, its screen not deleted, its generation current. */
export async function runtimeSessionAlive(db: Db | Tx, sessionId: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('runtime_sessions')
    .innerJoin('screens', 'screens.id', 'runtime_sessions.screen_id')
    .select([
      'runtime_sessions.revoked_at',
      'runtime_sessions.expires_at',
      'runtime_sessions.content_access_generation',
      'screens.content_access_generation as screen_generation',
      'screens.state',
    ])
    .where('runtime_sessions.id', '=', sessionId)
    .executeTakeFirst();
  return (
    row !== undefined &&
    row.revoked_at === null &&
    row.expires_at > now &&
    row.state !== 'deleted' &&
    row.content_access_generation === row.screen_generation
  );
}

// ---- What the pairing routes do, each one call

/** The pairing session a player's cookie names, while it lasts. */
export async function livePairingSession(
  db: Db | Tx,
  sessionId: string,
  now: number,
): Promise<PairingSessionTable | undefined> {
  const session = await db.selectFrom('pairing_sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  return session && session.expires_at > now ? session : undefined;
}

/**
 * A new code for the player. `previous` is the session its pairing cookie names: a pending one is
 * replaced (its code stops being claimable), and a claim that landed just before must be completed,
 * not abandoned.
 */
export async function restartPairing(
  services: Services,
  work: Work,
  previous: PairingSessionTable | undefined,
  now: number,
): Promise<{ session: PairingSessionTable; cookie: string }> {
  if (previous?.state === 'claimed') {
    const screen = await work.db
      .selectFrom('screens')
      .select('state')
      .where('id', '=', previous.screen_id!)
      .executeTakeFirst();
    if (screen?.state === 'pairing_pending') {
      throw problem(
        'resource_conflict',
        'the code this player showed has just been claimed; complete that pairing (pairing.claimed on the pairing stream) instead of starting another',
      );
    }
  }
  return startPairingSession(services, work, now, previous?.state === 'pending' ? previous.id : undefined);
}

/** The completion nonce once the session's code was claimed, else undefined. */
export async function claimedNonce(db: Db, sessionId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('pairing_sessions')
    .select(['state', 'completion_nonce'])
    .where('id', '=', sessionId)
    .executeTakeFirst();
  if (!row || row.state === 'pending' || row.completion_nonce === null) return undefined;
  return row.completion_nonce;
}

/**
 * The player completes a claimed pairing with its nonce: a paired-device credential is bound and the
 * screen becomes active. A retry after a lost answer gets the same credential and changes nothing.
 */
export async function completePairing(
  services: Services,
  work: Work,
  sessionId: string,
  nonce: string,
  now: number,
  requestId: string,
): Promise<{ screen: ScreenTable; cookie: string }> {
  const session = await work.db
    .selectFrom('pairing_sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();
  if (session.state === 'pending')
    throw problem('resource_conflict', 'this pairing session has not been claimed yet; wait for pairing.claimed');
  if (!safeEqual(session.completion_nonce ?? '', nonce))
    throw problem('forbidden', 'the completion nonce does not match this pairing session');
  const screen = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', session.screen_id!)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  if (!screen) throw problem('not_found', 'the screen this code was claimed for no longer exists');

  if (session.state === 'completed') {
    const device = await activeDevice(work.db, session.device_id!);
    if (!device)
      throw problem(
        'unauthorized',
        'this pairing was completed and its device credential has since been revoked; pair again',
      );
    return { screen, cookie: deviceCookieFor(services, device) };
  }
  const bound = await bindDevice(services, work, screen, 'pairing', now);
  await work.db
    .updateTable('pairing_sessions')
    .set({ state: 'completed', device_id: bound.deviceId, completed_at: now })
    .where('id', '=', session.id)
    .execute();
  const after = await activateScreen(services, work, screen, 'completed pairing', now, requestId);
  return { screen: after, cookie: bound.cookie };
}

async function activeDevice(db: Db | Tx, deviceId: string): Promise<string | undefined> {
  const device = await db
    .selectFrom('screen_devices')
    .select('id')
    .where('id', '=', deviceId)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return device?.id;
}

/** The screen a public id names, when it is not deleted and its tenant is active. */
export async function screenByPublicId(db: Db | Tx, publicId: string): Promise<ScreenTable> {
  const screen = await db
    .selectFrom('screens')
    .innerJoin('tenants', 'tenants.id', 'screens.tenant_id')
    .selectAll('screens')
    .where('screens.public_id', '=', publicId)
    .where('screens.state', '!=', 'deleted')
    .where('tenants.status', '=', 'active')
    .executeTakeFirst();
  if (!screen) throw problem('not_found', 'no screen has this public id');
  return screen;
}

/**
 * A browser exchanges a provisioning link's token once for a paired-device credential (the screen
 * becomes active). The link is bound to the first exchange id: only a retry of it gets the same
 * credential again.
 */
export async function exchangeProvisioning(
  services: Services,
  work: Work,
  token: string,
  exchangeId: string,
  now: number,
  requestId: string,
): Promise<{ screen: ScreenTable; cookie: string }> {
  const grant = await work.db
    .selectFrom('screen_provisionings')
    .selectAll()
    .where('token_hash', '=', sha256Hex(token))
    .executeTakeFirst();
  if (!grant) throw problem('not_found', 'this provisioning link is not valid');
  const screen = await work.db
    .selectFrom('screens')
    .selectAll()
    .where('id', '=', grant.screen_id)
    .where('state', '!=', 'deleted')
    .executeTakeFirst();
  if (!screen) throw problem('not_found', 'the screen of this provisioning link no longer exists');

  if (grant.exchange_id !== null) {
    if (grant.exchange_id !== exchangeId) throw problem('resource_conflict', 'this provisioning link was already used');
    const device = await activeDevice(work.db, grant.device_id!);
    if (!device)
      throw problem(
        'resource_conflict',
        'this provisioning link was used and its device credential has since been revoked',
      );
    return { screen, cookie: deviceCookieFor(services, device) };
  }
  if (grant.expires_at <= now)
    throw problem('credential_issuance_expired', 'this provisioning link expired; provision the screen again');
  const bound = await bindDevice(services, work, screen, 'provisioning', now);
  await work.db
    .updateTable('screen_provisionings')
    .set({ exchange_id: exchangeId, device_id: bound.deviceId, exchanged_at: now })
    .where('id', '=', grant.id)
    .where('exchange_id', 'is', null)
    .execute();
  const after = await activateScreen(services, work, screen, 'exchanged a provisioning link', now, requestId);
  return { screen: after, cookie: bound.cookie };
}

/**
 * An agent claims a code: a pairing_pending screen is created for it and the waiting player is told
 * once the claim committed. Undefined when no session with this code is waiting (a miss).
 */
export async function claimPairingCode(
  services: Services,
  work: Work,
  claim: { tenantId: string; code: string; label: string },
  now: number,
  requestId: string,
): Promise<ScreenTable | undefined> {
  const session = await findClaimableSession(work.db, claim.code, now);
  if (!session) return undefined;
  const screen = await createScreen(services, work, {
    tenantId: claim.tenantId,
    label: claim.label,
    now,
    event: { type: 'screen.paired', message: 'a pairing code was claimed; the screen waits for its player' },
    requestId,
  });
  await claimSession(work, session, screen, now);
  work.afterCommit(() => services.notifier.publish(pairingChannel(session.id)));
  return screen;
}

/** A pairing_pending screen and the token of its provisioning link (valid PROVISIONING_WINDOW_MS). */
export async function provisionScreen(
  services: Services,
  work: Work,
  request: { tenantId: string; label: string },
  now: number,
  requestId: string,
): Promise<{ screen: ScreenTable; token: string; expiresAt: number }> {
  const screen = await createScreen(services, work, {
    tenantId: request.tenantId,
    label: request.label,
    now,
    event: {
      type: 'screen.provisioned',
      message: 'a browser provisioning link was issued; the screen waits for its browser',
    },
    requestId,
  });
  const token = randomToken(32);
  const expiresAt = now + PROVISIONING_WINDOW_MS;
  await work.db
    .insertInto('screen_provisionings')
    .values({
      id: `prov_${randomToken(16)}`,
      screen_id: screen.id,
      tenant_id: screen.tenant_id,
      token_hash: sha256Hex(token),
      expires_at: expiresAt,
      exchange_id: null,
      device_id: null,
      exchanged_at: null,
      created_at: now,
    })
    .execute();
  return { screen, token, expiresAt };
}
