// The native realm: `Authorization: Marquee-Pairing mqp_…` on the native pairing stream and
// completion, `Authorization: Marquee-Session mqs_…` on the runtime and content routes (resolved
// in pairing.auth.ts beside the runtime cookie), and the unauthenticated native routes (start,
// challenges, sessions, reset). A native request never carries Marquee cookies or query
// credentials: one that does is refused rather than guessed at.
import {
  NATIVE_PAIRING_CREDENTIAL,
  NATIVE_PAIRING_SCHEME,
  NATIVE_SESSION_CREDENTIAL,
  NATIVE_SESSION_SCHEME,
} from '../../sdk/contract/native';
import { serverCache } from '../caches';
import type { AnyContext, Authenticator, Principal } from '../http/route';
import type { Keys } from '../keys';
import { sha256Hex } from '../keys';
import { problem } from '../problem';
import type { Db } from '../store/store';
import type { PairingSessionTable } from './pairing.tables';

/** The same shape as the pairing cookie's principal: the browser's pairing stream serves both. */
export interface NativePairingPrincipal extends Principal {
  realm: 'pairing';
  session: PairingSessionTable;
}

/** A claimed native pairing stays collectable this long after its claim (reference: a fresh 72 h window). */
export const NATIVE_COLLECTION_WINDOW_MS = 72 * 3600_000;
/** How often a native session's use is written down as the key's sign of life (a write per request would be too many). */
export const LIFE_RECORD_EVERY_MS = 60_000;

/** Marquee's cookies, with or without the `__Host-` prefix (plain-http local names). */
const MARQUEE_COOKIE = /(^|;)\s*(__Host-)?marquee-[a-z-]+=/;
/** The HMAC at the end of a session credential: base64url SHA-256, always 43 characters. */
const SIGNATURE_CHARS = 43;

function refused(detail: string) {
  return problem('unauthorized', detail);
}

/** Both a native credential and player cookies: ambiguous, so refused whatever either would say. */
function refuseCookies(ctx: AnyContext): void {
  if (MARQUEE_COOKIE.test(ctx.req.headers.cookie ?? ''))
    throw problem('invalid_request', 'a native request carries no Marquee cookies; send the native credential alone');
}

function refuseQuery(ctx: AnyContext): void {
  if (ctx.req.originalUrl.includes('?'))
    throw problem('invalid_request', 'native pairing and identity routes take no query parameters');
}

/** Cross-site browser pages must not drive native routes either (non-browser clients send no Origin). */
function refuseCrossSite(ctx: AnyContext): void {
  const origin = ctx.req.headers.origin;
  if (origin !== undefined && origin !== ctx.services.config.playOrigin)
    throw problem('forbidden', 'native routes accept requests from native players, not from web pages');
  const site = ctx.req.headers['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site')
    throw problem('forbidden', `Fetch Metadata: ${site} requests are refused on native routes`);
}

/** The credential after `<scheme> `, or undefined when the Authorization header uses another scheme or none. */
function schemeCredential(ctx: AnyContext, scheme: string): string | undefined {
  const header = ctx.req.headers.authorization;
  if (header === undefined) return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== scheme.toLowerCase()) return undefined;
  return header.slice(space + 1).trim();
}

/** Start, challenges, sessions and reset: no credential at all (the body carries the proof). */
export const nativeAnonymous: Authenticator = {
  realm: 'none',
  async authenticate(ctx) {
    refuseCookies(ctx);
    refuseQuery(ctx);
    refuseCrossSite(ctx);
    if (ctx.req.headers.authorization !== undefined)
      throw problem('invalid_request', 'this native route takes no Authorization header; the body carries the proof');
    return { realm: 'none', scope: 'anon' };
  },
};

/**
 * `Marquee-Pairing`: a native pairing session while its code is claimable (72 h), then for 72 h
 * after its claim, and after completion (a retry of a completion whose answer was lost).
 */
export const nativePairing: Authenticator<NativePairingPrincipal> = {
  realm: 'pairing',
  async authenticate(ctx) {
    refuseCrossSite(ctx);
    const credential = schemeCredential(ctx, NATIVE_PAIRING_SCHEME);
    if (credential === undefined || !NATIVE_PAIRING_CREDENTIAL.test(credential))
      throw refused(`this route needs Authorization: ${NATIVE_PAIRING_SCHEME} <pairing_credential>`);
    // After the credential's presence: a caller without one (a browser holding only another realm's
    // cookie, say) hears 401 first, not about its cookies or query (D-322, D-470).
    refuseCookies(ctx);
    refuseQuery(ctx);
    const db = ctx.services.store.db;
    const native = await db
      .selectFrom('native_pairing_sessions')
      .select('pairing_session_id')
      .where('credential_hash', '=', sha256Hex(credential))
      .executeTakeFirst();
    const session = native
      ? await db
          .selectFrom('pairing_sessions')
          .selectAll()
          .where('id', '=', native.pairing_session_id)
          .executeTakeFirst()
      : undefined;
    const live =
      session !== undefined &&
      (session.state === 'completed' ||
        (session.state === 'pending' && session.code_expires_at > ctx.now) ||
        (session.state === 'claimed' && (session.claimed_at ?? 0) + NATIVE_COLLECTION_WINDOW_MS > ctx.now));
    if (!live) throw refused('the native pairing session is unknown or has lapsed; start a new one');
    return { realm: 'pairing', scope: `pairing:${session.id}`, session };
  },
};

export interface NativeSessionValue {
  /** runtime session id */
  r: string;
  /** expiry, ms */
  e: number;
}

/** `mqs_` + base64url(JSON) + its 43-character HMAC: one opaque base64url token, as the contract shows it. */
export function sealNativeSession(keys: Keys, value: NativeSessionValue): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `mqs_${payload}${keys.sign('native-session', payload)}`;
}

function unsealNativeSession(keys: Keys, token: string): NativeSessionValue | undefined {
  if (!NATIVE_SESSION_CREDENTIAL.test(token)) return undefined;
  const body = token.slice(4);
  const payload = body.slice(0, -SIGNATURE_CHARS);
  if (!keys.verify('native-session', payload, body.slice(-SIGNATURE_CHARS))) return undefined;
  try {
    const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as NativeSessionValue;
    return typeof value.r === 'string' && typeof value.e === 'number' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The native session a runtime request names, or undefined when it sends no `Marquee-Session`
 * credential (a browser's cookie request). Refuses cookies beside it, and any bad or expired token.
 */
export function nativeSessionOf(ctx: AnyContext): NativeSessionValue | undefined {
  const credential = schemeCredential(ctx, NATIVE_SESSION_SCHEME);
  if (credential === undefined) return undefined;
  refuseCookies(ctx);
  const value = unsealNativeSession(ctx.services.keys, credential);
  if (!value || value.e <= ctx.now)
    throw refused('the native session is invalid or expired; mint a new one from a possession proof');
  return value;
}

/** Whether the request authenticates (or tries to) with a native session rather than cookies. */
export function isNativeRequest(ctx: AnyContext): boolean {
  return schemeCredential(ctx, NATIVE_SESSION_SCHEME) !== undefined;
}

/** When each device's use was last written down, per store (a cache: losing it costs one write). */
const lifeWrites = serverCache<Map<string, number>, Db>('native-life-writes', () => new Map());

/**
 * A request with a session of this native device: refused once its key retired (the grace after a
 * recovery ended), and otherwise a sign of life of the key (written at most once a minute).
 */
export async function checkNativeDevice(ctx: AnyContext, deviceId: string): Promise<void> {
  const db = ctx.services.store.db;
  const identity = await db
    .selectFrom('native_identities')
    .select(['kid', 'state', 'retires_at', 'last_seen_at'])
    .where('device_id', '=', deviceId)
    .executeTakeFirst();
  if (!identity || (identity.retires_at !== null && identity.retires_at <= ctx.now))
    throw refused('this device key no longer identifies its screen; pair again');
  const written = lifeWrites(db);
  const last = Math.max(written.get(identity.kid) ?? 0, identity.last_seen_at);
  if (ctx.now - last < LIFE_RECORD_EVERY_MS) return;
  if (written.size >= 10_000) written.clear();
  written.set(identity.kid, ctx.now);
  await db.updateTable('native_identities').set({ last_seen_at: ctx.now }).where('kid', '=', identity.kid).execute();
}
