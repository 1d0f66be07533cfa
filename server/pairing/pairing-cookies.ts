// The player's cookies: names, lifetimes and attributes, and their signed values. Each value is
// `base64url(JSON).HMAC` under its own key purpose and names a server-side row (pairing session,
// device credential, runtime session), so it can be revoked; the expiry inside is checked first.
import { serverCache } from '../caches';
import type { Keys } from '../keys';

export const PAIRING_COOKIE = '__Host-marquee-pairing';
export const DEVICE_COOKIE = '__Host-marquee-device';
export const RUNTIME_COOKIE = '__Host-marquee-runtime';

/** spec/reference: a pairing code is claimable for ten minutes. */
export const PAIRING_CODE_TTL_MS = 10 * 60_000;
/** The pairing cookie outlives the code by a completion window, so a claim at minute nine can still complete. */
export const PAIRING_COOKIE_TTL_MS = 20 * 60_000;
/** Browsers cap cookie lifetimes at 400 days; each device session re-sets the cookie, so an active player never lapses. */
export const DEVICE_COOKIE_TTL_MS = 400 * 24 * 3600_000;
/** A runtime session lasts a day (as the reference's native session does); the player renews it from its device cookie. */
export const RUNTIME_SESSION_TTL_MS = 24 * 3600_000;

export interface PairingCookieValue {
  /** pairing session id */
  s: string;
  /** expiry, ms */
  e: number;
}

export interface DeviceCookieValue {
  /** device credential id */
  d: string;
}

export interface RuntimeCookieValue {
  /** runtime session id */
  r: string;
  /** expiry, ms */
  e: number;
}

export const cookieValues = {
  pairing: {
    seal: (keys: Keys, v: PairingCookieValue) => keys.seal('pairing-cookie', v),
    unseal: (keys: Keys, text: string | undefined) => keys.unseal<PairingCookieValue>('pairing-cookie', text),
  },
  device: {
    seal: (keys: Keys, v: DeviceCookieValue) => keys.seal('device-cookie', v),
    unseal: (keys: Keys, text: string | undefined) => keys.unseal<DeviceCookieValue>('device-cookie', text),
  },
  runtime: {
    seal: (keys: Keys, v: RuntimeCookieValue) => keys.seal('runtime-cookie', v),
    unseal: (keys: Keys, text: string | undefined) => verifiedRuntimeCookie(keys, text),
  },
};

/** Verified runtime cookie values by their exact text, per key set (bounded: cleared when full). */
const VERIFIED_RUNTIME_COOKIES = 10_000;
const verifiedRuntime = serverCache('runtime-cookies', (_keys: Keys) => new Map<string, RuntimeCookieValue>());

/**
 * Every runtime request (a player's 304 manifest poll above all) presents the same cookie again and
 * again; its HMAC check was a good part of such a request. A value verified once is remembered by
 * its exact text: the signature cannot change without the text changing. Expiry and revocation are
 * still checked on every request by the authenticator.
 */
function verifiedRuntimeCookie(keys: Keys, text: string | undefined): RuntimeCookieValue | undefined {
  if (!text) return undefined;
  const cache = verifiedRuntime(keys);
  const known = cache.get(text);
  if (known) return known;
  const value = keys.unseal<RuntimeCookieValue>('runtime-cookie', text);
  if (value) {
    if (cache.size >= VERIFIED_RUNTIME_COOKIES) cache.clear();
    cache.set(text, value);
  }
  return value;
}

/** The one cookie parser (server/http/cookies.ts), re-exported where the player's realms read it. */
export { readCookie } from '../http/cookies';

/** `__Host-` cookies: Secure, Path=/, no Domain; HttpOnly and SameSite=Strict as the player never reads them. */
export function setCookie(name: string, value: string, maxAgeMs: number): string {
  return `${name}=${value}; Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}; Path=/; Secure; HttpOnly; SameSite=Strict`;
}

export function clearCookie(name: string): string {
  return `${name}=; Max-Age=0; Path=/; Secure; HttpOnly; SameSite=Strict`;
}
