// Runtime-plane realms: the pairing cookie, the paired-device cookie, the runtime cookie and its
// paired variant. They read only their own cookie and refuse Authorization outright, so a bearer
// never authorizes a runtime route (and a cookie never a control route: bearers read no cookies).
// The one exception is a native player's `Marquee-Session`, which stands in for the runtime cookie.
import { RUNTIME_CAPABILITIES, type RuntimeCapability } from '../../sdk/contract/screens';
import { problem } from '../problem';
import type { AnyContext, Authenticator, Principal } from '../http/route';
import { compiledOnce } from '../store/compiled-once';
import type { Db } from '../store/store';
import { watchedCache } from '../store/watched-cache';
import type { PairingSessionTable } from './pairing.tables';
import { cookieValues, DEVICE_COOKIE, PAIRING_COOKIE, readCookie, RUNTIME_COOKIE } from './pairing-cookies';
import { checkNativeDevice, nativeSessionOf } from './native.auth';

export interface PairingPrincipal extends Principal {
  realm: 'pairing';
  session: PairingSessionTable;
}

export interface DevicePrincipal extends Principal {
  realm: 'device';
  tenantId: string;
  screenId: string;
  deviceId: string;
}

export interface RuntimePrincipal extends Principal {
  realm: 'runtime';
  tenantId: string;
  screenId: string;
  runtimeSessionId: string;
  /** When the session expires: a stream opened with it must end then. */
  sessionExpiresAt: number;
  /** Created from a device cookie: the paired-device mutation profile (reports, KV writes). */
  paired: boolean;
  deviceId: string | null;
  /** The generation the session was granted at; equal to the screen's, or the session is dead. */
  contentAccessGeneration: number;
  capabilities: readonly RuntimeCapability[];
  /** The screen's state and manifest revision as read while authenticating (the manifest's 304 needs no other read). */
  screenState: 'pairing_pending' | 'active' | 'archived';
  manifestRevision: number;
}

/** What an anonymous (public-id) session may do: read, never write or report. */
export const READ_ONLY_CAPABILITIES: readonly RuntimeCapability[] = [
  'manifest.read',
  'events.read',
  'content.read',
  'kv.read',
];
export const PAIRED_CAPABILITIES: readonly RuntimeCapability[] = RUNTIME_CAPABILITIES;

function refused(detail: string) {
  return problem('unauthorized', detail);
}

/**
 * Browser requests to the runtime plane must come from the player itself: a cross-site page must
 * not start pairing or spend budgets on a screen's behalf. Same-origin means the configured player
 * origin or the host the request was sent to (a screen on the LAN may use the server's address).
 * Non-browser clients send neither header.
 */
export function checkPlayerOrigin(ctx: AnyContext): void {
  const origin = ctx.req.headers.origin;
  if (origin !== undefined && origin !== ctx.services.config.playOrigin && !sameHost(origin, ctx.req.headers.host)) {
    throw problem('forbidden', 'this runtime route accepts requests from the player origin only');
  }
  // Same-site is refused too: release hosts are subdomains of the player's site in production, so
  // an uploaded application's frame is same-site with the player and must not ride its cookies.
  const site = ctx.req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site')
    throw problem('forbidden', `Fetch Metadata: ${site} requests are refused on the runtime plane`);
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

function noAuthorizationHeader(ctx: AnyContext): void {
  if (ctx.req.headers.authorization !== undefined)
    throw refused('runtime routes take player cookies, not an Authorization header');
}

/** No credential, but a same-origin (or non-browser) caller: pairing start, public-id sessions, provisioning exchange. */
export const playerOrigin: Authenticator = {
  realm: 'none',
  async authenticate(ctx) {
    noAuthorizationHeader(ctx);
    checkPlayerOrigin(ctx);
    return { realm: 'none', scope: 'anon' };
  },
};

/** The pairing cookie: a pending session until its code expires, a claimed one until the cookie does. */
export const pairingCookie: Authenticator<PairingPrincipal> = {
  realm: 'pairing',
  async authenticate(ctx) {
    noAuthorizationHeader(ctx);
    checkPlayerOrigin(ctx);
    const value = cookieValues.pairing.unseal(ctx.services.keys, readCookie(ctx.req, PAIRING_COOKIE));
    if (!value || value.e <= ctx.now)
      throw refused('this route needs a current pairing cookie; start a new pairing session');
    const session = await ctx.services.store.db
      .selectFrom('pairing_sessions')
      .selectAll()
      .where('id', '=', value.s)
      .executeTakeFirst();
    if (
      !session ||
      session.expires_at <= ctx.now ||
      (session.state === 'pending' && session.code_expires_at <= ctx.now)
    ) {
      throw refused('the pairing session has expired; start a new pairing session');
    }
    return { realm: 'pairing', scope: `pairing:${session.id}`, session };
  },
};

/** The paired-device cookie: an active device credential of a screen that is not deleted. */
export const deviceCookie: Authenticator<DevicePrincipal> = {
  realm: 'device',
  async authenticate(ctx) {
    noAuthorizationHeader(ctx);
    checkPlayerOrigin(ctx);
    const value = cookieValues.device.unseal(ctx.services.keys, readCookie(ctx.req, DEVICE_COOKIE));
    if (!value) throw refused('this route needs the paired-device cookie; pair this player first');
    const row = await ctx.services.store.db
      .selectFrom('screen_devices')
      .innerJoin('screens', 'screens.id', 'screen_devices.screen_id')
      .innerJoin('tenants', 'tenants.id', 'screens.tenant_id')
      .select(['screen_devices.id', 'screen_devices.screen_id', 'screen_devices.tenant_id'])
      .where('screen_devices.id', '=', value.d)
      .where('screen_devices.status', '=', 'active')
      .where('screens.state', '!=', 'deleted')
      .where('tenants.status', '=', 'active')
      .executeTakeFirst();
    if (!row) throw refused('the paired-device credential is revoked or its screen is gone; pair this player again');
    return {
      realm: 'device',
      scope: `screen:${row.screen_id}`,
      tenantId: row.tenant_id,
      screenId: row.screen_id,
      deviceId: row.id,
    };
  },
};

function sessionSelect(db: Db, id: string) {
  return db
    .selectFrom('runtime_sessions')
    .innerJoin('screens', 'screens.id', 'runtime_sessions.screen_id')
    .innerJoin('tenants', 'tenants.id', 'screens.tenant_id')
    .leftJoin('screen_devices', 'screen_devices.id', 'runtime_sessions.device_id')
    .select([
      'runtime_sessions.id',
      'runtime_sessions.screen_id',
      'runtime_sessions.tenant_id',
      'runtime_sessions.paired',
      'runtime_sessions.device_id',
      'runtime_sessions.content_access_generation',
      'runtime_sessions.expires_at',
      'runtime_sessions.revoked_at',
      'screens.state as screen_state',
      'screens.content_access_generation as screen_generation',
      'screens.manifest_revision',
      'tenants.status as tenant_status',
      'screen_devices.status as device_status',
    ])
    .where('runtime_sessions.id', '=', id);
}

/**
 * The session query, compiled once (store/compiled-once.ts): every runtime request (a player's 304
 * manifest poll above all) runs it, and building it cost more than running it.
 */
type SessionRow = Awaited<ReturnType<ReturnType<typeof sessionSelect>['executeTakeFirstOrThrow']>>;
const sessionQuery = compiledOnce<[id: string], SessionRow>((db, slot) => sessionSelect(db, slot(0)));

/** The longest the byte routes trust a session row without reading it again (D-373). */
export const SESSION_ROW_CACHE_MS = 5_000;

/**
 * Session rows as the byte routes (/content/v1) read them: a player fetching video asks for a
 * range every few hundred milliseconds. Any update or delete of a session or a device credential,
 * and a write of what the row reads of a screen or a tenant, empties the cache as it runs, so a
 * revocation, rotation, unpairing or archive here takes effect on the next range; another replica's
 * once its relayed write arrives (D-386), and within SESSION_ROW_CACHE_MS at the latest.
 */
export const sessionRowCache = watchedCache<SessionRow | undefined>('runtime-session-rows', {
  ttlMs: SESSION_ROW_CACHE_MS,
  maxEntries: 10_000,
  watches: [
    { table: 'runtime_sessions' },
    // What the row reads of its screen: presence (last_online_at) and the like keep the cache.
    { table: 'screens', columns: ['state', 'content_access_generation', 'manifest_revision', 'tenant_id'] },
    { table: 'tenants', columns: ['status'] },
    { table: 'screen_devices' },
  ],
});

async function readSession(db: Db, id: string): Promise<SessionRow | undefined> {
  return (await sessionQuery.run(db, id)).rows[0];
}

async function runtimeSession(ctx: AnyContext, requirePaired: boolean, cached = false): Promise<RuntimePrincipal> {
  // Native players send `Authorization: Marquee-Session …` instead of the cookie (never both).
  const native = nativeSessionOf(ctx);
  if (!native) noAuthorizationHeader(ctx);
  checkPlayerOrigin(ctx);
  const value = native ?? cookieValues.runtime.unseal(ctx.services.keys, readCookie(ctx.req, RUNTIME_COOKIE));
  if (!value || value.e <= ctx.now)
    throw refused('this route needs a current runtime cookie; create a runtime session');
  const { store } = ctx.services;
  const row = cached
    ? await sessionRowCache(store).get(
        value.r,
        () => readSession(store.db, value.r),
        (found) => found !== undefined,
      )
    : await readSession(store.db, value.r);
  const alive =
    row !== undefined &&
    row.revoked_at === null &&
    row.expires_at > ctx.now &&
    row.screen_state !== 'deleted' &&
    row.tenant_status === 'active' &&
    // A rotation or credential revoke moved the generation: every earlier session is dead.
    row.content_access_generation === row.screen_generation &&
    (row.paired === 0 || row.device_status === 'active');
  if (!alive) throw refused('the runtime session is expired or revoked; create a new runtime session');
  if (native) await checkNativeDevice(ctx, row.device_id ?? '');
  if (requirePaired && row.paired !== 1)
    throw problem('forbidden', 'this route needs a paired runtime session (created from the paired-device cookie)');
  return {
    realm: 'runtime',
    scope: `screen:${row.screen_id}`,
    tenantId: row.tenant_id,
    screenId: row.screen_id,
    runtimeSessionId: row.id,
    sessionExpiresAt: row.expires_at,
    paired: row.paired === 1,
    deviceId: row.device_id,
    contentAccessGeneration: row.content_access_generation,
    capabilities: row.paired === 1 ? PAIRED_CAPABILITIES : READ_ONLY_CAPABILITIES,
    screenState: row.screen_state as RuntimePrincipal['screenState'],
    manifestRevision: row.manifest_revision,
  };
}

/** The runtime cookie, read-only or paired: manifest, events, launch, protected media, KV reads. */
export const runtimeCookie: Authenticator<RuntimePrincipal> = {
  realm: 'runtime',
  authenticate: (ctx) => runtimeSession(ctx, false),
};

/** The runtime cookie of the byte routes (/content/v1): the session row may come from a 5 s cache (D-373). */
export const cachedRuntimeCookie: Authenticator<RuntimePrincipal> = {
  realm: 'runtime',
  authenticate: (ctx) => runtimeSession(ctx, false, true),
};

/** The paired variant: reports and runtime KV writes. */
export const pairedRuntimeCookie: Authenticator<RuntimePrincipal> = {
  realm: 'runtime',
  authenticate: (ctx) => runtimeSession(ctx, true),
};
